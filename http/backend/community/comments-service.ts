/**
 * The rules of comments: threads two levels deep, posting quotas, who edits, deletes, hides or
 * restores what. Statements are in `comments-repository.ts`; the handlers answer these results.
 *
 * Invariants:
 * - a post is admitted by one upsert of the author's quota row (`admitPost`), and the comment is
 *   inserted in the same transaction, so the limits hold under any concurrency and a post that
 *   fails later (e.g. a bad parent) consumes nothing;
 * - a reply notifies the parent's author (not oneself) in the same transaction, under the
 *   notification's unique key; removing the reply retracts it, restoring it brings it back;
 * - time comes from Effect's `Clock` (tests move it), never from the database's `now()`.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Context, Effect, Layer } from "effect"
import { Forbidden, RateLimitExceeded, ValidationFailed } from "../../../schema/errors.js"
import type { Paging } from "../../core/db.js"
import { roleRank, type SessionUser } from "../auth/sessions.js"
import { NotFound } from "../errors.js"
import { marketNotFound, parseIdOrSlug } from "../lookup.js"
import type { CommentPatch, NewComment } from "./comments-api.js"
import * as repository from "./comments-repository.js"
import { onSqlError } from "./database.js"

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

const BIGINT_MAX = 9_223_372_036_854_775_807n

/** A comment id from the path or body: a positive decimal within bigint; else undefined. */
const commentIdOf = (input: string): string | undefined =>
  /^[1-9][0-9]{0,18}$/.test(input) && BigInt(input) <= BIGINT_MAX ? input : undefined

const invalid = (path: string, message: string) => new ValidationFailed({ message, details: [{ path, message }] })
/** An id that cannot name a comment is the client's mistake (400), not a missing comment (404). */
const malformedId = (path: string, input: string) =>
  invalid(path, `invalid ${path}: not a comment id: ${JSON.stringify(input.slice(0, 40))} (a decimal integer from 1 to ${BIGINT_MAX})`)
const noComment = (id: string) => new NotFound({ message: `no comment ${JSON.stringify(id.slice(0, 40))} on this market` })

/** The id (decimal) of the indexed market `idOrSlug` names: one key lookup, as every post and read of a thread needs it. */
const marketOf = (idOrSlug: string) =>
  Effect.gen(function* () {
    const id = yield* repository.marketIdOf(yield* parseIdOrSlug(idOrSlug))
    return id ?? (yield* Effect.fail(marketNotFound(idOrSlug)))
  })

/** A comment just written, as it now reads. */
const commentNow = (id: string) => Effect.map(repository.readComment(id), (comment) => comment!)

export interface CommentsQuery extends Paging {
  readonly sort?: repository.CommentSort | undefined
  readonly parentId?: string | undefined
}

/** A page of a market's top-level comments, or of the replies to one of them (`parentId`). */
export const listComments = (idOrSlug: string, query: CommentsQuery) =>
  Effect.gen(function* () {
    const marketId = yield* marketOf(idOrSlug)
    let parent: string | null = null
    if (query.parentId !== undefined) {
      const id = commentIdOf(query.parentId)
      if (id === undefined) return yield* malformedId("parentId", query.parentId)
      if (!(yield* repository.isThreadOf(id, marketId))) return yield* noComment(query.parentId)
      parent = id
    }
    return yield* repository.listComments(marketId, parent, query.sort === "top" ? "top" : "new", query)
  }).pipe(onSqlError)

/** Why a post was not admitted: the cooldown, or the day's cap. */
const refusal = (settings: CommentOptions, address: string, now: number) =>
  Effect.gen(function* () {
    const quota = yield* repository.readQuota(address)
    const cooling = settings.cooldownSeconds > 0 && quota !== undefined && quota.last_ms > now - settings.cooldownSeconds * 1000
    const day = new Date(now).toISOString().slice(0, 10)
    const retryAfter = cooling
      ? Math.ceil((quota!.last_ms + settings.cooldownSeconds * 1000 - now) / 1000)
      : Math.ceil((Date.parse(`${quota?.day ?? day}T00:00:00Z`) + 86_400_000 - now) / 1000)
    return new RateLimitExceeded({
      message: cooling
        ? `one comment per ${settings.cooldownSeconds} s; retry after ${retryAfter} s`
        : `at most ${settings.perDay} comments per UTC day; retry after ${retryAfter} s`,
      details: [{ path: "", message: `retry after ${retryAfter} seconds` }]
    })
  })

