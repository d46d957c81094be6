/**
 * Handlers of the notifications group, over `notification` (migration 0016). Every statement is
 * bounded by the session user's addresses, so another user's notification is indistinguishable
 * from one that does not exist (404, never 403). An id that cannot name a notification at all (not
 * a decimal bigint from 1) is the client's mistake, 400 VALIDATION_FAILED, and is never queried.
 *
 * Broadcasts (migration 0022): a pause or a resolution is one row with no user. It concerns the
 * users who held the market (any market, for a pause) at its block: the sums of their
 * `position_move` rows up to that block. Holders at the time, not current holders, so a
 * notification neither vanishes when its reader redeems or sells nor appears to someone who
 * bought later. Its read state is per user: a `notification_read` row of the signed-in address
 * (a personal row keeps its own `read_at`).
 */
import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect } from "effect"
import { IndexerUnavailable, ValidationFailed } from "../../../schema/errors.js"
import { marketIdToHex } from "../../../schema/primitives.js"
import { CurrentUser } from "../auth/api.js"
import { BackendApi } from "../definition.js"
import { NotFound } from "../errors.js"
import type { NotificationType } from "../auth/sessions.js"
import { meta } from "../system/api.js"

interface NotificationRow {
  readonly id: string
  readonly type: NotificationType
  /** null: a broadcast */
  readonly user_address: string | null
  readonly market_id: string | null
  readonly block_number: string | null
  readonly tx_hash: string | null
  readonly detail: Record<string, unknown>
  readonly read: boolean
  readonly created_ms: string
}

const COLUMNS = `n.id::text, n.type, n.user_address, n.market_id::text, n.block_number::text, n.tx_hash, n.detail,
  coalesce(n.read_at, r.read_at) is not null as read, (extract(epoch from n.created_at) * 1000)::bigint as created_ms`

/** `owner`: the reader, whom a broadcast is shown as addressed to. */
const toNotification = (row: NotificationRow, owner: string) => ({
  id: row.id,
  type: row.type,
  address: row.user_address ?? owner,
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
  return new ValidationFailed({ message: `invalid notification id: ${problem}`, details: [{ path: "notificationId", message: problem }] })
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

    /** The notifications and, for a broadcast, the reader's read mark (read state: `coalesce(n.read_at, r.read_at)`). */
    const withReadMarks = (owner: string) =>
      sql`notification n left join notification_read r on n.user_address is null and r.notification_id = n.id and r.user_address = ${owner}`

    /** A broadcast row `n` one of `addresses` held a position of (any market when it names none) at its block. */
    const heldAtBlock = (addresses: ReadonlyArray<string>) =>
      sql`(n.user_address is null and exists (select 1 from position_move pm
        where pm.user_address in ${sql.in(addresses)} and pm.block_number <= n.block_number and (n.market_id is null or pm.market_id = n.market_id)
        group by pm.user_address, pm.market_id having sum(pm.yes_shares) > 0 or sum(pm.no_shares) > 0))`

    /** Concerns the user: addressed to one of the user's addresses, or a broadcast to what they held. */
    const concerns = (addresses: ReadonlyArray<string>) => sql`(n.user_address in ${sql.in(addresses)} or ${heldAtBlock(addresses)})`

    /** Shown: concerning the user and of a type the user has not muted. */
    const shown = (addresses: ReadonlyArray<string>, owner: string) =>
      sql`${concerns(addresses)}
        and coalesce((select (s.notifications ->> n.type)::boolean from user_settings s where s.address = ${owner}), true)`

    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.gen(function* () {
          const user = yield* CurrentUser
          const addresses = yield* addressesOf(user.address)
          const unread = urlParams.unread === true ? sql`and coalesce(n.read_at, r.read_at) is null` : sql``
          const rows = yield* sql<NotificationRow>`select ${sql.literal(COLUMNS)} from ${withReadMarks(user.address)}
            where ${shown(addresses, user.address)} ${unread} order by n.id desc limit ${urlParams.limit} offset ${urlParams.offset}`
          const [count] = yield* sql<{
            total: string
          }>`select count(*) as total from ${withReadMarks(user.address)} where ${shown(addresses, user.address)} ${unread}`
          return {
            data: rows.map((row) => toNotification(row, user.address)),
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
          }>`select count(*) as unread from ${withReadMarks(user.address)}
            where ${shown(addresses, user.address)} and coalesce(n.read_at, r.read_at) is null`
          return { data: { unread: Number(count?.unread ?? 0) }, meta: yield* meta }
        }).pipe(onSqlError)
      )
      .handle("read", ({ path }) =>
        Effect.gen(function* () {
          const user = yield* CurrentUser
          if (!isNotificationId(path.notificationId)) return yield* malformedId(path.notificationId)
          const missing = new NotFound({ message: `no notification ${path.notificationId} of yours` })
          const addresses = yield* addressesOf(user.address)
          const now = new Date(yield* Clock.currentTimeMillis)
          // Personal: its own read_at; a broadcast that concerns the user: the user's read mark (kept if there).
          yield* sql`update notification n set read_at = coalesce(n.read_at, ${now})
            where n.id = ${path.notificationId}::bigint and n.user_address in ${sql.in(addresses)}`
          yield* sql`insert into notification_read (notification_id, user_address, read_at)
            select n.id, ${user.address}, ${now} from notification n where n.id = ${path.notificationId}::bigint and ${heldAtBlock(addresses)}
            on conflict do nothing`
          const [row] = yield* sql<NotificationRow>`select ${sql.literal(COLUMNS)} from ${withReadMarks(user.address)}
            where n.id = ${path.notificationId}::bigint and ${concerns(addresses)}`
          if (row === undefined) return yield* missing
          return { data: toNotification(row, user.address), meta: yield* meta }
        }).pipe(onSqlError)
      )
      .handle("readAll", () =>
        Effect.gen(function* () {
          const user = yield* CurrentUser
          const addresses = yield* addressesOf(user.address)
          const now = new Date(yield* Clock.currentTimeMillis)
          const marked = yield* sql`update notification n set read_at = ${now}
            where n.user_address in ${sql.in(addresses)} and ${shown(addresses, user.address)} and n.read_at is null returning n.id`
          const broadcasts = yield* sql`insert into notification_read (notification_id, user_address, read_at)
            select n.id, ${user.address}, ${now} from ${withReadMarks(user.address)}
            where n.user_address is null and ${shown(addresses, user.address)} and r.notification_id is null
            on conflict do nothing returning notification_id`
          return { data: { marked: marked.length + broadcasts.length }, meta: yield* meta }
        }).pipe(onSqlError)
      )
  })
)
