/**
 * The comments group (handlers: `community/comments-handlers.ts`): threaded market comments.
 *
 * - Two levels: a top-level comment, and replies to it (`parentId`); a reply cannot be replied to.
 * - Bodies are plain text, 1-2,000 characters (Unicode code points), stored and answered exactly
 *   as written. The API never renders them as HTML: clients must display them as text.
 * - `sort=new`: newest first. `sort=top`: most visible replies first, then newest ("top" is the
 *   liveliest discussion; there are no votes). Replies (`?parentId=`) sort the same way.
 * - Removed comments stay in their thread as tombstones (`status` deleted or hidden, `body` null),
 *   so replies keep their place.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { BackendItem, BackendList } from "../../../schema/envelopes.js"
import { IndexerUnavailable, InvalidMarketId, MarketNotFound, RateLimitExceeded, ValidationFailed } from "../../../schema/errors.js"
import { MarketIdHex } from "../../../schema/primitives.js"
import { RequireUser } from "../auth/api.js"
import { NotFound } from "../errors.js"
import { IdOrSlug, literalParam, optional, page, strictQuery } from "../../core/params.js"

export const MAX_COMMENT_LENGTH = 2_000

export const CommentIdString = Schema.String.annotations({
  title: "commentId",
  description: "comment id: a decimal integer from 1",
  jsonSchema: { type: "string", pattern: "^[1-9][0-9]{0,18}$" }
})

const BODY_DESCRIPTION =
  "plain text, 1-2,000 characters; stored exactly as written and never rendered as HTML by the API (display it as text)"

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/** A well-formed comment body: 1-2,000 code points, well-formed Unicode, not blank, no control characters but tab and line breaks. */
export const CommentBody = Schema.String.pipe(
  Schema.filter((body) => {
    const length = [...body].length
    if (length < 1 || length > MAX_COMMENT_LENGTH) return `body must be 1 to ${MAX_COMMENT_LENGTH} characters, got ${length}`
    if (LONE_SURROGATE.test(body)) return "body must be well-formed Unicode text (no lone surrogates)"
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(body))
      return "body must be plain text: no control characters other than tab and line breaks"
    if (body.trim().length === 0) return "body must not be blank"
    return true
  }),
  Schema.annotations({
    identifier: "CommentBody",
    description: BODY_DESCRIPTION,
    jsonSchema: { type: "string", minLength: 1, maxLength: MAX_COMMENT_LENGTH, description: BODY_DESCRIPTION }
  })
)

export const CommentStatus = Schema.Literal("visible", "deleted", "hidden").annotations({
  identifier: "CommentStatus",
  description: "visible; deleted by its author; hidden by a moderator"
})

export const Comment = Schema.Struct({
  id: Schema.String.annotations({ description: "comment id (decimal)" }),
  marketId: MarketIdHex,
  parentId: Schema.NullOr(Schema.String).annotations({
    description: "the top-level comment this replies to; null for a top-level comment"
  }),
  author: Schema.String.annotations({ description: "the author's signed-in address, lowercase" }),
  smartAccount: Schema.NullOr(Schema.String).annotations({
    description:
      "the author's smart account as the backend knows it (the faucet's destination for the author), lowercase; null when unknown"
  }),
  body: Schema.NullOr(Schema.String).annotations({
    description: "plain text exactly as written (never HTML); null once deleted or hidden"
  }),
  status: CommentStatus,
  replyCount: Schema.NonNegativeInt.annotations({ description: "visible replies (0 for a reply)" }),
  createdAt: Schema.Int.annotations({ description: "unix seconds" }),
  editedAt: Schema.NullOr(Schema.Int).annotations({ description: "last edit, unix seconds; null if never edited" })
}).annotations({ identifier: "Comment" })

export const CommentsQuery = strictQuery({
  sort: optional(literalParam("sort", ["new", "top"], "new: newest first; top: most visible replies first, then newest. Default new")),
  parentId: optional(
    CommentIdString.annotations({ description: "list the replies of this top-level comment instead of the top-level comments" })
  ),
  ...page
})

export const NewComment = Schema.Struct({
  body: CommentBody,
  parentId: Schema.optionalWith(CommentIdString.annotations({ description: "reply to this top-level comment of the same market" }), {
    exact: true
  })
}).annotations({ identifier: "NewComment", parseOptions: { onExcessProperty: "error" } })

export const CommentPatch = Schema.Struct({
  body: Schema.optionalWith(CommentBody, { exact: true }),
  status: Schema.optionalWith(CommentStatus, { exact: true })
}).pipe(
  Schema.filter(
    (patch) =>
      (patch.body === undefined) !== (patch.status === undefined) || "give exactly one of body (edit) and status (deleted, hidden, visible)"
  ),
  Schema.annotations({
    identifier: "CommentPatch",
    description:
      "exactly one of: body (the author edits within the edit window); status deleted (the author), hidden or visible (a moderator or admin)",
    parseOptions: { onExcessProperty: "error" }
  })
)

export const CommentsPath = Schema.Struct({ idOrSlug: IdOrSlug })
export const CommentPath = Schema.Struct({ idOrSlug: IdOrSlug, commentId: CommentIdString })

export class CommentsGroup extends HttpApiGroup.make("comments")
  .add(
    HttpApiEndpoint.get("list", "/api/markets/:idOrSlug/comments")
      .setPath(CommentsPath)
      .setUrlParams(CommentsQuery)
      .addSuccess(BackendList(Comment))
      .addError(InvalidMarketId.wire)
      .addError(MarketNotFound.wire)
      .addError(NotFound.wire)
      .addError(ValidationFailed.wire)
      .addError(IndexerUnavailable.wire)
      .annotate(
        OpenApi.Summary,
        "A market's top-level comments, or with parentId the replies of one (unknown parentId: 404). Bodies are plain text, never HTML. sort new (default) or top (most visible replies)"
      )
  )
  .add(
    HttpApiEndpoint.post("create", "/api/markets/:idOrSlug/comments")
      .setPath(CommentsPath)
      .setPayload(NewComment)
      .addSuccess(BackendItem(Comment), { status: 201 })
      .addError(InvalidMarketId.wire)
      .addError(MarketNotFound.wire)
      .addError(ValidationFailed.wire)
      .addError(RateLimitExceeded.wire)
      .addError(IndexerUnavailable.wire)
      .middleware(RequireUser)
      .annotate(
        OpenApi.Summary,
        "Posts a comment or a reply (parentId: a top-level comment of this market). Plain text stored as written, never rendered as HTML. One post per 30 s and 50 per UTC day per user (COMMENT_COOLDOWN_SECONDS, COMMENTS_PER_DAY): RATE_LIMIT_EXCEEDED beyond"
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/api/markets/:idOrSlug/comments/:commentId")
      .setPath(CommentPath)
      .setPayload(CommentPatch)
      .addSuccess(BackendItem(Comment))
      .addError(InvalidMarketId.wire)
      .addError(MarketNotFound.wire)
      .addError(NotFound.wire)
      .addError(ValidationFailed.wire)
      .addError(IndexerUnavailable.wire)
      .middleware(RequireUser)
      .annotate(
        OpenApi.Summary,
        "The author edits the body within the edit window (COMMENT_EDIT_WINDOW_SECONDS, default 15 min) or deletes (status deleted, soft); a moderator or admin hides (status hidden) or restores (visible). Anyone else: FORBIDDEN. Unknown comment: 404"
      )
  ) {}
