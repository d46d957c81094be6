/** Reads of `amm_pool` and `liquidity_position` for a market (see `market-amm.ts`). */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { NotFound } from "../../../schema/errors.js"
import type { Address, Bytes32 } from "../../../schema/primitives.js"
import type { AmmState, LiquidityRange } from "../market-amm.js"
import { yesPriceFromSqrt } from "../../../schema/amm-price.js"
import { pageOf, read } from "./db.js"
import { requireMarket } from "./markets.js"

export { yesPriceFromSqrt } from "../../../schema/amm-price.js"

interface PoolRow {
  readonly pool_id: string
  readonly market_id: string
  readonly yes_token: string
  readonly quote_token: string
  readonly yes_is_currency0: boolean
  readonly initialized: boolean
  readonly sqrt_price_x96: string | null
  readonly liquidity: string
  readonly tick: number | null
  readonly fee: number | null
  readonly tick_spacing: number | null
  readonly registered_at: string
  readonly registered_block: string
  readonly updated_at: string
  readonly updated_block: string
}

export const readAmmState = (marketId: bigint) =>
  Effect.gen(function* () {
    yield* requireMarket(marketId)
    const sql = yield* SqlClient.SqlClient
    // A market re-registered to another pool trades in the latest one.
    const [row] = yield* sql<PoolRow>`
      select * from amm_pool where market_id = ${marketId.toString()}::numeric
      order by registered_block desc, pool_id limit 1`
    if (row === undefined) return yield* Effect.fail(new NotFound({ message: `market ${marketId} has no registered AMM pool` }))
    const sqrt = row.sqrt_price_x96 === null ? null : BigInt(row.sqrt_price_x96)
    const state: AmmState = {
      poolId: row.pool_id as Bytes32,
      marketId,
      yesToken: row.yes_token as Address,
      quoteToken: row.quote_token as Address,
      yesIsCurrency0: row.yes_is_currency0,
      initialized: row.initialized,
      sqrtPriceX96: sqrt,
      liquidity: BigInt(row.liquidity),
      tick: row.tick,
      fee: row.fee,
      tickSpacing: row.tick_spacing,
      yesPrice: sqrt === null ? null : yesPriceFromSqrt(sqrt, row.yes_is_currency0),
      registeredAt: Number(row.registered_at),
      registeredBlock: Number(row.registered_block),
      updatedAt: Number(row.updated_at),
      updatedBlock: Number(row.updated_block)
    }
    return { data: state, meta: null }
  }).pipe(read)

export const listLiquidityRanges = (marketId: bigint, query: { readonly limit: number; readonly offset: number }) =>
  Effect.gen(function* () {
    yield* requireMarket(marketId)
    const sql = yield* SqlClient.SqlClient
    const ranges = sql`
      select l.pool_id, l.tick_lower, l.tick_upper, sum(l.liquidity) as liquidity, count(*) as positions,
             coalesce(p.tick >= l.tick_lower and p.tick < l.tick_upper, false) as in_range
      from liquidity_position l join amm_pool p on p.pool_id = l.pool_id
      where l.market_id = ${marketId.toString()}::numeric
      group by l.pool_id, l.tick_lower, l.tick_upper, p.tick`
    const page = yield* pageOf(
      sql<{ pool_id: string; tick_lower: number; tick_upper: number; liquidity: string; positions: string; in_range: boolean; total_count: string }>`
        select r.*, count(*) over () as total_count from (${ranges}) r
        order by r.pool_id, r.tick_lower, r.tick_upper limit ${query.limit} offset ${query.offset}`,
      sql<{ count: string }>`select count(*) as count from (${ranges}) r`,
      query.offset
    )
    const data = page.rows.map(
      (row): LiquidityRange => ({
        poolId: row.pool_id as Bytes32,
        tickLower: row.tick_lower,
        tickUpper: row.tick_upper,
        liquidity: BigInt(row.liquidity),
        positions: Number(row.positions),
        inRange: row.in_range
      })
    )
    return { data, meta: { limit: query.limit, offset: query.offset, count: page.count } }
  }).pipe(read)
