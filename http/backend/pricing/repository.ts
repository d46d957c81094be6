/**
 * What a quote or a pricing view needs of one market: its pool, its live orders in queue order
 * and the hook's and exchange's pause flags, read in one statement so they belong to the same
 * indexed block.
 *
 * Queue order: the exchange fills a price level first-in first-out. Orders are listed by the
 * block they were placed in; orders placed in the same block at the same price are ordered by id
 * (the index keeps no log index for placements: the one case where the quote may pick another
 * maker than the chain would, with the same price).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { HEAD_TIME_SQL, TRADING_PAUSED_SQL } from "../../../schema/market-status.js"
import type { BookOrder, PoolState } from "../../../schema/protocol/router-math.js"
import { read } from "../../core/db.js"
import { prepared } from "../../core/prepared.js"
import { bool, int, json, nullable, rowDecoder, text } from "../../core/rows.js"
import type { ChainNow } from "../markets/repository.js"
import { MARKET_COLUMNS, MARKET_FROM, toMarket, type MarketRecord } from "../../read/markets.js"

export interface QuoteState {
  readonly pool: PoolState | undefined
  readonly book: ReadonlyArray<BookOrder>
  readonly hookPaused: boolean
  /** The exchange is paused: the router's CLOB leg fails and it trades on the AMM alone. */
  readonly exchangePaused: boolean
}

/** The hook's and the exchange's pause flags at the indexed head (pause_state rows, absent = never paused). */
const VENUE_PAUSES = `select coalesce(bool_or(paused) filter (where scope = 'hook'), false) as hook,
  coalesce(bool_or(paused) filter (where scope = 'exchange'), false) as exchange
  from pause_state where scope in ('hook', 'exchange')`

const POOL_OF = `select initialized, sqrt_price_x96, liquidity, yes_is_currency0 from amm_pool where market_id = $1::numeric
  order by registered_block desc, pool_id limit 1`

/** The pool's columns of a row that left-joined `POOL_OF` as `pool` (selected by `POOL_SELECT`), for a `rowDecoder`. */
const POOL_COLUMNS = {
  has_pool: bool,
  initialized: nullable(bool),
  sqrt_price_x96: nullable(text()),
  liquidity: nullable(text()),
  yes_is_currency0: nullable(bool)
}

const POOL_SELECT = `pool.initialized is not null as has_pool, pool.initialized, pool.sqrt_price_x96::text, pool.liquidity::text, pool.yes_is_currency0`

/** The pool of such a row (`has_pool` false: the market has none). */
const poolOf = (row: {
  readonly [K in keyof typeof POOL_COLUMNS]: ReturnType<(typeof POOL_COLUMNS)[K]>
}): PoolState | undefined =>
  row.has_pool
    ? {
        initialized: row.initialized === true && row.sqrt_price_x96 !== null,
        sqrtPriceX96: BigInt(row.sqrt_price_x96 ?? 0),
        liquidity: BigInt(row.liquidity ?? 0),
        yesIsCurrency0: row.yes_is_currency0 === true
      }
    : undefined

/** Per side of the book (0..3): best price, open shares, levels. */
export interface SideSummary {
  readonly best: bigint | null
  readonly shares: bigint
  readonly levels: number
}

/** One side's summary as `readViewState` reads it: side (0..3), best price, open shares (text: uint256), levels. */
type SideEntry = readonly [side: number, best: string, shares: string, levels: number]

const decodeViewRow = rowDecoder({
  ...POOL_COLUMNS,
  sides: json<ReadonlyArray<SideEntry>>()
})

/**
 * The pool and the book's per-side summary (from the aggregated levels), in one prepared
 * statement (one snapshot, one round trip; it was two statements on two connections). Prices and
 * shares travel as JSON strings, never JSON numbers.
 */
const VIEW_STATE_SQL = prepared(`
  select ${POOL_SELECT},
         (select coalesce(json_agg(json_build_array(s.side, s.best::text, s.shares::text, s.levels)), '[]')
          from (select side, case when side in (0, 2) then max(price) else min(price) end as best, sum(amount) as shares, count(*) as levels
                from order_book_level where market_id = $1::numeric group by side) s) as sides
  from (select 1) one
  left join lateral (${POOL_OF}) pool on true`)

/** The view's state of a row read by `VIEW_STATE_SQL` (or a statement wrapping it). */
const viewStateOf = (raw: unknown) => {
  const row = decodeViewRow(raw)
  const summary: Array<SideSummary> = [0, 1, 2, 3].map((side) => {
    const entry = row.sides.find(([s]) => s === side)
    return entry === undefined
      ? { best: null, shares: 0n, levels: 0 }
      : { best: BigInt(entry[1]), shares: BigInt(entry[2]), levels: Number(entry[3]) }
  })
  return { pool: poolOf(row), sides: summary }
}

