/** The backend's pricing records: the combined CLOB + AMM view and the router quote. */
import { Schema } from "effect"
import { BackendCandle } from "./backend-activity.js"
import { TradeType } from "./enums.js"
import { BlockNumber, MarketIdHex, Money, Price } from "./primitives.js"

export const IndexedAt = Schema.Struct({
  number: Schema.NullOr(BlockNumber).annotations({ description: "the indexed block the answer was computed at; null before the first" }),
  hash: Schema.NullOr(Schema.String)
}).annotations({ identifier: "IndexedAt", title: "Indexed at", description: "the indexed head an answer reflects" })

export const AmmView = Schema.Struct({
  yesPrice: Price.annotations({ description: "YES spot from sqrtPriceX96 (the hook's formula)" }),
  feeBps: Schema.Int.annotations({ description: "the hook's dynamic fee now, in basis points" }),
  buyYes: Price.annotations({ description: "fee-adjusted marginal cost of one YES" }),
  sellYes: Price,
  buyNo: Price,
  sellNo: Price,
  liquidity: Schema.String.annotations({ description: "active liquidity (uint128, decimal string)" }),
  sqrtPriceX96: Schema.String
}).annotations({
  identifier: "AmmView",
  title: "AMM view",
  description: "the pool's spot prices; null when the pool is uninitialised or empty"
})

export const DepthSummary = Schema.Struct({
  yesBids: Money,
  yesAsks: Money,
  noBids: Money,
  noAsks: Money,
  levels: Schema.Int.annotations({ description: "price levels with live orders, all sides" })
}).annotations({ identifier: "DepthSummary", title: "Depth summary", description: "open shares per side of the book" })

export const PricingView = Schema.Struct({
  marketId: MarketIdHex,
  tradable: Schema.Boolean,
  clobPaused: Schema.Boolean.annotations({
    description:
      "the exchange is paused: its orders stand (best prices and depth below) but nothing fills against them, and the router trades on the AMM alone"
  }),
  bestBidYes: Schema.NullOr(Price),
  bestAskYes: Schema.NullOr(Price),
  bestBidNo: Schema.NullOr(Price),
  bestAskNo: Schema.NullOr(Price),
  amm: Schema.NullOr(AmmView),
  impliedProbability: Schema.NullOr(Price).annotations({
    description: "YES probability: the AMM spot when the pool has liquidity, else the book's YES mid, else the last trade price"
  }),
  depth: DepthSummary,
  indexedAt: IndexedAt
}).annotations({ identifier: "PricingView", title: "Pricing view", description: "combined CLOB and AMM view of a market" })
export type PricingView = typeof PricingView.Type

export const QuoteRequest = Schema.Struct({
  tradeType: TradeType.Name,
  amountIn: Schema.String.pipe(
    Schema.pattern(/^(0|[1-9][0-9]{0,30})(\.[0-9]{1,6})?$/, {
      message: () => 'amountIn must be a decimal string with at most 6 fraction digits, e.g. "25.5"'
    })
  ).annotations({ description: "USDC for buys, shares for sells (decimal string, at most 6 fraction digits)" }),
  slippageBps: Schema.optional(Schema.Int.pipe(Schema.between(0, 5_000)).annotations({ description: "0 to 5000, default 50 (0.5%)" })),
  maxFills: Schema.optional(
    Schema.Int.pipe(Schema.between(1, 20)).annotations({ description: "order-book fills at most, 1 to 20, default 10" })
  ),
  address: Schema.optional(Schema.String.annotations({ description: "wallet to check the balance of (sells: outcome tokens held)" }))
}).annotations({
  identifier: "QuoteRequest",
  title: "Quote request",
  description: "an exact-input trade to quote; unknown fields are rejected",
  parseOptions: { onExcessProperty: "error" }
})

export const RouteLeg = Schema.Union(
  Schema.Struct({
    venue: Schema.Literal("CLOB"),
    match: Schema.Literal("COMPLEMENTARY", "MINT", "MERGE"),
    orderId: Schema.String,
    makerPrice: Price.annotations({ description: "the maker's price on its own side" }),
    shares: Money
  }),
  Schema.Struct({ venue: Schema.Literal("AMM"), amountIn: Money, amountOut: Money, feeBps: Schema.Int })
).annotations({ identifier: "RouteLeg", title: "Route leg", description: "one order-book fill or the AMM swap" })

export const Quote = Schema.Struct({
  marketId: MarketIdHex,
  tradeType: TradeType.Name,
  amountIn: Money,
  amountOut: Money,
  clobFilled: Money,
  ammFilled: Money,
  refund: Money.annotations({
    description: "input the router hands back as dust (a remainder under the AMM's minimum, the change of a BUY_NO)"
  }),
  averagePrice: Price.annotations({ description: "USDC per share of the traded token over the whole trade" }),
  priceImpactBps: Schema.Int.annotations({
    description: "how much worse the average is than the fee-adjusted AMM spot (or the best book price without a pool), in bps"
  }),
  slippageBps: Schema.Int,
  minAmountOut: Money.annotations({ description: "amountOut less slippageBps: pass as minOut to the router" }),
  maxFills: Schema.Int,
  clobLimitPrice: Price.annotations({ description: "the price the router lets the book fill at (the AMM's fee-adjusted spot)" }),
  route: Schema.Array(RouteLeg),
  indexedAt: IndexedAt
}).annotations({ identifier: "Quote", title: "Quote", description: "what the router would do with this trade at the indexed head" })

export const PriceViewsRequest = Schema.Struct({
  marketIds: Schema.Array(Schema.String)
    .pipe(Schema.minItems(1), Schema.maxItems(50))
    .annotations({ description: "1 to 50 market ids (decimal or 0x + 64 hex)" })
}).annotations({ identifier: "PriceViewsRequest", title: "Price views request", parseOptions: { onExcessProperty: "error" } })

export const CandlesBatchRequest = Schema.Struct({
  marketIds: Schema.Array(Schema.String).pipe(Schema.minItems(1), Schema.maxItems(50)),
  timeframe: Schema.optional(Schema.Literal("1m", "5m", "15m", "1h", "4h", "1d", "1w")),
  from: Schema.optional(Schema.Int.pipe(Schema.nonNegative())),
  to: Schema.optional(Schema.Int.pipe(Schema.nonNegative())),
  limit: Schema.optional(Schema.Int.pipe(Schema.between(1, 100)))
}).annotations({ identifier: "CandlesBatchRequest", title: "Candles batch request", parseOptions: { onExcessProperty: "error" } })

export const MarketCandles = Schema.Struct({
  marketId: MarketIdHex,
  timeframe: Schema.String,
  candles: Schema.Array(BackendCandle)
}).annotations({ identifier: "MarketCandles", title: "Market candles" })
