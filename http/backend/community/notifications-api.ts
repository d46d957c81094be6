/**
 * The notifications group (handlers: `community/notifications-handlers.ts`): the session user's own
 * notifications. They are produced by the indexed-commit consumer (`notification-consumer.ts`)
 * and, for replies, by the comment that replies; muted types (settings `notifications`) are kept
 * but not shown, so unmuting a type shows what arrived meanwhile.
 *
 * A user's notifications are those addressed to the signed-in address or to the smart account
 * the backend knows it owns (the faucet's destination for it).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { BackendItem, BackendList } from "../../../schema/envelopes.js"
import { IndexerUnavailable, ValidationFailed } from "../../../schema/errors.js"
import { booleanParam, NoQuery, optional, page, strictQuery } from "../../core/params.js"
import { RequireUser } from "../auth/api.js"
import { NotFound } from "../errors.js"
import { NOTIFICATION_TYPES } from "../auth/sessions.js"

export const NotificationType = Schema.Literal(...NOTIFICATION_TYPES).annotations({
  identifier: "NotificationType",
  description:
    "orderFilled: an order of yours was (partially) filled; orderCancelled; marketResolved: a market you hold a position in resolved (or went to refund); " +
    "redemptionAvailable: you hold winning (or refundable) shares; marketPaused: the protocol or a module paused while you hold a position; " +
    "faucetDelivered: your faucet claim was paid; commentReply: someone replied to your comment"
})

export const Notification = Schema.Struct({
  id: Schema.String.annotations({ description: "notification id (decimal)" }),
  type: NotificationType,
  address: Schema.String.annotations({ description: "the address it concerns (the session address or its smart account), lowercase" }),
  marketId: Schema.NullOr(Schema.String).annotations({ description: "the market concerned, 0x + 64 hex; null when none" }),
  blockNumber: Schema.NullOr(Schema.Int).annotations({
    description: "the block of the chain event; null for notifications not from the chain"
  }),
  txHash: Schema.NullOr(Schema.String).annotations({ description: "the transaction of the chain event, when one" }),
  detail: Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
    description:
      "by type: orderFilled {orderId, role maker|taker, filled, fill FULL|PARTIAL}; orderCancelled {orderId}; marketResolved {resolution YES|NO|REFUND}; redemptionAvailable {kind redeem|refund}; marketPaused {scope, moduleId}; faucetDelivered {address, txHash}; commentReply {commentId, parentId, author}. Amounts are decimal strings of raw units"
  }),
  read: Schema.Boolean,
  createdAt: Schema.Int.annotations({ description: "when the backend produced it, unix seconds" })
}).annotations({ identifier: "Notification" })

export const UnreadCount = Schema.Struct({ unread: Schema.NonNegativeInt }).annotations({ identifier: "UnreadCount" })
export const ReadAll = Schema.Struct({
  marked: Schema.NonNegativeInt.annotations({ description: "notifications newly marked read" })
}).annotations({ identifier: "ReadAllResult" })

export const NotificationsQuery = strictQuery({
  unread: optional(booleanParam("unread", "true: only unread notifications")),
  ...page
})

export const NotificationPath = Schema.Struct({
  notificationId: Schema.String.annotations({
    title: "notificationId",
    description: "notification id: a decimal integer from 1 to 9223372036854775807 (else 400 VALIDATION_FAILED)",
    jsonSchema: { type: "string", pattern: "^[1-9][0-9]{0,18}$" }
  })
})

export class NotificationsGroup extends HttpApiGroup.make("notifications")
  .add(
    HttpApiEndpoint.get("list", "/api/notifications")
      .setUrlParams(NotificationsQuery)
      .addSuccess(BackendList(Notification))
      .addError(ValidationFailed.wire)
      .addError(IndexerUnavailable.wire)
      .middleware(RequireUser)
      .annotate(OpenApi.Summary, "The session user's notifications, newest first (unread=true: unread only); muted types are not shown")
  )
  .add(
    HttpApiEndpoint.get("unreadCount", "/api/notifications/unread-count")
      .setUrlParams(NoQuery)
      .addSuccess(BackendItem(UnreadCount))
      .addError(IndexerUnavailable.wire)
      .middleware(RequireUser)
      .annotate(OpenApi.Summary, "How many of the session user's shown notifications are unread")
  )
  .add(
    HttpApiEndpoint.patch("read", "/api/notifications/:notificationId/read")
      .setPath(NotificationPath)
      .addSuccess(BackendItem(Notification))
      .addError(ValidationFailed.wire)
      .addError(NotFound.wire)
      .addError(IndexerUnavailable.wire)
      .middleware(RequireUser)
      .annotate(
        OpenApi.Summary,
        "Marks one of the session user's notifications read (idempotent); another user's or an unknown id: 404 NOT_FOUND; a malformed id: 400 VALIDATION_FAILED"
      )
  )
  .add(
    HttpApiEndpoint.post("readAll", "/api/notifications/read-all")
      .addSuccess(BackendItem(ReadAll))
      .addError(IndexerUnavailable.wire)
      .middleware(RequireUser)
      .annotate(OpenApi.Summary, "Marks all of the session user's shown notifications read")
  ) {}
