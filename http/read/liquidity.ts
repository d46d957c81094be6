/** Reads of `liquidity_position` and `liquidity_event` (see `liquidity.ts`). */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Address, Bytes32 } from "../../schema/primitives.js"
import { chainPosition, chainPositionColumns } from "./records.js"
import { listPage, read } from "../core/db.js"
import { bigint, int, rowDecoder, text } from "../core/rows.js"

/** The records of these reads (decoded rows: bigint amounts, lowercase addresses and hashes). */
export interface LiquidityEventRecord {
  readonly type: "add" | "remove"
  readonly poolId: Bytes32
  readonly marketId: bigint
  readonly provider: Address
  readonly tickLower: number
  readonly tickUpper: number
  readonly salt: Bytes32
  readonly liquidityDelta: bigint
  readonly txHash: `0x${string}`
  readonly blockNumber: number
  readonly logIndex: number
  readonly timestamp: number
}

export interface LiquidityEventParams {
  readonly type?: "add" | "remove"
  readonly marketId?: bigint
  readonly provider?: Address
  readonly limit: number
  readonly offset: number
}

export interface LiquidityPositionRecord {
  readonly poolId: Bytes32
  readonly marketId: bigint
  readonly provider: Address
  readonly tickLower: number
  readonly tickUpper: number
  readonly salt: Bytes32
  readonly liquidity: bigint
  readonly updatedAt: number
}

export interface LiquidityPositionParams {
  readonly marketId?: bigint
  readonly limit: number
  readonly offset: number
}

const decodePositionRow = rowDecoder({
  pool_id: text<Bytes32>(),
  market_id: bigint,
  owner: text<Address>(),
  tick_lower: int,
  tick_upper: int,
  salt: text<Bytes32>(),
  liquidity: bigint,
  updated_at: int
})

const toPosition = (raw: unknown): LiquidityPositionRecord => {
  const row = decodePositionRow(raw)
  return {
    poolId: row.pool_id,
    marketId: row.market_id,
    provider: row.owner,
    tickLower: row.tick_lower,
    tickUpper: row.tick_upper,
    salt: row.salt,
    liquidity: row.liquidity,
    updatedAt: row.updated_at
  }
}

export const listLiquidityPositions = (provider: Address, query: LiquidityPositionParams) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const where = sql.and([
      sql`owner = ${provider}`,
      ...(query.marketId === undefined ? [] : [sql`market_id = ${query.marketId.toString()}::numeric`])
    ])
    return yield* listPage(
      {
        select: "pool_id, market_id, owner, tick_lower, tick_upper, salt, liquidity, updated_at",
        from: sql`liquidity_position where ${where}`,
        orderBy: "market_id, pool_id, tick_lower, tick_upper, salt",
        record: toPosition
      },
      query
    )
  }).pipe(read)

const decodeEventRow = rowDecoder({
  ...chainPositionColumns,
  pool_id: text<Bytes32>(),
  market_id: bigint,
  owner: text<Address>(),
  tick_lower: int,
  tick_upper: int,
  salt: text<Bytes32>(),
  liquidity_delta: bigint
})

const toEvent = (raw: unknown): LiquidityEventRecord => {
  const row = decodeEventRow(raw)
  return {
    ...chainPosition(row),
    type: row.liquidity_delta < 0n ? "remove" : "add",
    poolId: row.pool_id,
    marketId: row.market_id,
    provider: row.owner,
    tickLower: row.tick_lower,
    tickUpper: row.tick_upper,
    salt: row.salt,
    liquidityDelta: row.liquidity_delta
  }
}

export const listLiquidityEvents = (query: LiquidityEventParams) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const where = sql.and([
      ...(query.marketId === undefined ? [] : [sql`market_id = ${query.marketId.toString()}::numeric`]),
      ...(query.provider === undefined ? [] : [sql`owner = ${query.provider}`]),
      ...(query.type === undefined ? [] : [query.type === "add" ? sql`liquidity_delta > 0` : sql`liquidity_delta < 0`])
    ])
    return yield* listPage(
      {
        select: "block_number, log_index, tx_hash, timestamp, pool_id, market_id, owner, tick_lower, tick_upper, salt, liquidity_delta",
        from: sql`liquidity_event where ${where}`,
        orderBy: "block_number desc, log_index desc",
        record: toEvent
      },
      query
    )
  }).pipe(read)