/** The top-level comment of market `marketId` that `input` names for a reply; a validation failure otherwise. */
const replyParent = (input: string, marketId: string) =>
  Effect.gen(function* () {
    const id = commentIdOf(input)
    const parent = id === undefined ? undefined : yield* repository.lockReplyTarget(id)
    if (parent === undefined || parent.market_id !== marketId)
      return yield* invalid("parentId", `parentId ${input.slice(0, 40)} names no comment of this market`)
    if (parent.parent_id !== null) return yield* invalid("parentId", "replies are two levels deep: reply to the top-level comment instead")
    if (parent.status !== "visible") return yield* invalid("parentId", "the comment replied to was removed")
    return id!
  })

/** Posts `user`'s comment or reply on market `idOrSlug`, within the user's quota; the comment as posted. */
export const postComment = (user: SessionUser, idOrSlug: string, payload: typeof NewComment.Type) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const settings = yield* CommentSettings
    const marketId = yield* marketOf(idOrSlug)
    const now = yield* Clock.currentTimeMillis
    const posted = yield* sql.withTransaction(
      Effect.gen(function* () {
        const parentId = payload.parentId === undefined ? null : yield* replyParent(payload.parentId, marketId)
        const at = new Date(now)
        if (!(yield* repository.admitPost(user.address, at, settings)))
          return yield* Effect.flatMap(refusal(settings, user.address, now), Effect.fail)
        const id = yield* repository.insertComment({ marketId, parentId, author: user.address, body: payload.body, at })
        if (parentId !== null) yield* repository.notifyReply({ id, marketId, author: user.address }, parentId)
        return id
      })
    )
    return yield* commentNow(posted)
  }).pipe(onSqlError)

/**
 * Applies `patch` to comment `commentId` for `user`: the author edits the body within the edit
 * window or deletes; a moderator hides or restores. Anything else is Forbidden; the comment as
 * it now reads.
 */
export const changeComment = (user: SessionUser, idOrSlug: string, commentId: string, patch: typeof CommentPatch.Type) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const settings = yield* CommentSettings
    const marketId = yield* marketOf(idOrSlug)
    const id = commentIdOf(commentId)
    if (id === undefined) return yield* malformedId("commentId", commentId)
    const now = yield* Clock.currentTimeMillis
    const moderator = roleRank[user.role] >= roleRank.moderator
    yield* sql.withTransaction(
      Effect.gen(function* () {
        const c = yield* repository.lockComment(id, marketId)
        if (c === undefined) return yield* noComment(commentId)
        const isAuthor = c.author === user.address
        if (patch.body !== undefined) {
          if (!isAuthor) return yield* new Forbidden({ message: "only the author edits a comment" })
          if (c.status !== "visible") return yield* new Forbidden({ message: `the comment is ${c.status}: it cannot be edited` })
          if (now - c.created_ms > settings.editWindowSeconds * 1000) {
            return yield* new Forbidden({ message: `the edit window (${settings.editWindowSeconds} s after posting) has closed` })
          }
          yield* repository.editBody(id, patch.body, new Date(now))
          return
        }
        const status = patch.status!
        if (status === "deleted") {
          if (!isAuthor) return yield* new Forbidden({ message: "only the author deletes a comment; moderators hide it" })
          if (c.status === "hidden") return yield* new Forbidden({ message: "the comment was hidden by a moderator" })
        } else {
          if (!moderator) return yield* new Forbidden({ message: "hiding or restoring a comment needs the moderator or admin role" })
          if (c.status === "deleted") return yield* new Forbidden({ message: "the comment was deleted by its author" })
        }
        if (c.status === status) return
        yield* repository.setStatus(id, status, user.address, new Date(now))
        if (c.parent_id !== null) {
          yield* status === "visible"
            ? repository.notifyReply({ id, marketId, author: c.author }, c.parent_id)
            : repository.retractReply(id)
        }
      })
    )
    return yield* commentNow(id)
  }).pipe(onSqlError)
