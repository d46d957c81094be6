/** Reads of `amm_pool` and `liquidity_position` for a market (see `market-amm.ts`). */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { NotFound } from "../../schema/errors.js"
import type { Address, Bytes32 } from "../../schema/primitives.js"
import { yesPriceFromSqrt } from "../../schema/protocol/amm-price.js"
import { listPage, read, type Paging } from "../core/db.js"
import { requireMarket } from "./markets.js"
import { bigint, bool, int, nullable, rowDecoder, text } from "../core/rows.js"

/** The records of these reads (decoded rows: bigint amounts, lowercase addresses and hashes). */
export interface AmmStateRecord {
  readonly poolId: Bytes32
  readonly marketId: bigint
  readonly yesToken: Address
  readonly quoteToken: Address
  readonly yesIsCurrency0: boolean
  readonly initialized: boolean
  readonly sqrtPriceX96: bigint | null
  readonly liquidity: bigint
  readonly tick: number | null
  readonly fee: number | null
  readonly tickSpacing: number | null
  readonly yesPrice: bigint | null
  readonly registeredAt: number
  readonly registeredBlock: number
  readonly updatedAt: number
  readonly updatedBlock: number
}

export interface LiquidityRangeRecord {
  readonly poolId: Bytes32
  readonly liquidity: bigint
  readonly tickLower: number
  readonly tickUpper: number
  readonly positions: number
  readonly inRange: boolean
}

export { yesPriceFromSqrt } from "../../schema/protocol/amm-price.js"

const decodePoolRow = rowDecoder({
  pool_id: text<Bytes32>(),
  yes_token: text<Address>(),
  quote_token: text<Address>(),
  yes_is_currency0: bool,
  initialized: bool,
  sqrt_price_x96: nullable(bigint),
  liquidity: bigint,
  tick: nullable(int),
  fee: nullable(int),
  tick_spacing: nullable(int),
  registered_at: int,
  registered_block: int,
  updated_at: int,
  updated_block: int
})

const decodeRangeRow = rowDecoder({
  pool_id: text<Bytes32>(),
  tick_lower: int,
  tick_upper: int,
  liquidity: bigint,
  positions: int,
  in_range: bool
})

export const readAmmState = (marketId: bigint) =>
  Effect.gen(function* () {
    yield* requireMarket(marketId)
    const sql = yield* SqlClient.SqlClient
    // A market re-registered to another pool trades in the latest one.
    const [raw] = yield* sql`
      select * from amm_pool where market_id = ${marketId.toString()}::numeric
      order by registered_block desc, pool_id limit 1`
    if (raw === undefined) return yield* Effect.fail(new NotFound({ message: `market ${marketId} has no registered AMM pool` }))
    const row = decodePoolRow(raw)
    const sqrt = row.sqrt_price_x96
    const state: AmmStateRecord = {
      poolId: row.pool_id,
      marketId,
      yesToken: row.yes_token,
      quoteToken: row.quote_token,
      yesIsCurrency0: row.yes_is_currency0,
      initialized: row.initialized,
      sqrtPriceX96: sqrt,
      liquidity: row.liquidity,
      tick: row.tick,
      fee: row.fee,
      tickSpacing: row.tick_spacing,
      yesPrice: sqrt === null ? null : yesPriceFromSqrt(sqrt, row.yes_is_currency0),
      registeredAt: row.registered_at,
      registeredBlock: row.registered_block,
      updatedAt: row.updated_at,
      updatedBlock: row.updated_block
    }
    return { data: state, meta: null }
  }).pipe(read)

export const listLiquidityRanges = (marketId: bigint, query: Paging) =>
  Effect.gen(function* () {
    yield* requireMarket(marketId)
    const sql = yield* SqlClient.SqlClient
    const ranges = sql`
      select l.pool_id, l.tick_lower, l.tick_upper, sum(l.liquidity) as liquidity, count(*) as positions,
             coalesce(p.tick >= l.tick_lower and p.tick < l.tick_upper, false) as in_range
      from liquidity_position l join amm_pool p on p.pool_id = l.pool_id
      where l.market_id = ${marketId.toString()}::numeric
      group by l.pool_id, l.tick_lower, l.tick_upper, p.tick`
    return yield* listPage(
      {
        select: "r.*",
        from: sql`(${ranges}) r`,
        orderBy: "r.pool_id, r.tick_lower, r.tick_upper",
        record: (raw): LiquidityRangeRecord => {
          const row = decodeRangeRow(raw)
          return {
            poolId: row.pool_id,
            tickLower: row.tick_lower,
            tickUpper: row.tick_upper,
            liquidity: row.liquidity,
            positions: row.positions,
            inRange: row.in_range
          }
        }
      },
      query
    )
  }).pipe(read)
