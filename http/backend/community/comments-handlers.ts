/**
 * Handlers of the comments group, over `market_comment` and `comment_quota` (migration 0016).
 *
 * Invariants:
 * - a post is admitted by one upsert of the author's `comment_quota` row whose WHERE clause is
 *   the cooldown and the daily cap; the row lock serialises concurrent posts of one user, so the
 *   limits hold under any concurrency, and the comment is inserted in the same transaction (a
 *   post that fails later, e.g. a bad parent, consumes nothing);
 * - a reply notifies the parent's author (not oneself) in the same transaction, under the
 *   notification's unique key; removing the reply retracts it, restoring it brings it back;
 * - time comes from Effect's `Clock` (tests move it), never from the database's `now()`; posts
 *   that commit out of their clock order never move the quota's time or day backwards.
 */
import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Clock, Context, Effect, Layer } from "effect"
import { Forbidden, IndexerUnavailable, RateLimitExceeded, ValidationFailed } from "../../../schema/errors.js"
import { marketIdToHex } from "../../../schema/primitives.js"
import { CurrentUser } from "../auth/api.js"
import { BackendApi } from "../definition.js"
import { NotFound } from "../errors.js"
import { marketNotFound, parseIdOrSlug } from "../lookup.js"
import { roleRank } from "../auth/sessions.js"
import { meta } from "../system/api.js"

export interface CommentOptions {
  /** Seconds between two posts of one user. Default 30. */
  readonly cooldownSeconds: number
  /** Posts per user per UTC day. Default 50. */
  readonly perDay: number
  /** Seconds after posting during which the author may edit. Default 900. */
  readonly editWindowSeconds: number
}

export const DEFAULT_COMMENT_OPTIONS: CommentOptions = { cooldownSeconds: 30, perDay: 50, editWindowSeconds: 900 }

export class CommentSettings extends Context.Tag("predix/CommentSettings")<CommentSettings, CommentOptions>() {}

export const CommentSettingsLive = (options: Partial<CommentOptions> = {}) =>
  Layer.succeed(CommentSettings, { ...DEFAULT_COMMENT_OPTIONS, ...options })

interface CommentRow {
  readonly id: string
  readonly market_id: string
  readonly parent_id: string | null
  readonly author: string
  readonly smart_account: string | null
  readonly body: string
  readonly status: "visible" | "deleted" | "hidden"
  readonly reply_count: string | number
  readonly created_ms: string | number
  readonly edited_ms: string | number | null
}

const COLUMNS = `c.id::text, c.market_id::text, c.parent_id::text, c.author, c.smart_account, c.body, c.status,
  (select count(*) from market_comment r where r.parent_id = c.id and r.status = 'visible') as reply_count,
  (extract(epoch from c.created_at) * 1000)::bigint as created_ms,
  (extract(epoch from c.edited_at) * 1000)::bigint as edited_ms`

const seconds = (ms: string | number) => Math.floor(Number(ms) / 1000)

const toComment = (row: CommentRow) => ({
  id: row.id,
  marketId: marketIdToHex(BigInt(row.market_id)),
  parentId: row.parent_id,
  author: row.author,
  smartAccount: row.smart_account,
  body: row.status === "visible" ? row.body : null,
  status: row.status,
  replyCount: Number(row.reply_count),
  createdAt: seconds(row.created_ms),
  editedAt: row.edited_ms === null ? null : seconds(row.edited_ms)
})

const databaseDown = () => new IndexerUnavailable({ message: "the database is unavailable" })
const onSqlError = <A, E, R>(effect: Effect.Effect<A, E | SqlError, R>) =>
  Effect.catchIf(effect, (e): e is SqlError => e instanceof SqlError, databaseDown) as Effect.Effect<
    A,
    Exclude<E, SqlError> | InstanceType<typeof IndexerUnavailable>,
    R
  >

/** The id (decimal) of the indexed market `idOrSlug` names: one key lookup, as every post and read of a thread needs it. */
const marketOf = (idOrSlug: string) =>
  Effect.gen(function* () {
    const key = yield* parseIdOrSlug(idOrSlug)
    const sql = yield* SqlClient.SqlClient
    const rows =
      "id" in key
        ? yield* sql<{ id: string }>`select id::text from market where id = ${key.id.toString()}::numeric`
        : yield* sql<{
            id: string
          }>`select m.id::text from display_metadata d join market m on m.id = d.id where d.kind = 'market' and d.slug = ${key.slug}`
    return rows[0]?.id ?? (yield* Effect.fail(marketNotFound(idOrSlug)))
  })

const BIGINT_MAX = 9_223_372_036_854_775_807n

