/**
 * A user's notifications: the list, the unread count and marking read, each for the reader the
 * signed-in address makes (`readerOf`: the address and its smart accounts). An id that cannot
 * name a notification at all (not a decimal bigint from 1) is the client's mistake, 400
 * VALIDATION_FAILED, and is never queried; another user's notification is 404, never 403.
 */
import { Clock, Effect } from "effect"
import { ValidationFailed } from "../../../schema/errors.js"
import type { Paging } from "../../core/db.js"
import { NotFound } from "../errors.js"
import { onSqlError } from "./database.js"
import { countUnread, listNotifications, markAllRead, markRead, readerOf } from "./notifications-repository.js"

/** `notification.id` is a bigserial: decimal, from 1 to 2^63 - 1. */
const MAX_ID = 9_223_372_036_854_775_807n
const isNotificationId = (id: string) => /^[1-9][0-9]{0,18}$/.test(id) && BigInt(id) <= MAX_ID

const malformedId = (id: string) => {
  const problem = `not a notification id: ${JSON.stringify(id.length > 40 ? `${id.slice(0, 37)}...` : id)} (a decimal integer from 1 to ${MAX_ID})`
  return new ValidationFailed({ message: `invalid notification id: ${problem}`, details: [{ path: "notificationId", message: problem }] })
}

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

export const notificationsOf = (address: string, query: Paging & { readonly unread?: boolean | undefined }) =>
  Effect.flatMap(readerOf(address), (reader) => listNotifications(reader, query.unread === true, query)).pipe(onSqlError)

export const unreadCountOf = (address: string) =>
  Effect.flatMap(readerOf(address), countUnread).pipe(
    Effect.map((unread) => ({ unread })),
    onSqlError
  )

/** Marks notification `id` of `address`'s user read; the notification as it now reads. */
export const readNotification = (address: string, id: string) =>
  Effect.gen(function* () {
    if (!isNotificationId(id)) return yield* malformedId(id)
    const reader = yield* readerOf(address)
    const notification = yield* markRead(reader, id, yield* now)
    return notification ?? (yield* new NotFound({ message: `no notification ${id} of yours` }))
  }).pipe(onSqlError)

export const readAllNotifications = (address: string) =>
  Effect.gen(function* () {
    const reader = yield* readerOf(address)
    return { marked: yield* markAllRead(reader, yield* now) }
  }).pipe(onSqlError)
