/**
 * What a quote or a pricing view needs of one market: its pool, its live orders in queue order
 * and the pause flags, read in one transaction so they belong to the same indexed block.
 *
 * Queue order: the exchange fills a price level first-in first-out. Orders are listed by the
 * block they were placed in; orders placed in the same block at the same price are ordered by id
 * (the index keeps no log index for placements: the one case where the quote may pick another
 * maker than the chain would, with the same price).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { BookOrder, PoolState } from "../../../schema/router-math.js"
import { read } from "../../indexer/queries/db.js"

export interface QuoteState {
  readonly pool: PoolState | undefined
  readonly book: ReadonlyArray<BookOrder>
  readonly hookPaused: boolean
}

export const readQuoteState = (marketId: bigint) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const id = marketId.toString()
    return yield* sql.withTransaction(
      Effect.gen(function* () {
        const pools = yield* sql<{ initialized: boolean; sqrt_price_x96: string | null; liquidity: string; yes_is_currency0: boolean }>`
          select initialized, sqrt_price_x96, liquidity, yes_is_currency0 from amm_pool where market_id = ${id}::numeric
          order by registered_block desc, pool_id limit 1`
        const orders = yield* sql<{ id: string; side: number; price: string; remaining: string }>`
          select id, side, price, amount - filled as remaining from exchange_order
          where market_id = ${id}::numeric and status in ('OPEN', 'PARTIALLY_FILLED') and amount > filled
          order by placed_block, id`
        const hook = yield* sql<{ paused: boolean }>`select exists (select 1 from pause_state where scope = 'hook' and paused) as paused`
        const row = pools[0]
        const pool: PoolState | undefined =
          row === undefined
            ? undefined
            : {
                initialized: row.initialized && row.sqrt_price_x96 !== null,
                sqrtPriceX96: BigInt(row.sqrt_price_x96 ?? 0),
                liquidity: BigInt(row.liquidity),
                yesIsCurrency0: row.yes_is_currency0
              }
        return {
          pool,
          book: orders.map((o) => ({ id: o.id, side: o.side, price: BigInt(o.price), remaining: BigInt(o.remaining) })),
          hookPaused: hook[0]?.paused === true
        } satisfies QuoteState
      })
    )
  }).pipe(read)
