/** Read-model records (`http/read`) -> the backend's (Money amounts, 0x+64 market ids). */
import type { BackendTrade, BackendUserTrade } from "../../../schema/backend-activity.js"
import { isBuy, outcomeSide } from "../../../schema/enums.js"
import { marketIdToHex, money, type MoneyUnit } from "../../../schema/primitives.js"
import type { OrderBookRecord as IndexerOrderBook } from "../../read/market-book.js"
import type { CandleRecord, PricePointRecord } from "../../read/market-prices.js"
import type { TradeRecord as Trade } from "../../read/market-trades.js"
import type { MatchRecord as Match, OrderRecord as Order } from "../../read/exchange.js"
import type { PortfolioPositionRecord as PortfolioPosition } from "../../read/portfolio.js"
import type { UserTrade } from "../../read/user-trades.js"

export const usdc = (raw: bigint) => money(raw, 6, "USDC")

export const toBackendTrade = (trade: Trade): BackendTrade => {
  const token: MoneyUnit = outcomeSide(trade.tradeType)
  const buy = isBuy(trade.tradeType)
  const [inUnit, outUnit]: [MoneyUnit, MoneyUnit] = buy ? ["USDC", token] : [token, "USDC"]
  return {
    source: trade.source,
    txHash: trade.txHash,
    blockNumber: trade.blockNumber,
    logIndex: trade.logIndex,
    timestamp: trade.timestamp,
    marketId: marketIdToHex(trade.marketId),
    trader: trade.trader,
    recipient: trade.recipient,
    tradeType: trade.tradeType,
    amountIn: money(trade.amountIn, 6, inUnit),
    amountOut: money(trade.amountOut, 6, outUnit),
    clobFilled: money(trade.clobFilled, 6, outUnit),
    ammFilled: money(trade.ammFilled, 6, outUnit),
    price: trade.price
  }
}

export const toBackendUserTrade = (trade: UserTrade): BackendUserTrade => {
  const out: MoneyUnit | undefined = trade.tradeType === null ? undefined : isBuy(trade.tradeType) ? outcomeSide(trade.tradeType) : "USDC"
  return {
    source: trade.source,
    txHash: trade.txHash,
    blockNumber: trade.blockNumber,
    logIndex: trade.logIndex,
    timestamp: trade.timestamp,
    marketId: marketIdToHex(trade.marketId),
    yesShares: money(trade.yesShares, 6, "YES"),
    noShares: money(trade.noShares, 6, "NO"),
    usdc: usdc(trade.usdc),
    tradeType: trade.tradeType,
    price: trade.price,
    trader: trade.router?.trader ?? null,
    recipient: trade.router?.recipient ?? null,
    clobFilled: trade.router === null || out === undefined ? null : money(trade.router.clobFilled, 6, out),
    ammFilled: trade.router === null || out === undefined ? null : money(trade.router.ammFilled, 6, out)
  }
}

export const toBackendBook = (book: IndexerOrderBook) => {
  const side = (levels: IndexerOrderBook["yes"]["bids"], unit: MoneyUnit) =>
    levels.map((level) => ({ price: level.price, shares: money(level.amount, 6, unit), orders: level.orders }))
  return {
    marketId: marketIdToHex(book.marketId),
    yes: { bids: side(book.yes.bids, "YES"), asks: side(book.yes.asks, "YES") },
    no: { bids: side(book.no.bids, "NO"), asks: side(book.no.asks, "NO") },
    bestBidYes: book.bestBidYes,
    bestAskYes: book.bestAskYes,
    bestBidNo: book.bestBidNo,
    bestAskNo: book.bestAskNo
  }
}

export const toBackendPricePoint = (point: PricePointRecord) => ({
  timestamp: point.timestamp,
  blockNumber: point.blockNumber,
  yesPrice: point.yesPrice,
  noPrice: point.noPrice,
  source: point.source,
  openInterest: usdc(point.openInterest)
})

export const toBackendCandle = (candle: CandleRecord) => ({
  timestamp: candle.timestamp,
  open: candle.open,
  high: candle.high,
  low: candle.low,
  close: candle.close,
  volume: usdc(candle.volume),
  tradeCount: candle.tradeCount
})

// Trading records (orders, fills, positions, portfolio totals): the indexer's values in the
// backend's money shapes, for the trading handlers and the WebSocket's user topics alike.

export const yes = (raw: bigint) => money(raw, 6, "YES")
export const no = (raw: bigint) => money(raw, 6, "NO")
export const side = (outcome: boolean | null) => (outcome === null ? null : outcome ? ("YES" as const) : ("NO" as const))

export const toOrder = (order: Order) => {
  const unit: MoneyUnit = outcomeSide(order.side)
  return {
    orderId: order.orderId,
    marketId: marketIdToHex(order.marketId),
    owner: order.owner,
    side: order.side,
    price: order.price,
    amount: money(order.amount, 6, unit),
    filled: money(order.filled, 6, unit),
    remaining: money(order.remaining, 6, unit),
    status: order.status,
    placedAt: order.placedAt,
    placedTx: order.placedTx,
    updatedAt: order.updatedAt,
    filledAt: order.filledAt,
    cancelledAt: order.cancelledAt
  }
}

export const toFill = (match: Match) => ({
  txHash: match.txHash,
  blockNumber: match.blockNumber,
  logIndex: match.logIndex,
  timestamp: match.timestamp,
  marketId: marketIdToHex(match.marketId),
  makerOrderId: match.makerOrderId,
  takerOrderId: match.takerOrderId,
  maker: match.maker,
  taker: match.taker,
  matchType: match.matchType,
  shares: money(match.amount, 6, match.makerSide === null ? "YES" : outcomeSide(match.makerSide)),
  price: match.price
})

export const toPosition = (p: PortfolioPosition) => ({
  marketId: marketIdToHex(p.marketId),
  question: p.question,
  marketStatus: p.marketStatus,
  outcome: side(p.outcome),
  yesBalance: yes(p.yesBalance),
  noBalance: no(p.noBalance),
  yesCost: usdc(p.yesCost),
  noCost: usdc(p.noCost),
  markPrice: p.markPrice,
  value: usdc(p.value),
  unrealizedPnl: usdc(p.unrealizedPnl),
  realizedPnl: usdc(p.realizedPnl)
})

export const totals = (t: { value: bigint; cost: bigint; unrealizedPnl: bigint; realizedPnl: bigint; totalPnl: bigint }) => ({
  value: usdc(t.value),
  cost: usdc(t.cost),
  unrealizedPnl: usdc(t.unrealizedPnl),
  realizedPnl: usdc(t.realizedPnl),
  totalPnl: usdc(t.totalPnl)
})
