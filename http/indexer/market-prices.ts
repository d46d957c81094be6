/**
 * A market's price history: snapshots (`/prices`), OHLC candles (`/candles`), and two windows
 * that end at the indexed head's time (`/price-delta`, `/volume-window`).
 *
 * Windows end at the timestamp of the latest indexed block (so an answer depends only on what is
 * indexed, not on the wall clock; on a followed chain that is "now" within the indexer's lag) and
 * start `window` hours earlier. When no block time is known yet they end at the current time.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { IndexerItem, IndexerList } from "../../schema/envelopes.js"
import { IndexerInvalidMarketId, IndexerMarketNotFound } from "../../schema/errors.js"
import { Timeframe, TIMEFRAMES } from "../../schema/enums.js"
import { Amount6, BlockNumber, Price, SignedAmount6, Timestamp, Uint256 } from "../../schema/primitives.js"
import { literalParam, MarketPath, optional, page, strictQuery, timestampParam, WindowQuery, withDefault } from "../core/params.js"
import { Count } from "./records.js"

export const PRICE_SOURCES = ["router", "hook_amm"] as const

export const PricePoint = Schema.Struct({
  blockNumber: BlockNumber,
  logIndex: Schema.Int.pipe(Schema.nonNegative()),
  timestamp: Timestamp,
  yesPrice: Price,
  noPrice: Price,
  source: Schema.Literal(...PRICE_SOURCES).annotations({
    description: "router: price paid in a router Trade; hook_amm: the AMM's price after a swap"
  }),
  openInterest: Amount6.annotations({ description: "the market's collateral at that moment (USDC)" })
}).annotations({
  identifier: "PricePoint",
  title: "Price point",
  description: "a YES price snapshot with the open interest at that moment"
})

export const PriceQuery = strictQuery({
  from: optional(timestampParam("from", "only snapshots at or after this time")),
  to: optional(timestampParam("to", "only snapshots at or before this time")),
  source: optional(literalParam("source", PRICE_SOURCES, "only snapshots of this source (default both)")),
  ...page
})
export type PriceQuery = typeof PriceQuery.Type

export const Candle = Schema.Struct({
  timeframe: Timeframe,
  timestamp: Timestamp.annotations({ description: "start of the bucket (multiples of the timeframe; weeks start Monday 00:00 UTC)" }),
  open: Schema.NullOr(Price).annotations({
    description: "first snapshot price in the bucket; null only when the bucket's trades moved no shares"
  }),
  high: Schema.NullOr(Price),
  low: Schema.NullOr(Price),
  close: Schema.NullOr(Price),
  volume: Amount6.annotations({ description: "USDC traded through the router in the bucket" }),
  tradeCount: Count
}).annotations({ identifier: "Candle", title: "Candle", description: "OHLC of the YES price over one bucket, with router volume" })

export const CandleQuery = strictQuery({
  timeframe: withDefault(literalParam("timeframe", TIMEFRAMES, "bucket length, default 1h"), () => "1h" as const),
  from: optional(timestampParam("from", "only buckets starting at or after this time")),
  to: optional(timestampParam("to", "only buckets starting at or before this time")),
  ...page
})
export type CandleQuery = typeof CandleQuery.Type

const windowFields = {
  marketId: Uint256,
  windowHours: Schema.Int.annotations({ description: "the window asked for, in hours" }),
  windowStart: Timestamp,
  windowEnd: Timestamp.annotations({ description: "the indexed head's time (the current time before any block is known)" })
}

export const PriceDelta = Schema.Struct({
  ...windowFields,
  currentYesPrice: Schema.NullOr(Price).annotations({
    description: "last snapshot at or before windowEnd; null when the market never traded"
  }),
  previousYesPrice: Schema.NullOr(Price).annotations({
    description: "last snapshot at or before windowStart, or else the first one inside the window; null when the market never traded"
  }),
  absolute: Schema.NullOr(SignedAmount6).annotations({ description: "currentYesPrice - previousYesPrice, signed, six fraction digits" }),
  percentBps: Schema.NullOr(Schema.Int).annotations({
    description: "the change in basis points of previousYesPrice, truncated toward zero; null when previous is 0 or null"
  }),
  latestAt: Schema.NullOr(Timestamp).annotations({ description: "time of the current snapshot" }),
  baselineAt: Schema.NullOr(Timestamp).annotations({ description: "time of the previous snapshot" })
}).annotations({ identifier: "PriceDelta", title: "Price delta", description: "change of the YES price over a window" })
export type PriceDelta = typeof PriceDelta.Type

export const VolumeWindow = Schema.Struct({
  ...windowFields,
  volume: Amount6.annotations({
    description: "USDC traded through the router in (windowStart, windowEnd]; 0, never null, when nothing traded"
  }),
  tradeCount: Count
}).annotations({ identifier: "VolumeWindow", title: "Volume window", description: "router volume of a market over a window" })
export type VolumeWindow = typeof VolumeWindow.Type

export class MarketPricesGroup extends HttpApiGroup.make("marketPrices")
  .add(
    HttpApiEndpoint.get("prices", "/api/markets/:id/prices")
      .setPath(MarketPath)
      .setUrlParams(PriceQuery)
      .addSuccess(IndexerList(PricePoint))
      .addError(IndexerMarketNotFound.wire)
      .addError(IndexerInvalidMarketId.wire)
      .annotate(OpenApi.Summary, "YES price and open-interest snapshots, oldest first (block, log index ascending)")
  )
  .add(
    HttpApiEndpoint.get("candles", "/api/markets/:id/candles")
      .setPath(MarketPath)
      .setUrlParams(CandleQuery)
      .addSuccess(IndexerList(Candle))
      .addError(IndexerMarketNotFound.wire)
      .addError(IndexerInvalidMarketId.wire)
      .annotate(OpenApi.Summary, "OHLC candles, oldest bucket first; only buckets with activity")
  )
  .add(
    HttpApiEndpoint.get("priceDelta", "/api/markets/:id/price-delta")
      .setPath(MarketPath)
      .setUrlParams(WindowQuery)
      .addSuccess(IndexerItem(PriceDelta))
      .addError(IndexerMarketNotFound.wire)
      .addError(IndexerInvalidMarketId.wire)
      .annotate(OpenApi.Summary, "Change of the YES price over the last `window` hours (1 to 720)")
  )
  .add(
    HttpApiEndpoint.get("volumeWindow", "/api/markets/:id/volume-window")
      .setPath(MarketPath)
      .setUrlParams(WindowQuery)
      .addSuccess(IndexerItem(VolumeWindow))
      .addError(IndexerMarketNotFound.wire)
      .addError(IndexerInvalidMarketId.wire)
      .annotate(OpenApi.Summary, "Router volume and trade count over the last `window` hours (1 to 720)")
  ) {}
