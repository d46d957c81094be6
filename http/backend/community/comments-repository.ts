/**
 * The statements of comments, over `market_comment` and `comment_quota` (migration 0016), and the
 * reply notifications a comment writes into `notification`. Rows are read by their declared
 * columns (`http/core/rows.ts`). Every value is a bound parameter; the only text spliced into SQL
 * is one of the literals here.
 *
 * Times are given by the caller (Effect's `Clock`, which tests move), never the database's `now()`.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { marketIdToHex } from "../../../schema/primitives.js"
import { listPage, type Paging } from "../../core/db.js"
import { bigint, int, nullable, oneOf, rowDecoder, text } from "../../core/rows.js"
import type { Page } from "../respond.js"
import type { MarketKey } from "../lookup.js"
import type { Comment } from "./comments-api.js"

const COLUMNS = `c.id::text, c.market_id::text, c.parent_id::text, c.author, c.smart_account, c.body, c.status,
  (select count(*) from market_comment r where r.parent_id = c.id and r.status = 'visible') as reply_count,
  (extract(epoch from c.created_at) * 1000)::bigint as created_ms,
  (extract(epoch from c.edited_at) * 1000)::bigint as edited_ms`

const commentRow = rowDecoder({
  id: text(),
  market_id: bigint,
  parent_id: nullable(text()),
  author: text(),
  smart_account: nullable(text()),
  body: text(),
  status: oneOf("visible", "deleted", "hidden"),
  reply_count: int,
  created_ms: int,
  edited_ms: nullable(int)
})

const seconds = (ms: number) => Math.floor(ms / 1000)

/** A removed comment keeps its place as a tombstone: no body. */
const toComment = (row: ReturnType<typeof commentRow>): typeof Comment.Type => ({
  id: row.id,
  marketId: marketIdToHex(row.market_id),
  parentId: row.parent_id,
  author: row.author,
  smartAccount: row.smart_account,
  body: row.status === "visible" ? row.body : null,
  status: row.status,
  replyCount: row.reply_count,
  createdAt: seconds(row.created_ms),
  editedAt: row.edited_ms === null ? null : seconds(row.edited_ms)
})

const commentRecord = (row: unknown) => toComment(commentRow(row))

/** The id (decimal) of the indexed market `key` names; undefined when none. */
export const marketIdOf = (key: MarketKey) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      "id" in key
        ? sql<{ id: string }>`select id::text from market where id = ${key.id.toString()}::numeric`
        : sql<{
            id: string
          }>`select m.id::text from display_metadata d join market m on m.id = d.id where d.kind = 'market' and d.slug = ${key.slug}`,
      (rows) => rows[0]?.id
    )
  )

export const readComment = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql`select ${sql.literal(COLUMNS)} from market_comment c where c.id = ${id}::bigint`, (rows) =>
      rows[0] === undefined ? undefined : commentRecord(rows[0])
    )
  )

/** Whether `id` is a top-level comment of market `marketId`. */
export const isThreadOf = (id: string, marketId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql`select 1 from market_comment where id = ${id}::bigint and market_id = ${marketId}::numeric and parent_id is null`,
      (rows) => rows.length > 0
    )
  )

export type CommentSort = "new" | "top"

const ORDER: Record<CommentSort, string> = {
  new: "c.created_at desc, c.id desc",
  top: "reply_count desc, c.created_at desc, c.id desc"
}

/** A page of market `marketId`'s top-level comments, or of the replies to `parent` when given. */
export const listComments = (marketId: string, parent: string | null, sort: CommentSort, paging: Paging) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      listPage(
        {
          select: COLUMNS,
          from:
            parent === null
              ? sql`market_comment c where c.market_id = ${marketId}::numeric and c.parent_id is null`
              : sql`market_comment c where c.parent_id = ${parent}::bigint`,
          orderBy: ORDER[sort],
          record: commentRecord
        },
        paging
      ),
      (page): Page<typeof Comment.Type> => ({ rows: page.data, total: page.meta.count, limit: paging.limit, offset: paging.offset })
    )
  )

const replyTarget = rowDecoder({ market_id: text(), parent_id: nullable(text()), status: text() })

/** The comment `id` a post replies to, share-locked until the transaction ends (it cannot be removed meanwhile). */
export const lockReplyTarget = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql`select market_id::text, parent_id::text, status from market_comment where id = ${id}::bigint for share`, (rows) =>
      rows[0] === undefined ? undefined : replyTarget(rows[0])
    )
  )