export type ViewState = ReturnType<typeof viewStateOf>

/** The pool and the book's per-side summary: what a pricing view shows. */
export const readViewState = (marketId: bigint) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql.unsafe(VIEW_STATE_SQL, [marketId.toString()])
    return viewStateOf(rows[0])
  }).pipe(read)

/**
 * A market by id (the market lookup's columns, `http/read/markets.ts`) beside a state statement
 * that reads one row for the same id (`$1`): one statement, so one round trip and one snapshot
 * where the market and its state were two of each. The market's columns are null when there is no
 * such market (the state's row is there whatever the id). No column of the two has the same name.
 */
const withMarket = (state: string) =>
  prepared(`select mk.*, st.* from (${state}) st
  left join lateral (select ${MARKET_COLUMNS} from ${MARKET_FROM} where m.id = $1::numeric) mk on true`)

/** The market of a `withMarket` row, undefined when the id names none. */
const marketOf = (row: unknown): MarketRecord | undefined =>
  (row as { readonly id: unknown } | undefined)?.id == null ? undefined : toMarket(row)

const MARKET_VIEW_STATE_SQL = withMarket(VIEW_STATE_SQL)

/** The market with this id (undefined: none) and its view state, in one statement. */
export const readMarketViewState = (marketId: bigint) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql.unsafe(MARKET_VIEW_STATE_SQL, [marketId.toString()])
    return { market: marketOf(rows[0]), view: viewStateOf(rows[0]) }
  }).pipe(read)

/** What `readQuoteState` reads of one order: id, side, price and remaining amount, as text (uint256 ids and amounts). */
type BookEntry = readonly [id: string, side: number, price: string, remaining: string]

const decodeQuoteRow = rowDecoder({
  head_time: int,
  paused: bool,
  exchange_paused: bool,
  hook_paused: bool,
  ...POOL_COLUMNS,
  book: json<ReadonlyArray<BookEntry>>()
})

/**
 * Everything a quote reads at the indexed head, in one statement (so one snapshot, one round
 * trip): the chain's time and pauses (`ChainNow`, read afresh rather than per head as heard of, so
 * the quote's fee is the head's to the raw unit even before the head's NOTIFY arrives), the pool,
 * the live orders in queue order and the hook's and exchange's pause flags. Amounts and ids travel
 * as JSON strings, never JSON numbers, so nothing passes through a JS number.
 */
const QUOTE_STATE_SQL = prepared(`
  select ${HEAD_TIME_SQL} as head_time,
         ${TRADING_PAUSED_SQL} as paused,
         v.exchange as exchange_paused, v.hook as hook_paused,
         ${POOL_SELECT},
         (select coalesce(json_agg(json_build_array(o.id::text, o.side, o.price::text, (o.amount - o.filled)::text) order by o.placed_block, o.id), '[]')
          from exchange_order o
          where o.market_id = $1::numeric and o.status in ('OPEN', 'PARTIALLY_FILLED') and o.amount > o.filled) as book
  from (${VENUE_PAUSES}) v
  left join lateral (${POOL_OF}) pool on true`)

/** The chain's moment and the quote's state of a row read by `QUOTE_STATE_SQL` (or a statement wrapping it). */
const quoteStateOf = (raw: unknown) => {
  const row = decodeQuoteRow(raw)
  const now: ChainNow = { time: row.head_time, paused: row.paused, exchangePaused: row.exchange_paused }
  const state: QuoteState = {
    pool: poolOf(row),
    book: row.book.map(([id, side, price, remaining]) => ({ id, side, price: BigInt(price), remaining: BigInt(remaining) })),
    hookPaused: row.hook_paused,
    exchangePaused: row.exchange_paused
  }
  return { now, state }
}

export const readQuoteState = (marketId: bigint) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql.unsafe(QUOTE_STATE_SQL, [marketId.toString()])
    return quoteStateOf(rows[0])
  }).pipe(read)

const MARKET_QUOTE_STATE_SQL = withMarket(QUOTE_STATE_SQL)

/** The market with this id (undefined: none) and what a quote reads at the indexed head, in one statement. */
export const readMarketQuoteState = (marketId: bigint) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql.unsafe(MARKET_QUOTE_STATE_SQL, [marketId.toString()])
    return { market: marketOf(rows[0]), ...quoteStateOf(rows[0]) }
  }).pipe(read)
