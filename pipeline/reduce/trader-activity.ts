/**
 * Per trader, the running totals the points rules and the leaderboard read (schema/protocol/point-rules.ts),
 * so a read aggregates one row per trader instead of every trade:
 *
 * - `traderTotals` (table trader_total): the totals now, one row per address;
 * - `traderDays` (table trader_day): the totals as they stood at the end of each UTC day on which
 *   the address traded or added liquidity, so the totals at any earlier time are the last day row
 *   before it plus that day's own raw rows up to the second;
 * - `traderMarkets` (table trader_market): per (address, market), the last trade as trader (the
 *   leaderboard's markets traded in a period) and the net shares bought as recipient per side
 *   (its accuracy calls, as `calls` in http/read/user-stats.ts sums them).
 *
 * Sources, the same rows the rules count at read time: every appended `trade` row counts for its
 * trader (its USDC side, `tradeVolume`), every appended `liquidity_event` row with a positive
 * liquidity delta for its owner. Protocol contracts get rows too; reads join `user_stats` as the
 * rules do.
 *
 * Invariants:
 * - a row is a pure function of the chain up to its day (rows are folded in chain order, and
 *   block times never decrease), so a keyed revert on a reorg and a replay give exactly the rows
 *   of a from-scratch fold;
 * - `streaks` = sum over maximal runs of consecutive trading days of floor(run / streakDays),
 *   `run` the length of the run ending on `lastTradeDay`.
 */
import { THRESHOLDS } from "../../schema/protocol/point-rules.js"
import type { LiquidityEventRow, TradeRow, TraderActivityRow, TraderMarketRow } from "./model.js"
import { getRow, putRow, rowKey } from "./rows.js"
import type { State } from "./state.js"

export const DAY_SECONDS = 86_400
export const dayOf = (timestamp: number) => Math.floor(timestamp / DAY_SECONDS)

export const traderMarketKey = (address: string, marketId: bigint) => rowKey(address, marketId)

const traderMarket = (s: State, address: string, marketId: bigint): TraderMarketRow => {
  const key = traderMarketKey(address, marketId)
  let row = getRow(s.rows.traderMarkets, key, "trader_market")
  if (row === undefined) {
    row = { address, marketId, lastTradedAt: null, netYes: 0n, netNo: 0n }
    putRow(s.rows.traderMarkets, key, row, "trader_market")
  }
  return row
}

export const traderTotalKey = (address: string) => rowKey(address)
export const traderDayKey = (address: string, day: number) => rowKey(address, day)

const totals = (s: State, address: string, day: number): TraderActivityRow => {
  const key = traderTotalKey(address)
  const row = getRow(s.rows.traderTotals, key, "trader_total")
  const fresh: TraderActivityRow = {
    address,
    day,
    volume: 0n,
    trades: 0n,
    firstTrade: false,
    firstTradeAt: null,
    lastTradeAt: null,
    dayFirstTradeAt: null,
    lastTradeDay: null,
    run: 0,
    longestRun: 0,
    streaks: 0,
    liquidityDays: 0,
    lastLiquidityDay: null
  }
  // A new day starts from the totals at the end of the last one; only its own first trade is reset.
  const next = row === undefined ? fresh : row.day === day ? row : { ...row, day, dayFirstTradeAt: null }
  if (next !== row) putRow(s.rows.traderTotals, key, next, "trader_total")
  return next
}

/** The day row is a copy of the totals at the end of the day (rewritten by each change that day). */
const snapshot = (s: State, row: TraderActivityRow): void => {
  putRow(s.rows.traderDays, traderDayKey(row.address, row.day), { ...row }, "trader_day")
}

/** The USDC side of a stored trade (`tradeVolume`'s rule on the row). */
export const tradeRowVolume = (t: TradeRow): bigint => (t.tradeType === 0 || t.tradeType === 2 ? t.amountIn : t.amountOut)

export const onTraderTrade = (s: State, t: TradeRow, usdc: bigint): void => {
  const day = dayOf(t.timestamp)
  const row = totals(s, t.trader, day)
  row.volume += usdc
  row.trades += 1n
  if (usdc >= THRESHOLDS.firstTradeUsdc) row.firstTrade = true
  row.firstTradeAt ??= t.timestamp
  row.lastTradeAt = t.timestamp
  row.dayFirstTradeAt ??= t.timestamp
  if (row.lastTradeDay !== day) {
    row.run = row.lastTradeDay === day - 1 ? row.run + 1 : 1
    row.lastTradeDay = day
    if (row.run % THRESHOLDS.streakDays === 0) row.streaks += 1
    if (row.run > row.longestRun) row.longestRun = row.run
  }
  snapshot(s, row)
  traderMarket(s, t.trader, t.marketId).lastTradedAt = t.timestamp
  const held = traderMarket(s, t.recipient, t.marketId)
  if (t.tradeType === 0) held.netYes += t.amountOut
  else if (t.tradeType === 1) held.netYes -= t.amountIn
  else if (t.tradeType === 2) held.netNo += t.amountOut
  else held.netNo -= t.amountIn
}

export const onLiquidityAdded = (s: State, l: LiquidityEventRow): void => {
  if (l.liquidityDelta <= 0n) return
  const day = dayOf(l.timestamp)
  const row = totals(s, l.owner, day)
  if (row.lastLiquidityDay === day) return
  row.liquidityDays += 1
  row.lastLiquidityDay = day
  snapshot(s, row)
}
