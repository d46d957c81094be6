/**
 * OHLC candles per market and timeframe (1m, 5m, 15m, 1h, 4h, 1d, 1w).
 *
 * Sources, chosen to agree with the stored rows:
 * - price: every price snapshot, i.e. exactly the `price_snapshot` rows (router trades, source
 *   router, and Hook_MarketTraded, source hook_amm), in chain order. CLOB matches do not feed
 *   prices: a router trade that filled on the CLOB already has its snapshot;
 * - volume and trade count: router `Trade` only (event-source rule 1), measured with
 *   `tradeVolume`, the same USDC amount as market volume.
 *
 * Invariants, per (market, timeframe, bucket):
 * - open/close are the first/last snapshot price in the bucket by (block, logIndex), high/low
 *   the extremes; all four are null only while the bucket has volume but no snapshot (a trade
 *   that moved no shares);
 * - volume is the sum of `tradeVolume` and tradeCount the number of Trades in the bucket.
 * Buckets start at multiples of the timeframe in unix seconds, except weeks, which start on
 * Monday 00:00 UTC (unix time 0 was a Thursday: weeks are offset by 4 days).
 */
import type { CandleRow, Located, PriceSnapshotRow, Timeframe } from "./model.js"
import { getRow, putRow, rowKey } from "./rows.js"
import type { State } from "./state.js"

export const TIMEFRAMES = [
  ["1m", 60],
  ["5m", 300],
  ["15m", 900],
  ["1h", 3_600],
  ["4h", 14_400],
  ["1d", 86_400],
  ["1w", 604_800]
] as const satisfies ReadonlyArray<readonly [Timeframe, number]>

const WEEK_OFFSET = 4 * 86_400

export const bucketStart = (seconds: number, timestamp: number): number => {
  const offset = seconds === 604_800 ? WEEK_OFFSET : 0
  return Math.floor((timestamp - offset) / seconds) * seconds + offset
}

export const candleKey = (marketId: bigint, timeframe: Timeframe, bucket: number) => rowKey(marketId, timeframe, bucket)

/** The (market, timeframe, bucket) keys an event at `timestamp` touches. */
export const candleKeysAt = (marketId: bigint, timestamp: number) =>
  TIMEFRAMES.map(([timeframe, seconds]) => [marketId, timeframe, bucketStart(seconds, timestamp)] as const)

const candle = (s: State, marketId: bigint, timeframe: Timeframe, bucket: number): CandleRow => {
  const key = candleKey(marketId, timeframe, bucket)
  let row = getRow(s.rows.candles, key, "candle")
  if (row === undefined) {
    row = { marketId, timeframe, bucket, open: null, high: null, low: null, close: null, volume: 0n, tradeCount: 0n }
    putRow(s.rows.candles, key, row, "candle")
  }
  return row
}

export const onPriceSnapshot = (s: State, p: PriceSnapshotRow): void => {
  for (const [marketId, timeframe, bucket] of candleKeysAt(p.marketId, p.timestamp)) {
    const c = candle(s, marketId, timeframe, bucket)
    if (c.open === null) c.open = p.yesPrice
    c.high = c.high === null || p.yesPrice > c.high ? p.yesPrice : c.high
    c.low = c.low === null || p.yesPrice < c.low ? p.yesPrice : c.low
    c.close = p.yesPrice
  }
}

export const onTradeVolume = (s: State, marketId: bigint, at: Located, volume: bigint): void => {
  for (const [id, timeframe, bucket] of candleKeysAt(marketId, at.timestamp)) {
    const c = candle(s, id, timeframe, bucket)
    c.volume += volume
    c.tradeCount += 1n
  }
}
