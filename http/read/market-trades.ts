/** Reads of `trade` and `taker_fill` for `/api/markets/{id}/trades` (see `market-trades.ts`). */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { isBuy, outcomeSide, TradeType } from "../../schema/enums.js"
import type { Address } from "../../schema/primitives.js"
import { PRICE_SCALE } from "../../schema/primitives.js"
import { chainPosition, chainPositionColumns } from "./records.js"
import { listPage, read, type ListQuery } from "../core/db.js"
import { requireMarket } from "./markets.js"
import { bigint, int, nullable, oneOf, rowDecoder, text } from "../core/rows.js"

/** The records of these reads (decoded rows: bigint amounts, lowercase addresses and hashes). */
export interface TradeRecord {
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
  readonly txHash: `0x${string}`
  readonly blockNumber: number
  readonly logIndex: number
  readonly timestamp: number
}

export interface TradeListParams {
  readonly source?: "router" | "clob"
  readonly trader?: Address
  readonly limit: number
  readonly offset: number
}

const decodeTradeRow = rowDecoder({
  ...chainPositionColumns,
  source: oneOf("router", "clob"),
  market_id: bigint,
  trader: text<Address>(),
  recipient: text<Address>(),
  trade_type: int,
  amount_in: bigint,
  amount_out: bigint,
  clob_filled: bigint,
  amm_filled: bigint,
  match_count: nullable(int)
})

/**
 * USDC per share of the traded token: buys pay amountIn USDC for amountOut shares, sells give
 * amountIn shares for amountOut USDC. Rounded down and never clamped: a buy that paid, or a sell
 * that received, more than 1 USDC per share (a pool priced above the split) shows that true ratio
 * (schema `TradePrice`). Null when no shares moved.
 */
export const tradePrice = (buy: boolean, amountIn: bigint, amountOut: bigint): bigint | null => {
  const [usdc, shares] = buy ? [amountIn, amountOut] : [amountOut, amountIn]
  if (shares === 0n) return null
  return (usdc * PRICE_SCALE) / shares
}

/** The trade record of a row with the columns of the trade lists (`source`, the chain position, the trade's own). */
export const toTrade = (raw: unknown): TradeRecord => {
  const row = decodeTradeRow(raw)
  const tradeType = TradeType.names[row.trade_type] ?? "BUY_YES"
  const buy = isBuy(tradeType)
  return {
    source: row.source,
    ...chainPosition(row),
    marketId: row.market_id,
    trader: row.trader,
    recipient: row.recipient,
    tradeType,
    outcome: outcomeSide(tradeType),
    isBuy: buy,
    amountIn: row.amount_in,
    amountOut: row.amount_out,
    clobFilled: row.clob_filled,
    ammFilled: row.amm_filled,
    price: tradePrice(buy, row.amount_in, row.amount_out),
    matchCount: row.match_count
  }
}

const ZERO_ORDER_ID = `0x${"0".repeat(64)}`

/**
 * The taker side of every match of a limit order that crossed the book (its takerOrderId is the
 * new order's): side and owner from the taker's order; USDC at the maker's price for a
 * COMPLEMENTARY match and at the taker's own limit price for MINT and MERGE (the exchange sends
 * the surplus over $1 to the fee recipient), rounded down, as the position ledger counts it.
 * Such fills add no volume (spec rule 1): only router trades do.
 */
export const takerFillsSource = (sql: SqlClient.SqlClient, marketId: string) => sql`(
  select x.*,
         case when x.taker_side in (0, 2) then x.usdc else x.amount end as amount_in,
         case when x.taker_side in (0, 2) then x.amount else x.usdc end as amount_out
  from (
    select m.block_number, m.log_index, m.tx_hash, m.timestamp, m.market_id, o.owner as taker, o.side as taker_side, m.amount,
           trunc(m.amount * (case when m.match_type = 0 then m.price else o.price end) / 1000000) as usdc
    from order_match m join exchange_order o on o.id = m.taker_order_id
    where m.market_id = ${marketId}::numeric and m.taker_order_id <> ${ZERO_ORDER_ID}
  ) x
)`

/** The trades of a market, newest first, as a list query (filtered by `query`'s source and trader). */
export const marketTradesQuery = (
  sql: SqlClient.SqlClient,
  marketId: bigint,
  query: Omit<TradeListParams, "limit" | "offset">
): ListQuery<TradeRecord> => {
  const id = marketId.toString()
  const router = sql`
      select 'router' as source, t.block_number, t.log_index, t.tx_hash, t.timestamp, t.market_id, t.trader, t.recipient,
             t.trade_type, t.amount_in, t.amount_out, t.clob_filled, t.amm_filled, null::numeric as match_count
      from trade t
      where t.market_id = ${id}::numeric ${query.trader === undefined ? sql`` : sql`and t.trader = ${query.trader}`}`
  // A market order's fills (TakerFilled), unless its transaction has a router trade of this
  // market: then it is that trade's CLOB leg.
  const market = sql`
      select 'clob' as source, f.block_number, f.log_index, f.tx_hash, f.timestamp, f.market_id, f.taker as trader, f.recipient,
             f.taker_side as trade_type, f.total_cost as amount_in, f.total_filled as amount_out, f.total_filled as clob_filled,
             0::numeric as amm_filled, f.match_count
      from taker_fill f
      where f.market_id = ${id}::numeric ${query.trader === undefined ? sql`` : sql`and f.taker = ${query.trader}`}
        and not exists (select 1 from trade t where t.tx_hash = f.tx_hash and t.market_id = f.market_id)`
  // A limit order that crossed the book: one fill per match, on the taker's side, at the price
  // the taker paid (see takerFillsSource).
  const limit = sql`
      select 'clob' as source, f.block_number, f.log_index, f.tx_hash, f.timestamp, f.market_id, f.taker as trader, f.taker as recipient,
             f.taker_side as trade_type, f.amount_in, f.amount_out, f.amount_out as clob_filled, 0::numeric as amm_filled, 1::numeric as match_count
      from ${takerFillsSource(sql, id)} f
      where true ${query.trader === undefined ? sql`` : sql`and f.taker = ${query.trader}`}`
  const clob = sql`${market} union all ${limit}`
  const union = query.source === "router" ? router : query.source === "clob" ? clob : sql`${router} union all ${clob}`
  return { select: "x.*", from: sql`(${union}) x`, orderBy: "x.block_number desc, x.log_index desc", record: toTrade }
}

export const listMarketTrades = (marketId: bigint, query: TradeListParams) =>
  Effect.gen(function* () {
    yield* requireMarket(marketId)
    const sql = yield* SqlClient.SqlClient
    return yield* listPage(marketTradesQuery(sql, marketId, query), query)
  }).pipe(read)
