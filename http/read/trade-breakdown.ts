/** Reads of one transaction's `trade`, `taker_fill` and `order_match` rows (see `trade-breakdown.ts`). */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { NotFound } from "../../schema/errors.js"
import type { Address, TxHash } from "../../schema/primitives.js"
import { read } from "../core/db.js"
import { MATCH_COLUMNS, toMatch } from "./exchange.js"
import { toTrade } from "./market-trades.js"

/** The records of these reads (decoded rows: bigint amounts, lowercase addresses and hashes). */
export interface TradeBreakdownRecord {
  readonly txHash: TxHash
  readonly blockNumber: number
  readonly timestamp: number
  readonly amountOut: bigint
  readonly clobFilled: bigint
  readonly ammFilled: bigint
  readonly trades: readonly {
    readonly txHash: `0x${string}`
    readonly blockNumber: number
    readonly timestamp: number
    readonly source: "router" | "clob"
    readonly marketId: bigint
    readonly trader: Address
    readonly recipient: Address
    readonly tradeType: "BUY_YES" | "SELL_YES" | "BUY_NO" | "SELL_NO"
    readonly outcome: "YES" | "NO"
    readonly isBuy: boolean
    readonly amountIn: bigint
    readonly amountOut: bigint
    readonly clobFilled: bigint
    readonly ammFilled: bigint
    readonly price: bigint | null
    readonly matchCount: number | null
    readonly logIndex: number
  }[]
  readonly matches: readonly {
    readonly txHash: `0x${string}`
    readonly blockNumber: number
    readonly timestamp: number
    readonly marketId: bigint
    readonly price: bigint
    readonly logIndex: number
    readonly makerOrderId: `0x${string}`
    readonly takerOrderId: `0x${string}`
    readonly maker: Address | null
    readonly makerSide: "BUY_YES" | "SELL_YES" | "BUY_NO" | "SELL_NO" | null
    readonly taker: Address | null
    readonly matchType: "COMPLEMENTARY" | "MINT" | "MERGE"
    readonly amount: bigint
    readonly makerBuilder: `0x${string}` | null
    readonly takerBuilder: `0x${string}` | null
  }[]
  readonly clobShare: bigint | null
}

export const readTradeBreakdown = (txHash: TxHash) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [trades, matches] = yield* Effect.all(
      [
        // Router trades, and taker fills that are no router trade's CLOB leg (as in the market trade list).
        sql`
          select x.* from (
            select 'router' as source, t.block_number, t.log_index, t.tx_hash, t.timestamp, t.market_id, t.trader, t.recipient,
                   t.trade_type, t.amount_in, t.amount_out, t.clob_filled, t.amm_filled, null::numeric as match_count
            from trade t where t.tx_hash = ${txHash}
            union all
            select 'clob', f.block_number, f.log_index, f.tx_hash, f.timestamp, f.market_id, f.taker, f.recipient,
                   f.taker_side, f.total_cost, f.total_filled, f.total_filled, 0, f.match_count
            from taker_fill f where f.tx_hash = ${txHash}
              and not exists (select 1 from trade t where t.tx_hash = f.tx_hash and t.market_id = f.market_id)
          ) x order by x.block_number, x.log_index`,
        sql`select ${sql.literal(MATCH_COLUMNS)} from order_match where tx_hash = ${txHash} order by block_number, log_index`
      ],
      { concurrency: 2 }
    )
    const records = trades.map(toTrade)
    const matchRecords = matches.map(toMatch)
    const first = records[0] ?? matchRecords[0]
    if (first === undefined) return yield* Effect.fail(new NotFound({ message: `no trade or order match in transaction ${txHash}` }))
    const amountOut = records.reduce((sum, t) => sum + t.amountOut, 0n)
    const clobFilled = records.reduce((sum, t) => sum + t.clobFilled, 0n)
    const breakdown: TradeBreakdownRecord = {
      txHash,
      blockNumber: first.blockNumber,
      timestamp: first.timestamp,
      trades: records,
      matches: matchRecords,
      amountOut,
      clobFilled,
      ammFilled: records.reduce((sum, t) => sum + t.ammFilled, 0n),
      clobShare: amountOut === 0n ? null : (clobFilled * 1_000_000n) / amountOut
    }
    return { data: breakdown, meta: null }
  }).pipe(read)
