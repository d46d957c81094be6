/** Reads of `trade` and `taker_fill` for `/api/markets/{id}/trades` (see `market-trades.ts`). */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { isBuy, outcomeSide, TradeType } from "../../../schema/enums.js"
import type { Address } from "../../../schema/primitives.js"
import { PRICE_SCALE } from "../../../schema/primitives.js"
import type { Trade, TradeListQuery } from "../market-trades.js"
import { chainPosition, type ChainPositionRow } from "../records.js"
import { pageOf, read } from "./db.js"
import { requireMarket } from "./markets.js"

export interface TradeRow extends ChainPositionRow {
  readonly source: "router" | "clob"
  readonly market_id: string
  readonly trader: string
  readonly recipient: string
  readonly trade_type: number
  readonly amount_in: string
  readonly amount_out: string
  readonly clob_filled: string
  readonly amm_filled: string
  readonly match_count: string | null
}

/**
 * USDC per share of the traded token: buys pay amountIn USDC for amountOut shares, sells give
 * amountIn shares for amountOut USDC. Rounded down; within 0..1 (the router never pays more than
 * 1 USDC per share, and a clamp keeps a record valid if it ever did). Null when no shares moved.
 */
export const tradePrice = (buy: boolean, amountIn: bigint, amountOut: bigint): bigint | null => {
  const [usdc, shares] = buy ? [amountIn, amountOut] : [amountOut, amountIn]
  if (shares === 0n) return null
  const price = (usdc * PRICE_SCALE) / shares
  return price > PRICE_SCALE ? PRICE_SCALE : price
}

export const toTrade = (row: TradeRow): Trade => {
  const tradeType = TradeType.names[row.trade_type] ?? "BUY_YES"
  const buy = isBuy(tradeType)
  const amountIn = BigInt(row.amount_in)
  const amountOut = BigInt(row.amount_out)
  return {
    source: row.source,
    ...chainPosition(row),
    marketId: BigInt(row.market_id),
    trader: row.trader as Address,
    recipient: row.recipient as Address,
    tradeType,
    outcome: outcomeSide(tradeType),
    isBuy: buy,
    amountIn,
    amountOut,
    clobFilled: BigInt(row.clob_filled),
    ammFilled: BigInt(row.amm_filled),
    price: tradePrice(buy, amountIn, amountOut),
    matchCount: row.match_count === null ? null : BigInt(row.match_count)
  }
}

export const listMarketTrades = (marketId: bigint, query: TradeListQuery) =>
  Effect.gen(function* () {
    yield* requireMarket(marketId)
    const sql = yield* SqlClient.SqlClient
    const id = marketId.toString()
    const router = sql`
      select 'router' as source, t.block_number, t.log_index, t.tx_hash, t.timestamp, t.market_id, t.trader, t.recipient,
             t.trade_type, t.amount_in, t.amount_out, t.clob_filled, t.amm_filled, null::numeric as match_count
      from trade t
      where t.market_id = ${id}::numeric ${query.trader === undefined ? sql`` : sql`and t.trader = ${query.trader}`}`
    // A fill whose transaction has a router trade of this market is that trade's CLOB leg.
    const clob = sql`
      select 'clob' as source, f.block_number, f.log_index, f.tx_hash, f.timestamp, f.market_id, f.taker, f.recipient,
             f.taker_side, f.total_cost, f.total_filled, f.total_filled, 0::numeric, f.match_count
      from taker_fill f
      where f.market_id = ${id}::numeric ${query.trader === undefined ? sql`` : sql`and f.taker = ${query.trader}`}
        and not exists (select 1 from trade t where t.tx_hash = f.tx_hash and t.market_id = f.market_id)`
    const union =
      query.source === "router" ? router : query.source === "clob" ? clob : sql`${router} union all ${clob}`
    const page = yield* pageOf(
      sql<TradeRow & { total_count: string }>`
        select x.*, count(*) over () as total_count from (${union}) x
        order by x.block_number desc, x.log_index desc limit ${query.limit} offset ${query.offset}`,
      sql<{ count: string }>`select count(*) as count from (${union}) x`,
      query.offset
    )
    return { data: page.rows.map(toTrade), meta: { limit: query.limit, offset: query.offset, count: page.count } }
  }).pipe(read)
