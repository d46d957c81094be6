/** Reads of `liquidity_position` and `liquidity_event` (see `liquidity.ts`). */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Address, Bytes32 } from "../../../schema/primitives.js"
import type { LiquidityEvent, LiquidityEventQuery, LiquidityPosition, LiquidityPositionQuery } from "../liquidity.js"
import { chainPosition, type ChainPositionRow } from "../records.js"
import { pageOf, read } from "./db.js"

export const listLiquidityPositions = (provider: Address, query: LiquidityPositionQuery) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const where = sql.and([
      sql`owner = ${provider}`,
      ...(query.marketId === undefined ? [] : [sql`market_id = ${query.marketId.toString()}::numeric`])
    ])
    const page = yield* pageOf(
      sql<{ pool_id: string; market_id: string; owner: string; tick_lower: number; tick_upper: number; salt: string; liquidity: string; updated_at: string; total_count: string }>`
        select pool_id, market_id, owner, tick_lower, tick_upper, salt, liquidity, updated_at, count(*) over () as total_count
        from liquidity_position where ${where}
        order by market_id, pool_id, tick_lower, tick_upper, salt limit ${query.limit} offset ${query.offset}`,
      sql<{ count: string }>`select count(*) as count from liquidity_position where ${where}`,
      query.offset
    )
    const data = page.rows.map(
      (row): LiquidityPosition => ({
        poolId: row.pool_id as Bytes32,
        marketId: BigInt(row.market_id),
        provider: row.owner as Address,
        tickLower: row.tick_lower,
        tickUpper: row.tick_upper,
        salt: row.salt as Bytes32,
        liquidity: BigInt(row.liquidity),
        updatedAt: Number(row.updated_at)
      })
    )
    return { data, meta: { limit: query.limit, offset: query.offset, count: page.count } }
  }).pipe(read)

interface EventRow extends ChainPositionRow {
  readonly pool_id: string
  readonly market_id: string
  readonly owner: string
  readonly tick_lower: number
  readonly tick_upper: number
  readonly salt: string
  readonly liquidity_delta: string
}

export const listLiquidityEvents = (query: LiquidityEventQuery) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const where = sql.and([
      ...(query.marketId === undefined ? [] : [sql`market_id = ${query.marketId.toString()}::numeric`]),
      ...(query.provider === undefined ? [] : [sql`owner = ${query.provider}`]),
      ...(query.type === undefined ? [] : [query.type === "add" ? sql`liquidity_delta > 0` : sql`liquidity_delta < 0`])
    ])
    const page = yield* pageOf(
      sql<EventRow & { total_count: string }>`
        select block_number, log_index, tx_hash, timestamp, pool_id, market_id, owner, tick_lower, tick_upper, salt, liquidity_delta,
               count(*) over () as total_count
        from liquidity_event where ${where}
        order by block_number desc, log_index desc limit ${query.limit} offset ${query.offset}`,
      sql<{ count: string }>`select count(*) as count from liquidity_event where ${where}`,
      query.offset
    )
    const data = page.rows.map((row): LiquidityEvent => {
      const delta = BigInt(row.liquidity_delta)
      return {
        ...chainPosition(row),
        type: delta < 0n ? "remove" : "add",
        poolId: row.pool_id as Bytes32,
        marketId: BigInt(row.market_id),
        provider: row.owner as Address,
        tickLower: row.tick_lower,
        tickUpper: row.tick_upper,
        salt: row.salt as Bytes32,
        liquidityDelta: delta
      }
    })
    return { data, meta: { limit: query.limit, offset: query.offset, count: page.count } }
  }).pipe(read)
