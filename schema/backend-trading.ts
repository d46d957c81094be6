/**
 * The backend's trading and portfolio records: orders, fills, positions, portfolio, P&L,
 * profiles, transaction breakdowns and redemption quotes. Amounts are Money (signed where a
 * P&L), prices decimal strings, market ids 0x + 64 hex.
 */
import { Schema } from "effect"
import { BackendTrade } from "./backend-activity.js"
import { MatchType, OrderStatus, Side } from "./enums.js"
import { MARKET_STATUS_DESCRIPTION, MARKET_STATUSES } from "./market-status.js"
import { Address, BlockNumber, Bytes32, MarketIdHex, Money, Price, Timestamp, TxHash } from "./primitives.js"

export const BackendOrder = Schema.Struct({
  orderId: Bytes32,
  marketId: MarketIdHex,
  owner: Address,
  side: Side.Name,
  price: Price,
  amount: Money.annotations({ description: "shares ordered" }),
  filled: Money,
  remaining: Money.annotations({ description: "open shares; 0 once filled or cancelled" }),
  status: OrderStatus,
  placedAt: Timestamp,
  placedTx: TxHash,
  updatedAt: Timestamp,
  filledAt: Schema.NullOr(Timestamp),
  cancelledAt: Schema.NullOr(Timestamp)
}).annotations({ identifier: "BackendOrder", title: "Order", description: "a CLOB limit order" })

export const BackendFill = Schema.Struct({
  txHash: TxHash,
  blockNumber: BlockNumber,
  logIndex: Schema.Int,
  timestamp: Timestamp,
  marketId: MarketIdHex,
  makerOrderId: Bytes32,
  takerOrderId: Bytes32.annotations({ description: "0x00…00 for market orders (the router's path)" }),
  maker: Schema.NullOr(Address),
  taker: Schema.NullOr(Address),
  matchType: MatchType.Name,
  shares: Money.annotations({ description: "shares matched, in the maker side's token" }),
  price: Price.annotations({ description: "the maker's price on the maker's side" })
}).annotations({ identifier: "BackendFill", title: "Fill", description: "an order match" })

export const BackendPosition = Schema.Struct({
  marketId: MarketIdHex,
  question: Schema.String,
  marketStatus: Schema.Literal(...MARKET_STATUSES).annotations({ description: MARKET_STATUS_DESCRIPTION }),
  outcome: Schema.NullOr(Schema.Literal("YES", "NO")),
  yesBalance: Money,
  noBalance: Money,
  yesCost: Money.annotations({ description: "USDC cost basis of the YES held" }),
  noCost: Money,
  markPrice: Schema.NullOr(Price).annotations({ description: "YES price the position is marked at; null when at cost or resolved" }),
  value: Money,
  unrealizedPnl: Money,
  realizedPnl: Money
}).annotations({ identifier: "BackendPosition", title: "Position", description: "a user's position in one market, marked to market" })
export type BackendPosition = typeof BackendPosition.Type

const totals = {
  value: Money,
  cost: Money,
  unrealizedPnl: Money,
  realizedPnl: Money,
  totalPnl: Money
}

export const BackendPortfolio = Schema.Struct({
  address: Address,
  openPositions: Schema.Int,
  ...totals,
  positions: Schema.Array(BackendPosition)
}).annotations({ identifier: "BackendPortfolio", title: "Portfolio", description: "open positions and totals" })

export const BackendPnl = Schema.Struct({
  address: Address,
  ...totals,
  volume: Money,
  tradeCount: Schema.Int,
  marketsTraded: Schema.Int,
  openPositions: Schema.Int
}).annotations({ identifier: "BackendPnl", title: "P&L", description: "aggregated profit and loss" })

export const UserProfile = Schema.Struct({
  address: Address,
  volume: Money,
  tradeCount: Schema.Int,
  realizedPnl: Money,
  rank: Schema.NullOr(Schema.Int).annotations({ description: "place on the P&L leaderboard; null without a router trade" }),
  resolvedPositions: Schema.Int,
  correctPositions: Schema.Int,
  accuracy: Schema.NullOr(Price).annotations({ description: "correct / resolved calls, 0 to 1" })
}).annotations({ identifier: "UserProfile", title: "User profile", description: "a user's public trading profile" })

export const BackendTradeBreakdown = Schema.Struct({
  txHash: TxHash,
  blockNumber: BlockNumber,
  timestamp: Timestamp,
  trades: Schema.Array(BackendTrade),
  fills: Schema.Array(BackendFill),
  clobFilled: Schema.String.annotations({ description: "sum of the trades' CLOB part (6 decimals, output units)" }),
  ammFilled: Schema.String,
  clobShare: Schema.NullOr(Price).annotations({ description: "clobFilled / amountOut, 0 to 1" })
}).annotations({ identifier: "BackendTradeBreakdown", title: "Trade breakdown", description: "CLOB versus AMM fill of one transaction" })

export const RedemptionQuote = Schema.Struct({
  marketId: MarketIdHex,
  address: Address,
  mode: Schema.Literal("redeem", "refund", "none").annotations({
    description:
      "redeem (resolved: winning tokens pay 1 USDC each less the fee), refund (refund mode: min(YES, NO) pairs return 1 USDC each), none (neither yet)"
  }),
  available: Schema.Boolean.annotations({ description: "the diamond would pay now (not paused, something to claim)" }),
  outcome: Schema.NullOr(Schema.Literal("YES", "NO")),
  yesBalance: Money,
  noBalance: Money,
  burnYes: Money.annotations({ description: "YES tokens the claim burns" }),
  burnNo: Money,
  feeBps: Schema.Int.annotations({ description: "the market's redemption fee in basis points" }),
  fee: Money,
  payout: Money.annotations({ description: "USDC paid to the holder" })
}).annotations({ identifier: "RedemptionQuote", title: "Redemption quote", description: "what redeeming or refunding would pay now" })
