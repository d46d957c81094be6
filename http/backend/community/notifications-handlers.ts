/**
 * Handlers of the notifications group: each calls the notifications service
 * (`notifications-service.ts`) for the signed-in user and answers from the backend's own tables
 * (`respond.own`: never cached, not behind the indexer breaker).
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentUser } from "../auth/api.js"
import { BackendApi } from "../definition.js"
import { own, ownList } from "../respond.js"
import { Notification, ReadAll, UnreadCount } from "./notifications-api.js"
import { notificationsOf, readAllNotifications, readNotification, unreadCountOf } from "./notifications-service.js"

const notification = own(Notification)
const notifications = ownList(Notification)
const unreadCount = own(UnreadCount)
const readAll = own(ReadAll)

/** `f` of the signed-in user's address. */
const forUser =
  <A, E, R>(f: (address: string) => Effect.Effect<A, E, R>) =>
  () =>
    Effect.flatMap(CurrentUser, (user) => f(user.address))

export const NotificationsLive = HttpApiBuilder.group(BackendApi, "notifications", (handlers) =>
  Effect.succeed(
    handlers
      .handle("list", ({ urlParams }) => notifications(forUser((address) => notificationsOf(address, urlParams))))
      .handle("unreadCount", () => unreadCount(forUser(unreadCountOf)))
      .handle("read", ({ path }) => notification(forUser((address) => readNotification(address, path.notificationId))))
      .handle("readAll", () => readAll(forUser(readAllNotifications)))
  )
)