/** A comment id from the path or body: a positive decimal within bigint; else undefined. */
const commentIdOf = (input: string): string | undefined =>
  /^[1-9][0-9]{0,18}$/.test(input) && BigInt(input) <= BIGINT_MAX ? input : undefined

const invalid = (path: string, message: string) => new ValidationFailed({ message, details: [{ path, message }] })
/** An id that cannot name a comment is the client's mistake (400), not a missing comment (404). */
const malformedId = (path: string, input: string) =>
  invalid(path, `invalid ${path}: not a comment id: ${JSON.stringify(input.slice(0, 40))} (a decimal integer from 1 to ${BIGINT_MAX})`)
const noComment = (id: string) => new NotFound({ message: `no comment ${JSON.stringify(id.slice(0, 40))} on this market` })

export const CommentsLive = HttpApiBuilder.group(BackendApi, "comments", (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const settings = yield* CommentSettings

    const readComment = (id: string) =>
      sql<CommentRow>`select ${sql.literal(COLUMNS)} from market_comment c where c.id = ${id}::bigint`.pipe(Effect.map((rows) => rows[0]))

    /** Adds or retracts the notification of a reply for its parent's author (never the replier himself). */
    const notifyReply = (reply: { id: string; market_id: string; author: string }, parentId: string) =>
      sql`insert into notification (user_address, type, source, market_id, detail)
        select p.author, 'commentReply', ${`comment:${reply.id}`}, ${reply.market_id}::numeric,
          jsonb_build_object('commentId', ${reply.id}::text, 'parentId', p.id::text, 'author', ${reply.author}::text)
        from market_comment p where p.id = ${parentId}::bigint and p.author <> ${reply.author}
        on conflict (user_address, type, source) do nothing`
    const retractReply = (replyId: string) => sql`delete from notification where type = 'commentReply' and source = ${`comment:${replyId}`}`

    return handlers
      .handle("list", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const marketId = yield* marketOf(path.idOrSlug)
          const limit = urlParams.limit
          const offset = urlParams.offset
          const order = urlParams.sort === "top" ? "reply_count desc, c.created_at desc, c.id desc" : "c.created_at desc, c.id desc"
          let parent: string | null = null
          if (urlParams.parentId !== undefined) {
            const id = commentIdOf(urlParams.parentId)
            if (id === undefined) return yield* malformedId("parentId", urlParams.parentId)
            const found =
              yield* sql`select 1 from market_comment where id = ${id}::bigint and market_id = ${marketId}::numeric and parent_id is null`
            if (found.length === 0) return yield* noComment(urlParams.parentId)
            parent = id
          }
          const where =
            parent === null ? sql`c.market_id = ${marketId}::numeric and c.parent_id is null` : sql`c.parent_id = ${parent}::bigint`
          const rows = yield* sql<CommentRow>`select ${sql.literal(COLUMNS)} from market_comment c where ${where}
            order by ${sql.literal(order)} limit ${limit} offset ${offset}`
          const [count] = yield* sql<{ total: string }>`select count(*) as total from market_comment c where ${where}`
          return {
            data: rows.map(toComment),
            meta: { ...(yield* meta), pagination: { limit, offset, total: Number(count?.total ?? 0) } }
          }
        }).pipe(onSqlError)
      )
      .handle("create", ({ path, payload }) =>
        Effect.gen(function* () {
          const user = yield* CurrentUser
          const marketId = yield* marketOf(path.idOrSlug)
          const now = yield* Clock.currentTimeMillis
          const posted = yield* sql.withTransaction(
            Effect.gen(function* () {
              let parentId: string | null = null
              if (payload.parentId !== undefined) {
                const id = commentIdOf(payload.parentId)
                const [parent] =
                  id === undefined
                    ? []
                    : yield* sql<{ market_id: string; parent_id: string | null; status: string }>`
                        select market_id::text, parent_id::text, status from market_comment where id = ${id}::bigint for share`
                if (parent === undefined || parent.market_id !== marketId)
                  return yield* invalid("parentId", `parentId ${payload.parentId.slice(0, 40)} names no comment of this market`)
                if (parent.parent_id !== null)
                  return yield* invalid("parentId", "replies are two levels deep: reply to the top-level comment instead")
                if (parent.status !== "visible") return yield* invalid("parentId", "the comment replied to was removed")
                parentId = id!
              }
              const at = new Date(now)
              const day = at.toISOString().slice(0, 10)
              const cooldownEnds = new Date(now - settings.cooldownSeconds * 1000)
              const admitted = yield* sql`
                insert into comment_quota (address, last_posted_at, day, posted_today) values (${user.address}, ${at}, ${day}::date, 1)
                on conflict (address) do update set
                  last_posted_at = greatest(comment_quota.last_posted_at, excluded.last_posted_at),
                  day = greatest(comment_quota.day, excluded.day),
                  posted_today = case when excluded.day > comment_quota.day then 1 else comment_quota.posted_today + 1 end
                where (${settings.cooldownSeconds} = 0 or comment_quota.last_posted_at <= ${cooldownEnds})
                  and (excluded.day > comment_quota.day or comment_quota.posted_today < ${settings.perDay})
                returning address`
              if (admitted.length === 0) {
                const [quota] = yield* sql<{ last_ms: string; day: string; posted_today: number }>`
                  select (extract(epoch from last_posted_at) * 1000)::bigint as last_ms, day::text, posted_today from comment_quota where address = ${user.address}`
                const cooling =
                  settings.cooldownSeconds > 0 && quota !== undefined && Number(quota.last_ms) > now - settings.cooldownSeconds * 1000
                const retryAfter = cooling
                  ? Math.ceil((Number(quota!.last_ms) + settings.cooldownSeconds * 1000 - now) / 1000)
                  : Math.ceil((Date.parse(`${quota?.day ?? day}T00:00:00Z`) + 86_400_000 - now) / 1000)
                return yield* new RateLimitExceeded({
                  message: cooling
                    ? `one comment per ${settings.cooldownSeconds} s; retry after ${retryAfter} s`
                    : `at most ${settings.perDay} comments per UTC day; retry after ${retryAfter} s`,
                  details: [{ path: "", message: `retry after ${retryAfter} seconds` }]
                })
              }
              const [row] = yield* sql<{ id: string }>`
                insert into market_comment (market_id, parent_id, author, smart_account, body, created_at)
                values (${marketId}::numeric, ${parentId}::bigint, ${user.address},
                  (select address from faucet_claim where owner = ${user.address} limit 1), ${payload.body}, ${at})
                returning id::text`
              if (parentId !== null) yield* notifyReply({ id: row!.id, market_id: marketId, author: user.address }, parentId)
              return row!.id
            })
          )
          const comment = yield* readComment(posted)
          return { data: toComment(comment!), meta: yield* meta }
        }).pipe(onSqlError)
      )
      .handle("update", ({ path, payload }) =>
        Effect.gen(function* () {
          const user = yield* CurrentUser
          const marketId = yield* marketOf(path.idOrSlug)
          const id = commentIdOf(path.commentId)
          if (id === undefined) return yield* malformedId("commentId", path.commentId)
          const now = yield* Clock.currentTimeMillis
          const moderator = roleRank[user.role] >= roleRank.moderator
          yield* sql.withTransaction(
            Effect.gen(function* () {
              const [c] = yield* sql<{ author: string; status: string; parent_id: string | null; created_ms: string }>`
                select author, status, parent_id::text, (extract(epoch from created_at) * 1000)::bigint as created_ms
                from market_comment where id = ${id}::bigint and market_id = ${marketId}::numeric for update`
              if (c === undefined) return yield* noComment(path.commentId)
              const isAuthor = c.author === user.address
              if (payload.body !== undefined) {
                if (!isAuthor) return yield* new Forbidden({ message: "only the author edits a comment" })
                if (c.status !== "visible") return yield* new Forbidden({ message: `the comment is ${c.status}: it cannot be edited` })
                if (now - Number(c.created_ms) > settings.editWindowSeconds * 1000) {
                  return yield* new Forbidden({ message: `the edit window (${settings.editWindowSeconds} s after posting) has closed` })
                }
                yield* sql`update market_comment set body = ${payload.body}, edited_at = ${new Date(now)} where id = ${id}::bigint`
                return
              }
              const status = payload.status!
              if (status === "deleted") {
                if (!isAuthor) return yield* new Forbidden({ message: "only the author deletes a comment; moderators hide it" })
                if (c.status === "hidden") return yield* new Forbidden({ message: "the comment was hidden by a moderator" })
              } else {
                if (!moderator) return yield* new Forbidden({ message: "hiding or restoring a comment needs the moderator or admin role" })
                if (c.status === "deleted") return yield* new Forbidden({ message: "the comment was deleted by its author" })
              }
              if (c.status === status) return
              yield* status === "visible"
                ? sql`update market_comment set status = 'visible', removed_by = null, removed_at = null where id = ${id}::bigint`
                : sql`update market_comment set status = ${status}, removed_by = ${user.address}, removed_at = ${new Date(now)} where id = ${id}::bigint`
              if (c.parent_id !== null) {
                yield* status === "visible" ? notifyReply({ id, market_id: marketId, author: c.author }, c.parent_id) : retractReply(id)
              }
            })
          )
          const comment = yield* readComment(id)
          return { data: toComment(comment!), meta: yield* meta }
        }).pipe(onSqlError)
      )
  })
)
