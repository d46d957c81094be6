/** Reads of `event_group` (with member markets and display metadata) for the event endpoints. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { EventNotFound } from "../../schema/errors.js"
import type { Address, TxHash } from "../../schema/primitives.js"
import { DISPLAY_COLUMNS, displayMetadata, displayMetadataColumns } from "./records.js"
import { listPage, read } from "../core/db.js"
import { array, bigint, int, nullable, oneOf, rowDecoder, text, time } from "../core/rows.js"

/** The records of these reads (decoded rows: bigint amounts, lowercase addresses and hashes). */
export interface EventRecord {
  readonly id: bigint
  readonly name: string
  readonly creator: Address
  readonly oracle: Address | null
  readonly endTime: number
  readonly marketIds: readonly bigint[]
  readonly marketCount: number
  readonly state: "CREATED" | "RESOLVED" | "REFUND"
  readonly status: "active" | "resolved" | "refunding"
  readonly isResolved: boolean
  readonly refundMode: boolean
  readonly winningIndex: bigint | null
  readonly winningMarketId: bigint | null
  readonly resolver: Address | null
  readonly closedAt: number | null
  readonly totalVolume: bigint
  readonly createdAt: number
  readonly createdBlock: number
  readonly createdTx: TxHash
  readonly metadata: {
    readonly title: { readonly [x: string]: string }
    readonly slug: string
    readonly category: string
    readonly featured: boolean
    readonly icon: string | null
  } | null
}

export interface EventListParams {
  readonly status?: "active" | "resolved" | "refunding"
  readonly category?: string
  readonly featured?: boolean
  readonly limit: number
  readonly offset: number
}

const decodeEventRow = rowDecoder({
  id: bigint,
  name: text(),
  creator: text<Address>(),
  end_time: time,
  /** JSONB: the member market ids as strings of digits, in outcome order. */
  market_ids: array(text()),
  oracle: nullable(text<Address>()),
  /** A uint256 as the event stated it: any value, in range of the members or not. */
  winning_index: nullable(bigint),
  state: oneOf("CREATED", "RESOLVED", "REFUND"),
  resolver: nullable(text<Address>()),
  closed_at: nullable(int),
  created_at: int,
  created_block: int,
  created_tx: text<TxHash>(),
  total_volume: bigint,
  /** The id of the member resolved YES, as the text `market_ids` holds. */
  yes_market: nullable(text()),
  ...displayMetadataColumns
})

/** Member markets' volume, and the member resolved YES (the winner when the event names none). */
const EVENT_COLUMNS = `e.id, e.name, e.creator, e.end_time, e.market_ids, e.oracle, e.winning_index, e.state, e.resolver,
  e.closed_at, e.created_at, e.created_block, e.created_tx,
  (select coalesce(sum(m.volume), 0) from market m where m.id in (select jsonb_array_elements_text(e.market_ids)::numeric)) as total_volume,
  (select m.id from market m where m.id in (select jsonb_array_elements_text(e.market_ids)::numeric) and m.is_resolved and m.outcome
    order by m.id limit 1) as yes_market,
  ${DISPLAY_COLUMNS}`

const EVENT_FROM = `event_group e left join display_metadata d on d.kind = 'event' and d.id = e.id`

const STATE_OF = { active: "CREATED", resolved: "RESOLVED", refunding: "REFUND" } as const

const toEvent = (raw: unknown): EventRecord => {
  const row = decodeEventRow(raw)
  const marketIds = row.market_ids.map((id) => BigInt(id))
  const resolved = row.state === "RESOLVED"
  // The event's own index when it carries one in range, else the position of the member resolved YES.
  const stated = row.winning_index
  const fromMarket = row.yes_market === null ? -1 : row.market_ids.indexOf(row.yes_market)
  const index = !resolved ? -1 : stated !== null && stated >= 0n && stated < BigInt(marketIds.length) ? Number(stated) : fromMarket
  return {
    id: row.id,
    name: row.name,
    creator: row.creator,
    oracle: row.oracle,
    endTime: row.end_time,
    marketIds,
    marketCount: marketIds.length,
    state: row.state,
    status: row.state === "CREATED" ? "active" : row.state === "RESOLVED" ? "resolved" : "refunding",
    isResolved: resolved,
    refundMode: row.state === "REFUND",
    winningIndex: index >= 0 ? BigInt(index) : null,
    winningMarketId: index >= 0 ? (marketIds[index] ?? null) : null,
    resolver: row.resolver,
    closedAt: row.closed_at,
    totalVolume: row.total_volume,
    createdAt: row.created_at,
    createdBlock: row.created_block,
    createdTx: row.created_tx,
    metadata: displayMetadata(row)
  }
}

export const listEvents = (query: EventListParams) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const where = sql.and([
      ...(query.status === undefined ? [] : [sql`e.state = ${STATE_OF[query.status]}`]),
      ...(query.category === undefined ? [] : [sql`d.category = ${query.category}`]),
      ...(query.featured === undefined ? [] : [query.featured ? sql`d.featured` : sql`coalesce(d.featured, false) = false`])
    ])
    return yield* listPage(
      { select: EVENT_COLUMNS, from: sql`${sql.literal(EVENT_FROM)} where ${where}`, orderBy: "e.id desc", record: toEvent },
      query
    )
  }).pipe(read)

export const getEvent = (id: bigint) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql`select ${sql.literal(EVENT_COLUMNS)} from ${sql.literal(EVENT_FROM)} where e.id = ${id.toString()}::numeric`
    return row === undefined ? undefined : toEvent(row)
  }).pipe(
    read,
    Effect.flatMap((event) =>
      event === undefined
        ? Effect.fail(new EventNotFound({ message: `no event with id ${id}` }))
        : Effect.succeed({ data: event, meta: null })
    )
  )