export interface QuotaLimits {
  readonly cooldownSeconds: number
  readonly perDay: number
}

/**
 * Counts a post of `address` at `at` against its quota, when the quota admits it: one upsert
 * whose WHERE clause is the cooldown and the daily cap. The row lock serialises concurrent posts
 * of one user; a post that commits out of its clock order never moves the time or day backwards.
 */
export const admitPost = (address: string, at: Date, limits: QuotaLimits) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const day = at.toISOString().slice(0, 10)
    const cooldownEnds = new Date(at.getTime() - limits.cooldownSeconds * 1000)
    return Effect.map(
      sql`
        insert into comment_quota (address, last_posted_at, day, posted_today) values (${address}, ${at}, ${day}::date, 1)
        on conflict (address) do update set
          last_posted_at = greatest(comment_quota.last_posted_at, excluded.last_posted_at),
          day = greatest(comment_quota.day, excluded.day),
          posted_today = case when excluded.day > comment_quota.day then 1 else comment_quota.posted_today + 1 end
        where (${limits.cooldownSeconds} = 0 or comment_quota.last_posted_at <= ${cooldownEnds})
          and (excluded.day > comment_quota.day or comment_quota.posted_today < ${limits.perDay})
        returning address`,
      (rows) => rows.length > 0
    )
  })

const quotaRow = rowDecoder({ last_ms: int, day: text() })

/** `address`'s quota: its last post (unix ms) and the UTC day (YYYY-MM-DD) it counts. */
export const readQuota = (address: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql`select (extract(epoch from last_posted_at) * 1000)::bigint as last_ms, day::text from comment_quota where address = ${address}`,
      (rows) => (rows[0] === undefined ? undefined : quotaRow(rows[0]))
    )
  )

export interface NewCommentRow {
  readonly marketId: string
  readonly parentId: string | null
  readonly author: string
  readonly body: string
  readonly at: Date
}

/** Inserts a comment (its smart account: the faucet's destination for the author, if any); its id. */
export const insertComment = (comment: NewCommentRow) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ id: string }>`
        insert into market_comment (market_id, parent_id, author, smart_account, body, created_at)
        values (${comment.marketId}::numeric, ${comment.parentId}::bigint, ${comment.author},
          (select address from faucet_claim where owner = ${comment.author} limit 1), ${comment.body}, ${comment.at})
        returning id::text`,
      (rows) => text()(rows[0]?.id, "id")
    )
  )

const editedRow = rowDecoder({
  author: text(),
  status: oneOf("visible", "deleted", "hidden"),
  parent_id: nullable(text()),
  created_ms: int
})

/** Comment `id` of market `marketId`, locked for an edit or a change of status until the transaction ends. */
export const lockComment = (id: string, marketId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql`select author, status, parent_id::text, (extract(epoch from created_at) * 1000)::bigint as created_ms
        from market_comment where id = ${id}::bigint and market_id = ${marketId}::numeric for update`,
      (rows) => (rows[0] === undefined ? undefined : editedRow(rows[0]))
    )
  )

export const editBody = (id: string, body: string, at: Date) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`update market_comment set body = ${body}, edited_at = ${at} where id = ${id}::bigint`)

/** Restores comment `id` (visible), or removes it (deleted by its author, hidden by a moderator) as `by` at `at`. */
export const setStatus = (id: string, status: "visible" | "deleted" | "hidden", by: string, at: Date) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    status === "visible"
      ? sql`update market_comment set status = 'visible', removed_by = null, removed_at = null where id = ${id}::bigint`
      : sql`update market_comment set status = ${status}, removed_by = ${by}, removed_at = ${at} where id = ${id}::bigint`
  )

/** Notifies the author of `parentId` of reply `reply` (never the replier himself), once per reply. */
export const notifyReply = (reply: { readonly id: string; readonly marketId: string; readonly author: string }, parentId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`insert into notification (user_address, type, source, market_id, detail)
      select p.author, 'commentReply', ${`comment:${reply.id}`}, ${reply.marketId}::numeric,
        jsonb_build_object('commentId', ${reply.id}::text, 'parentId', p.id::text, 'author', ${reply.author}::text)
      from market_comment p where p.id = ${parentId}::bigint and p.author <> ${reply.author}
      on conflict (user_address, type, source) do nothing`
  )

/** Withdraws the notification of reply `replyId`. */
export const retractReply = (replyId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`delete from notification where type = 'commentReply' and source = ${`comment:${replyId}`}`
  )
