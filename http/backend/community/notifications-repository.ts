/**
 * The statements of a user's notifications, over `notification` and `notification_read`
 * (migrations 0016, 0022). Every statement is bounded by the user's addresses (the session's and
 * the smart account the faucet paid for it), so another user's notification is indistinguishable
 * from one that does not exist.
 *
 * Broadcasts (migration 0022): a pause or a resolution is one row with no user. It concerns the
 * users who held the market (any market, for a pause) at its block: the sums of their
 * `position_move` rows up to that block. Holders at the time, not current holders, so a
 * notification neither vanishes when its reader redeems or sells nor appears to someone who
 * bought later. Its read state is per user: a `notification_read` row of the signed-in address
 * (a personal row keeps its own `read_at`).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { marketIdToHex } from "../../../schema/primitives.js"
import { listPage, type Paging } from "../../core/db.js"
import { bigint, bool, int, json, nullable, oneOf, rowDecoder, text } from "../../core/rows.js"
import { NOTIFICATION_TYPES } from "../auth/sessions.js"
import type { Page } from "../respond.js"
import type { Notification } from "./notifications-api.js"

/** Whose notifications: the signed-in address (`owner`) and every address of the user. */
export interface Reader {
  readonly owner: string
  readonly addresses: ReadonlyArray<string>
}

const COLUMNS = `n.id::text, n.type, n.user_address, n.market_id::text, n.block_number::text, n.tx_hash, n.detail,
  coalesce(n.read_at, r.read_at) is not null as read, (extract(epoch from n.created_at) * 1000)::bigint as created_ms`

const notificationRow = rowDecoder({
  id: text(),
  type: oneOf(...NOTIFICATION_TYPES),
  /** null: a broadcast */
  user_address: nullable(text()),
  market_id: nullable(bigint),
  block_number: nullable(int),
  tx_hash: nullable(text()),
  detail: json<{ readonly [key: string]: unknown }>(),
  read: bool,
  created_ms: int
})

/** A row as the reader's notification: a broadcast is shown as addressed to the reader. */
const notificationOf =
  (owner: string) =>
  (raw: unknown): typeof Notification.Type => {
    const row = notificationRow(raw)
    return {
      id: row.id,
      type: row.type,
      address: row.user_address ?? owner,
      marketId: row.market_id === null ? null : marketIdToHex(row.market_id),
      blockNumber: row.block_number,
      txHash: row.tx_hash,
      detail: row.detail,
      read: row.read,
      createdAt: Math.floor(row.created_ms / 1000)
    }
  }

/** The user's addresses: `address` and the smart accounts the faucet paid for it. */
export const readerOf = (address: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ address: string }>`select address from faucet_claim where owner = ${address}`, (rows): Reader => ({
      owner: address,
      addresses: [address, ...rows.map((r) => r.address)]
    }))
  )

/** The statement fragments of `reader`'s notifications. */
const fragments = (sql: SqlClient.SqlClient, { owner, addresses }: Reader) => {
  /** The notifications and, for a broadcast, the reader's read mark (read state: `coalesce(n.read_at, r.read_at)`). */
  const withReadMarks = sql`notification n left join notification_read r on n.user_address is null and r.notification_id = n.id and r.user_address = ${owner}`
  /** A broadcast row `n` one of `addresses` held a position of (any market when it names none) at its block. */
  const heldAtBlock = sql`(n.user_address is null and exists (select 1 from position_move pm
    where pm.user_address in ${sql.in(addresses)} and pm.block_number <= n.block_number and (n.market_id is null or pm.market_id = n.market_id)
    group by pm.user_address, pm.market_id having sum(pm.yes_shares) > 0 or sum(pm.no_shares) > 0))`
  /** Concerns the user: addressed to one of the user's addresses, or a broadcast to what they held. */
  const concerns = sql`(n.user_address in ${sql.in(addresses)} or ${heldAtBlock})`
  /** Shown: concerning the user and of a type the user has not muted. */
  const shown = sql`${concerns}
    and coalesce((select (s.notifications ->> n.type)::boolean from user_settings s where s.address = ${owner}), true)`
  return { withReadMarks, heldAtBlock, concerns, shown }
}

/** A page of the notifications shown to `reader` (`unread`: only unread ones), newest first. */
export const listNotifications = (reader: Reader, unread: boolean, paging: Paging) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const { withReadMarks, shown } = fragments(sql, reader)
    return Effect.map(
      listPage(
        {
          select: COLUMNS,
          from: sql`${withReadMarks} where ${shown} ${unread ? sql`and coalesce(n.read_at, r.read_at) is null` : sql``}`,
          orderBy: "n.id desc",
          record: notificationOf(reader.owner)
        },
        paging
      ),
      (page): Page<typeof Notification.Type> => ({ rows: page.data, total: page.meta.count, limit: paging.limit, offset: paging.offset })
    )
  })

/** How many notifications shown to `reader` are unread. */
export const countUnread = (reader: Reader) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const { withReadMarks, shown } = fragments(sql, reader)
    return Effect.map(
      sql`select count(*) as unread from ${withReadMarks} where ${shown} and coalesce(n.read_at, r.read_at) is null`,
      (rows) => int(rows[0]?.unread ?? 0, "unread")
    )
  })

/**
 * Marks notification `id` read for `reader` at `at` (a personal one: its own read_at, kept if
 * set; a broadcast that concerns the reader: the reader's read mark, kept if there), and reads it
 * back; undefined when it is not the reader's.
 */
export const markRead = (reader: Reader, id: string, at: Date) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.gen(function* () {
      const { withReadMarks, heldAtBlock, concerns } = fragments(sql, reader)
      yield* sql`update notification n set read_at = coalesce(n.read_at, ${at})
        where n.id = ${id}::bigint and n.user_address in ${sql.in(reader.addresses)}`
      yield* sql`insert into notification_read (notification_id, user_address, read_at)
        select n.id, ${reader.owner}, ${at} from notification n where n.id = ${id}::bigint and ${heldAtBlock}
        on conflict do nothing`
      const rows = yield* sql`select ${sql.literal(COLUMNS)} from ${withReadMarks} where n.id = ${id}::bigint and ${concerns}`
      return rows[0] === undefined ? undefined : notificationOf(reader.owner)(rows[0])
    })
  )

/** Marks every notification shown to `reader` read at `at`; how many were newly marked. */
export const markAllRead = (reader: Reader, at: Date) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.gen(function* () {
      const { withReadMarks, shown } = fragments(sql, reader)
      const marked = yield* sql`update notification n set read_at = ${at}
        where n.user_address in ${sql.in(reader.addresses)} and ${shown} and n.read_at is null returning n.id`
      const broadcasts = yield* sql`insert into notification_read (notification_id, user_address, read_at)
        select n.id, ${reader.owner}, ${at} from ${withReadMarks}
        where n.user_address is null and ${shown} and r.notification_id is null
        on conflict do nothing returning notification_id`
      return marked.length + broadcasts.length
    })
  )
