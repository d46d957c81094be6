/**
 * What a quote or a pricing view needs of one market: its pool, its live orders in queue order
 * and the hook's and exchange's pause flags, read in one transaction so they belong to the same
 * indexed block.
 *
 * Queue order: the exchange fills a price level first-in first-out. Orders are listed by the
 * block they were placed in; orders placed in the same block at the same price are ordered by id
 * (the index keeps no log index for placements: the one case where the quote may pick another
 * maker than the chain would, with the same price).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { BookOrder, PoolState } from "../../../schema/protocol/router-math.js"
import { read } from "../../core/db.js"

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

interface VenuePauses {
  readonly hook: boolean
  readonly exchange: boolean
}

const POOL_OF = `select initialized, sqrt_price_x96, liquidity, yes_is_currency0 from amm_pool where market_id = $1::numeric
  order by registered_block desc, pool_id limit 1`

interface PoolRow {
  readonly initialized: boolean
  readonly sqrt_price_x96: string | null
  readonly liquidity: string
  readonly yes_is_currency0: boolean
}

const toPool = (row: PoolRow | undefined): PoolState | undefined =>
  row === undefined
    ? undefined
    : {
        initialized: row.initialized && row.sqrt_price_x96 !== null,
        sqrtPriceX96: BigInt(row.sqrt_price_x96 ?? 0),
        liquidity: BigInt(row.liquidity),
        yesIsCurrency0: row.yes_is_currency0
      }

/** Per side of the book (0..3): best price, open shares, levels. */
export interface SideSummary {
  readonly best: bigint | null
  readonly shares: bigint
  readonly levels: number
}

/** The pool and the book's per-side summary (from the aggregated levels): what a pricing view shows. */
export const readViewState = (marketId: bigint) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const id = marketId.toString()
    const [pools, sides] = yield* Effect.all(
      [
        sql.unsafe<PoolRow>(POOL_OF, [id]),
        sql<{ side: number; best: string; shares: string; levels: string }>`
          select side, case when side in (0, 2) then max(price) else min(price) end as best, sum(amount) as shares, count(*) as levels
          from order_book_level where market_id = ${id}::numeric group by side`
      ],
      { concurrency: 2 }
    )
    const summary: Array<SideSummary> = [0, 1, 2, 3].map((side) => {
      const row = sides.find((r) => r.side === side)
      return row === undefined
        ? { best: null, shares: 0n, levels: 0 }
        : { best: BigInt(row.best), shares: BigInt(row.shares), levels: Number(row.levels) }
    })
    return { pool: toPool(pools[0]), sides: summary }
  }).pipe(read)

export const readQuoteState = (marketId: bigint) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const id = marketId.toString()
    return yield* sql.withTransaction(
      Effect.gen(function* () {
        const pools = yield* sql.unsafe<PoolRow>(POOL_OF, [id])
        const orders = yield* sql<{ id: string; side: number; price: string; remaining: string }>`
          select id, side, price, amount - filled as remaining from exchange_order
          where market_id = ${id}::numeric and status in ('OPEN', 'PARTIALLY_FILLED') and amount > filled
          order by placed_block, id`
        const pauses = yield* sql.unsafe<VenuePauses>(VENUE_PAUSES)
        return {
          pool: toPool(pools[0]),
          book: orders.map((o) => ({ id: o.id, side: o.side, price: BigInt(o.price), remaining: BigInt(o.remaining) })),
          hookPaused: pauses[0]?.hook === true,
          exchangePaused: pauses[0]?.exchange === true
        } satisfies QuoteState
      })
    )
  }).pipe(read)
