/**
 * Handlers of the notifications group, over `notification` (migration 0016). Every statement is
 * bounded by the session user's addresses, so another user's notification is indistinguishable
 * from one that does not exist (404, never 403). An id that cannot name a notification at all (not
 * a decimal bigint from 1) is the client's mistake, 400 VALIDATION_FAILED, and is never queried.
 */
import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect } from "effect"
import { IndexerUnavailable, ValidationFailed } from "../../schema/errors.js"
import { marketIdToHex } from "../../schema/primitives.js"
import { CurrentUser } from "./auth.js"
import { BackendApi } from "./definition.js"
import { NotFound } from "./errors.js"
import type { NotificationType } from "./sessions.js"
import { meta } from "./system.js"

interface NotificationRow {
  readonly id: string
  readonly type: NotificationType
  readonly user_address: string
  readonly market_id: string | null
  readonly block_number: string | null
  readonly tx_hash: string | null
  readonly detail: Record<string, unknown>
  readonly read: boolean
  readonly created_ms: string
}

const COLUMNS = `n.id::text, n.type, n.user_address, n.market_id::text, n.block_number::text, n.tx_hash, n.detail,
  n.read_at is not null as read, (extract(epoch from n.created_at) * 1000)::bigint as created_ms`

const toNotification = (row: NotificationRow) => ({
  id: row.id,
  type: row.type,
  address: row.user_address,
  marketId: row.market_id === null ? null : marketIdToHex(BigInt(row.market_id)),
  blockNumber: row.block_number === null ? null : Number(row.block_number),
  txHash: row.tx_hash,
  detail: row.detail,
  read: row.read,
  createdAt: Math.floor(Number(row.created_ms) / 1000)
})

/** `notification.id` is a bigserial: decimal, from 1 to 2^63 - 1. */
const MAX_ID = 9_223_372_036_854_775_807n
const isNotificationId = (id: string) => /^[1-9][0-9]{0,18}$/.test(id) && BigInt(id) <= MAX_ID

const malformedId = (id: string) => {
  const problem = `not a notification id: ${JSON.stringify(id.length > 40 ? `${id.slice(0, 37)}...` : id)} (a decimal integer from 1 to ${MAX_ID})`
  return new ValidationFailed({ message: `invalid notification id: ${problem}`, details: [{ path: "id", message: problem }] })
}

const databaseDown = () => new IndexerUnavailable({ message: "the database is unavailable" })
const onSqlError = <A, E, R>(effect: Effect.Effect<A, E | SqlError, R>) =>
  Effect.catchIf(effect, (e): e is SqlError => e instanceof SqlError, databaseDown) as Effect.Effect<
    A,
    Exclude<E, SqlError> | InstanceType<typeof IndexerUnavailable>,
    R
  >

export const NotificationsLive = HttpApiBuilder.group(BackendApi, "notifications", (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** The user's addresses: the session's and the smart account the faucet paid for it. */
    const addressesOf = (address: string) =>
      sql<{ address: string }>`select address from faucet_claim where owner = ${address}`.pipe(
        Effect.map((rows) => [address, ...rows.map((r) => r.address)])
      )

    /** Shown: addressed to one of the user's addresses and of a type the user has not muted. */
    const shown = (addresses: ReadonlyArray<string>, owner: string) =>
      sql`n.user_address in ${sql.in(addresses)}
        and coalesce((select (s.notifications ->> n.type)::boolean from user_settings s where s.address = ${owner}), true)`

    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.gen(function* () {
          const user = yield* CurrentUser
          const addresses = yield* addressesOf(user.address)
          const unread = urlParams.unread === true ? sql`and n.read_at is null` : sql``
          const rows = yield* sql<NotificationRow>`select ${sql.literal(COLUMNS)} from notification n
            where ${shown(addresses, user.address)} ${unread} order by n.id desc limit ${urlParams.limit} offset ${urlParams.offset}`
          const [count] = yield* sql<{
            total: string
          }>`select count(*) as total from notification n where ${shown(addresses, user.address)} ${unread}`
          return {
            data: rows.map(toNotification),
            meta: { ...(yield* meta), pagination: { limit: urlParams.limit, offset: urlParams.offset, total: Number(count?.total ?? 0) } }
          }
        }).pipe(onSqlError)
      )
      .handle("unreadCount", () =>
        Effect.gen(function* () {
          const user = yield* CurrentUser
          const addresses = yield* addressesOf(user.address)
          const [count] = yield* sql<{
            unread: string
          }>`select count(*) as unread from notification n where ${shown(addresses, user.address)} and n.read_at is null`
          return { data: { unread: Number(count?.unread ?? 0) }, meta: yield* meta }
        }).pipe(onSqlError)
      )
      .handle("read", ({ path }) =>
        Effect.gen(function* () {
          const user = yield* CurrentUser
          if (!isNotificationId(path.id)) return yield* malformedId(path.id)
          const missing = new NotFound({ message: `no notification ${path.id} of yours` })
          const addresses = yield* addressesOf(user.address)
          const now = new Date(yield* Clock.currentTimeMillis)
          const [row] = yield* sql<NotificationRow>`update notification n set read_at = coalesce(n.read_at, ${now})
            where n.id = ${path.id}::bigint and n.user_address in ${sql.in(addresses)}
            returning ${sql.literal(COLUMNS)}`
          if (row === undefined) return yield* missing
          return { data: toNotification(row), meta: yield* meta }
        }).pipe(onSqlError)
      )
      .handle("readAll", () =>
        Effect.gen(function* () {
          const user = yield* CurrentUser
          const addresses = yield* addressesOf(user.address)
          const now = new Date(yield* Clock.currentTimeMillis)
          const marked =
            yield* sql`update notification n set read_at = ${now} where ${shown(addresses, user.address)} and n.read_at is null returning n.id`
          return { data: { marked: marked.length }, meta: yield* meta }
        }).pipe(onSqlError)
      )
  })
)
