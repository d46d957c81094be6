/**
 * The AMM: pool bindings from Hook_PoolRegistered, pool state from the pool manager, liquidity
 * positions and an append-only liquidity event log.
 *
 * Rule 5 lives here: pool-manager events (Initialize, Swap, ModifyLiquidity) change nothing
 * unless their pool id was registered through Hook_PoolRegistered before them.
 *
 * Invariants:
 * - pool state follows the spec: Initialize sets sqrtPriceX96 and tick (liquidity 0), Swap sets
 *   sqrtPriceX96, liquidity and tick, ModifyLiquidity adds its delta to liquidity;
 * - a liquidity position is keyed (pool, owner = the ModifyLiquidity sender, tickLower,
 *   tickUpper, salt), its liquidity is the sum of its deltas, and it exists exactly while that
 *   sum is positive (never negative: removing more than was added throws).
 */
import { yesPriceFromSqrt } from "../../schema/protocol/amm-price.js"
import type { DomainEventOf } from "../../schema/domain-events.js"
import type { Located, PoolRow } from "./model.js"
import { marketRow } from "./markets.js"
import { dropRow, getRow, putRow, rowKey } from "./rows.js"
import type { State } from "./state.js"

export const poolKey = (poolId: string) => rowKey(poolId)
export const lpKey = (poolId: string, owner: string, tickLower: number, tickUpper: number, salt: string) =>
  rowKey(poolId, owner, tickLower, tickUpper, salt)

export const onPoolRegistered = (s: State, e: DomainEventOf<"Hook_PoolRegistered">, at: Located): void => {
  const key = poolKey(e.poolId)
  const existing = getRow(s.rows.pools, key, "amm_pool")
  // A re-registration rebinds the pool; its state, if any, stays.
  putRow(
    s.rows.pools,
    key,
    {
      poolId: e.poolId,
      marketId: e.marketId,
      yesToken: e.yesToken,
      quoteToken: e.quoteToken,
      yesIsCurrency0: e.yesIsCurrency0,
      registeredAt: at.timestamp,
      registeredBlock: at.block,
      initialized: existing?.initialized ?? false,
      sqrtPriceX96: existing?.sqrtPriceX96 ?? null,
      liquidity: existing?.liquidity ?? 0n,
      tick: existing?.tick ?? null,
      fee: existing?.fee ?? null,
      tickSpacing: existing?.tickSpacing ?? null,
      updatedAt: at.timestamp,
      updatedBlock: at.block
    },
    "amm_pool"
  )
}

/** The registered pool of a pool-manager event, or undefined (rule 5: then the event is ignored). */
const registered = (s: State, poolId: string): PoolRow | undefined => getRow(s.rows.pools, poolKey(poolId), "amm_pool")

export const onInitialize = (s: State, e: DomainEventOf<"Initialize">, at: Located): void => {
  const pool = registered(s, e.id)
  if (pool === undefined) return
  Object.assign(pool, {
    initialized: true,
    sqrtPriceX96: e.sqrtPriceX96,
    tick: e.tick,
    fee: e.fee,
    tickSpacing: e.tickSpacing,
    updatedAt: at.timestamp,
    updatedBlock: at.block
  })
  // Until its first trade a market is priced at its pool's initial price.
  const market = marketRow(s, pool.marketId)
  if (market !== undefined && market.lastTradeAt === null && !market.isResolved)
    market.yesPrice = yesPriceFromSqrt(e.sqrtPriceX96, pool.yesIsCurrency0)
}

export const onSwap = (s: State, e: DomainEventOf<"Swap">, at: Located): void => {
  const pool = registered(s, e.id)
  if (pool === undefined) return
  Object.assign(pool, {
    sqrtPriceX96: e.sqrtPriceX96,
    liquidity: e.liquidity,
    tick: e.tick,
    updatedAt: at.timestamp,
    updatedBlock: at.block
  })
}

export const onModifyLiquidity = (s: State, e: DomainEventOf<"ModifyLiquidity">, at: Located): void => {
  const pool = registered(s, e.id)
  if (pool === undefined) return
  pool.liquidity += e.liquidityDelta
  pool.updatedAt = at.timestamp
  pool.updatedBlock = at.block
  s.logs.liquidityEvents.push({
    ...at,
    poolId: e.id,
    marketId: pool.marketId,
    owner: e.sender,
    tickLower: e.tickLower,
    tickUpper: e.tickUpper,
    salt: e.salt,
    liquidityDelta: e.liquidityDelta
  })
  if (e.liquidityDelta === 0n) return
  const key = lpKey(e.id, e.sender, e.tickLower, e.tickUpper, e.salt)
  const position = getRow(s.rows.lpPositions, key, "liquidity_position")
  const liquidity = (position?.liquidity ?? 0n) + e.liquidityDelta
  if (liquidity < 0n) throw new Error(`liquidity position ${key} would hold ${liquidity}`)
  if (liquidity === 0n) return dropRow(s.rows.lpPositions, key, "liquidity_position")
  putRow(
    s.rows.lpPositions,
    key,
    {
      poolId: e.id,
      owner: e.sender,
      tickLower: e.tickLower,
      tickUpper: e.tickUpper,
      salt: e.salt,
      marketId: pool.marketId,
      liquidity,
      updatedAt: at.timestamp
    },
    "liquidity_position"
  )
}
