/**
 * Reads of the `market` table (with its event and display metadata) for the market endpoints.
 *
 * Invariants: every list order ends in the primary key, so pages never overlap or skip; filters
 * and sorts come from closed sets (`MarketListParams`), so the only text spliced into SQL is one of
 * the literals below and every value is a bound parameter.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { IndexerMarketNotFound } from "../../schema/errors.js"
import type { Address, MarketIdHex, TxHash } from "../../schema/primitives.js"
import { marketIdToHex, PRICE_SCALE } from "../../schema/primitives.js"
import { MARKET_STATUSES, marketStatusSql, type MarketStatus } from "../../schema/market-status.js"
import { DISPLAY_COLUMNS, displayMetadata, displayMetadataColumns, type DisplayMetadataRecord } from "./records.js"
import { listPage, read } from "../core/db.js"
import { bigint, bool, int, nullable, oneOf, rowDecoder, text, time } from "../core/rows.js"

/** The orders a market list can come in (each ends in the id: `SORT_ORDER`). */
export const MARKET_SORTS = ["newest", "oldest", "volume", "trades", "ending_soon"] as const
export type MarketSort = (typeof MARKET_SORTS)[number]

/** A market as read: its row with the display metadata and the status at the indexed head's time. */
export interface MarketRecord {
  readonly id: bigint
  readonly marketIdHex: MarketIdHex
  readonly question: string
  readonly endTime: number
  readonly yesPrice: bigint
  readonly noPrice: bigint
  readonly totalCollateral: bigint
  readonly volume: bigint
  readonly tradeCount: number
  readonly isResolved: boolean
  readonly outcome: boolean | null
  readonly resolutionType: "NONE" | "ORACLE" | "EMERGENCY" | "REFUND"
  readonly resolvedAt: number | null
  readonly refundMode: boolean
  readonly status: MarketStatus
  readonly creator: Address
  readonly oracle: Address
  readonly yesToken: Address
  readonly noToken: Address
  readonly eventId: bigint | null
  readonly createdAt: number
  readonly createdBlock: number
  readonly createdTx: TxHash
  readonly lastTradeAt: number | null
  readonly metadata: DisplayMetadataRecord | null
}

/** What a market list selects and how it orders and pages it. */
export interface MarketListParams {
  readonly sort: MarketSort
  readonly status?: MarketStatus
  readonly category?: string
  readonly featured?: boolean
  readonly limit: number
  readonly offset: number
}

const decodeMarketRow = rowDecoder({
  id: bigint,
  question: text(),
  end_time: time,
  oracle: text<Address>(),
  creator: text<Address>(),
  yes_token: text<Address>(),
  no_token: text<Address>(),
  created_at: int,
  created_block: int,
  created_tx: text<TxHash>(),
  total_collateral: bigint,
  volume: bigint,
  trade_count: int,
  is_resolved: bool,
  outcome: nullable(bool),
  resolution_type: oneOf("NONE", "ORACLE", "EMERGENCY", "REFUND"),
  resolved_at: nullable(int),
  refund_mode: bool,
  /** Never null since migration 0011 (the price before any trade: see pipeline/reduce/markets.ts). */
  yes_price: bigint,
  status: oneOf(...MARKET_STATUSES),
  last_trade_at: nullable(int),
  event_id: nullable(bigint),
  ...displayMetadataColumns
})

/** The columns of a market record; `m` is the market, `d` its display metadata. */
export const MARKET_COLUMNS = `m.id, m.question, m.end_time, m.oracle, m.creator, m.yes_token, m.no_token, m.created_at,
  m.created_block, m.created_tx, m.total_collateral, m.volume, m.trade_count, m.is_resolved, m.outcome,
  m.resolution_type, m.resolved_at, m.refund_mode, m.yes_price, ${marketStatusSql("m")} as status, m.last_trade_at,
  (select e.id from event_group e where e.market_ids @> jsonb_build_array(m.id::text) order by e.id limit 1) as event_id,
  ${DISPLAY_COLUMNS}`

export const MARKET_FROM = `market m left join display_metadata d on d.kind = 'market' and d.id = m.id`

const SORT_ORDER: Record<MarketSort, string> = {
  newest: "m.id desc",
  oldest: "m.id asc",
  volume: "m.volume desc, m.id asc",
  trades: "m.trade_count desc, m.id asc",
  ending_soon: "m.end_time asc, m.id asc"
}

/** The market record of a row selected with `MARKET_COLUMNS`. */
export const toMarket = (raw: unknown): MarketRecord => {
  const row = decodeMarketRow(raw)
  return {
    id: row.id,
    marketIdHex: marketIdToHex(row.id),
    question: row.question,
    endTime: row.end_time,
    yesPrice: row.yes_price,
    noPrice: PRICE_SCALE - row.yes_price,
    totalCollateral: row.total_collateral,
    volume: row.volume,
    tradeCount: row.trade_count,
    isResolved: row.is_resolved,
    outcome: row.outcome,
    resolutionType: row.resolution_type,
    resolvedAt: row.resolved_at,
    refundMode: row.refund_mode,
    status: row.status,
    creator: row.creator,
    oracle: row.oracle,
    yesToken: row.yes_token,
    noToken: row.no_token,
    eventId: row.event_id,
    createdAt: row.created_at,
    createdBlock: row.created_block,
    createdTx: row.created_tx,
    lastTradeAt: row.last_trade_at,
    metadata: displayMetadata(row)
  }
}

export const listMarkets = (query: MarketListParams) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const where = sql.and([
      ...(query.status === undefined ? [] : [sql`${sql.literal(marketStatusSql("m"))} = ${query.status}`]),
      ...(query.category === undefined ? [] : [sql`d.category = ${query.category}`]),
      ...(query.featured === undefined ? [] : [query.featured ? sql`d.featured` : sql`coalesce(d.featured, false) = false`])
    ])
    return yield* listPage(
      { select: MARKET_COLUMNS, from: sql`${sql.literal(MARKET_FROM)} where ${where}`, orderBy: SORT_ORDER[query.sort], record: toMarket },
      query
    )
  }).pipe(read)

export const getMarket = (id: bigint) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql`
      select ${sql.literal(MARKET_COLUMNS)} from ${sql.literal(MARKET_FROM)} where m.id = ${id.toString()}::numeric`
    return rows[0] === undefined ? undefined : toMarket(rows[0])
  }).pipe(
    read,
    Effect.flatMap((market) => (market === undefined ? Effect.fail(marketNotFound(id)) : Effect.succeed({ data: market, meta: null })))
  )

export const marketNotFound = (id: bigint) => new IndexerMarketNotFound({ message: `no market with id ${id}` })

/**
 * Fails with `MarketNotFound` unless market `id` exists: every `/api/markets/{id}/...` endpoint
 * answers 404 for an unknown market rather than an empty list.
 */
export const requireMarket = (id: bigint) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ one: number }>`select 1 as one from market where id = ${id.toString()}::numeric`).pipe(
    read,
    Effect.flatMap((rows) => (rows.length === 0 ? Effect.fail(marketNotFound(id)) : Effect.void))
  )
