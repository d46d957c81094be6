/** Reads of `event_group` (with member markets and display metadata) for the event endpoints. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { EventNotFound } from "../../../schema/errors.js"
import type { Address, TxHash } from "../../../schema/primitives.js"
import type { Event, EventListQuery } from "../events.js"
import { DISPLAY_COLUMNS, displayMetadata, toIntOrNull, toTimeInt, type DisplayMetadataRow } from "../records.js"
import { pageOf, read } from "./db.js"

interface EventRow extends DisplayMetadataRow {
  readonly id: string
  readonly name: string
  readonly creator: string
  readonly end_time: string
  readonly market_ids: ReadonlyArray<string>
  readonly oracle: string | null
  readonly winning_index: string | null
  readonly state: Event["state"]
  readonly resolver: string | null
  readonly closed_at: string | null
  readonly created_at: string
  readonly created_block: string
  readonly created_tx: string
  readonly total_volume: string
  readonly yes_market: string | null
}

/** Member markets' volume, and the member resolved YES (the winner when the event names none). */
const EVENT_COLUMNS = `e.id, e.name, e.creator, e.end_time, e.market_ids, e.oracle, e.winning_index, e.state, e.resolver,
  e.closed_at, e.created_at, e.created_block, e.created_tx,
  (select coalesce(sum(m.volume), 0) from market m where m.id in (select jsonb_array_elements_text(e.market_ids)::numeric)) as total_volume,
  (select m.id from market m where m.id in (select jsonb_array_elements_text(e.market_ids)::numeric) and m.is_resolved and m.outcome
    order by m.id limit 1) as yes_market,
  ${DISPLAY_COLUMNS}`

const EVENT_FROM = `event_group e left join display_metadata d on d.kind = 'event' and d.id = e.id`

const STATE_OF = { active: "CREATED", resolved: "RESOLVED", refunding: "REFUND" } as const

const toEvent = (row: EventRow): Event => {
  const marketIds = row.market_ids.map((id) => BigInt(id))
  const resolved = row.state === "RESOLVED"
  // The event's own index when it carries one in range, else the position of the member resolved YES.
  const stated = row.winning_index === null ? -1 : Number(row.winning_index)
  const fromMarket = row.yes_market === null ? -1 : row.market_ids.indexOf(row.yes_market)
  const index = !resolved ? -1 : stated >= 0 && stated < marketIds.length ? stated : fromMarket
  return {
    id: BigInt(row.id),
    name: row.name,
    creator: row.creator as Address,
    oracle: row.oracle === null ? null : (row.oracle as Address),
    endTime: toTimeInt(row.end_time),
    marketIds,
    marketCount: marketIds.length,
    state: row.state,
    status: row.state === "CREATED" ? "active" : row.state === "RESOLVED" ? "resolved" : "refunding",
    isResolved: resolved,
    refundMode: row.state === "REFUND",
    winningIndex: index >= 0 ? BigInt(index) : null,
    winningMarketId: index >= 0 ? (marketIds[index] ?? null) : null,
    resolver: row.resolver === null ? null : (row.resolver as Address),
    closedAt: toIntOrNull(row.closed_at),
    totalVolume: BigInt(row.total_volume),
    createdAt: Number(row.created_at),
    createdBlock: Number(row.created_block),
    createdTx: row.created_tx as TxHash,
    metadata: displayMetadata(row)
  }
}

export const listEvents = (query: EventListQuery) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const where = sql.and([
      ...(query.status === undefined ? [] : [sql`e.state = ${STATE_OF[query.status]}`]),
      ...(query.category === undefined ? [] : [sql`d.category = ${query.category}`]),
      ...(query.featured === undefined ? [] : [query.featured ? sql`d.featured` : sql`coalesce(d.featured, false) = false`])
    ])
    const page = yield* pageOf(
      sql<EventRow & { total_count: string }>`
        select ${sql.literal(EVENT_COLUMNS)}, count(*) over () as total_count from ${sql.literal(EVENT_FROM)}
        where ${where} order by e.id desc limit ${query.limit} offset ${query.offset}`,
      sql<{ count: string }>`select count(*) as count from ${sql.literal(EVENT_FROM)} where ${where}`,
      query.offset
    )
    return { data: page.rows.map(toEvent), meta: { limit: query.limit, offset: query.offset, count: page.count } }
  }).pipe(read)

export const getEvent = (id: bigint) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<EventRow>`select ${sql.literal(EVENT_COLUMNS)} from ${sql.literal(EVENT_FROM)} where e.id = ${id.toString()}::numeric`
    return row === undefined ? undefined : toEvent(row)
  }).pipe(
    read,
    Effect.flatMap((event) =>
      event === undefined ? Effect.fail(new EventNotFound({ message: `no event with id ${id}` })) : Effect.succeed({ data: event, meta: null })
    )
  )
