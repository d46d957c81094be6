/**
 * The backend's order book, trade, price and candle records (protocol-facts section 5): amounts
 * are Money, prices decimal strings, times unix seconds.
 */
import { Schema } from "effect"
import { TradeType } from "./enums.js"
import { MOVE_SOURCES } from "./move-sources.js"
import { Address, BlockNumber, MarketIdHex, Money, Price, Timestamp, TradePrice, TxHash } from "./primitives.js"

export const BookLevel = Schema.Struct({
  price: Price.annotations({ description: "limit price of the level (USDC per share of the side's token)" }),
  shares: Money.annotations({ description: "shares still open at this price" }),
  orders: Schema.Int.annotations({ description: "live orders at this price" })
}).annotations({ identifier: "BackendBookLevel", title: "Book level", description: "open orders at one price" })

const BookSide = Schema.Struct({
  bids: Schema.Array(BookLevel).annotations({ description: "BUY orders, best (highest) price first" }),
  asks: Schema.Array(BookLevel).annotations({ description: "SELL orders, best (lowest) price first" })
})

export const OrderBook = Schema.Struct({
  marketId: MarketIdHex,
  yes: BookSide,
  no: BookSide,
  bestBidYes: Schema.NullOr(Price),
  bestAskYes: Schema.NullOr(Price),
  bestBidNo: Schema.NullOr(Price),
  bestAskNo: Schema.NullOr(Price)
}).annotations({ identifier: "BackendOrderBook", title: "Order book", description: "live orders of a market grouped by price" })

export const BackendTrade = Schema.Struct({
  source: Schema.Literal("router", "clob").annotations({
    description: "router: a router trade; clob: a fill placed on the exchange directly"
  }),
  txHash: TxHash,
  blockNumber: BlockNumber,
  logIndex: Schema.Int,
  timestamp: Timestamp,
  marketId: MarketIdHex,
  trader: Address,
  recipient: Address,
  tradeType: TradeType.Name,
  amountIn: Money.annotations({ description: "USDC for buys, outcome tokens for sells" }),
  amountOut: Money.annotations({ description: "outcome tokens for buys, USDC for sells" }),
  clobFilled: Money,
  ammFilled: Money,
  price: Schema.NullOr(TradePrice).annotations({
    description:
      "USDC per share of the traded token (the true ratio, not a probability: above 1 when the pool priced the share above what a split costs); null when no shares moved"
  })
}).annotations({ identifier: "BackendTrade", title: "Trade", description: "a router trade or a direct CLOB taker fill" })
export type BackendTrade = typeof BackendTrade.Type

/**
 * One entry of a user's trade history: one event's change to the user's position in one market
 * (the position ledger's journal). The history lists every share move the P&L counts, so per
 * market `yesShares` and `noShares` sum to the position's balances and `usdc` to its realized
 * P&L minus the cost basis held.
 */
export const BackendUserTrade = Schema.Struct({
  source: Schema.Literal(...MOVE_SOURCES).annotations({
    description:
      "router: a router trade (AMM and CLOB legs); clob_taker: the user's order or market order filled against the book; clob_maker: the user's resting order filled; split, merge, redeem, refund; transfer: outcome tokens sent or received; dust: outcome tokens the router handed back"
  }),
  txHash: TxHash,
  blockNumber: BlockNumber,
  logIndex: Schema.Int,
  timestamp: Timestamp,
  marketId: MarketIdHex,
  yesShares: Money.annotations({ description: "YES shares into (+) or out of (-) the user's position" }),
  noShares: Money.annotations({ description: "NO shares into (+) or out of (-) the user's position" }),
  usdc: Money.annotations({ description: "USDC the user received (+) or paid (-) for them, as the P&L counts it" }),
  tradeType: Schema.NullOr(TradeType.Name).annotations({
    description: "the router trade's type, or the side a fill bought or sold; null for splits, merges, redemptions, refunds, transfers"
  }),
  price: Schema.NullOr(TradePrice).annotations({
    description:
      "USDC per share of the side traded (rounded down; above 1 when the pool priced the share above what a split costs); null unless tradeType is set"
  }),
  trader: Schema.NullOr(Address).annotations({ description: "the router trade's trader (router entries only)" }),
  recipient: Schema.NullOr(Address).annotations({ description: "the router trade's recipient (router entries only)" }),
  clobFilled: Schema.NullOr(Money).annotations({ description: "the router trade's output filled on the order book (router entries only)" }),
  ammFilled: Schema.NullOr(Money).annotations({ description: "the router trade's output filled by the AMM (router entries only)" })
}).annotations({ identifier: "BackendUserTrade", title: "User trade", description: "one share move of a user's position, with its source" })
export type BackendUserTrade = typeof BackendUserTrade.Type

export const BackendPricePoint = Schema.Struct({
  timestamp: Timestamp,
  blockNumber: BlockNumber,
  yesPrice: Price,
  noPrice: Price,
  source: Schema.Literal("router", "hook_amm"),
  openInterest: Money
}).annotations({ identifier: "BackendPricePoint", title: "Price point", description: "a YES price snapshot with the open interest then" })

export const BackendCandle = Schema.Struct({
  timestamp: Timestamp.annotations({ description: "start of the bucket" }),
  open: Schema.NullOr(Price),
  high: Schema.NullOr(Price),
  low: Schema.NullOr(Price),
  close: Schema.NullOr(Price),
  volume: Money,
  tradeCount: Schema.Int
}).annotations({ identifier: "BackendCandle", title: "Candle", description: "OHLC of the YES price over one bucket, with volume" })
