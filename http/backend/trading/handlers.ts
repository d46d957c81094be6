/** Handlers of the trading and portfolio group: the indexer's derived values, in the backend's shapes. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { BackendUserTrade } from "../../../schema/backend-activity.js"
import {
  BackendFill,
  BackendOrder,
  BackendPnl,
  BackendPortfolio,
  BackendPosition,
  BackendTradeBreakdown,
  RedemptionQuote,
  UserProfile
} from "../../../schema/backend-trading.js"
import { NotFound as IndexerNotFound, OrderNotFound } from "../../../schema/errors.js"
import { marketIdToHex, money, type Address } from "../../../schema/primitives.js"
import type { MarketRecord } from "../../read/markets.js"
import { getOrder, listMatches, listOrders } from "../../read/exchange.js"
import { listMarketPositions } from "../../read/market-book.js"
import { readPnl, readPortfolio } from "../../read/portfolio.js"
import { readTradeBreakdown } from "../../read/trade-breakdown.js"
import { readUserStats } from "../../read/user-stats.js"
import { no, side, toBackendTrade, toBackendUserTrade, toFill, toOrder, toPosition, totals, usdc, yes } from "./convert.js"
import { readPortfolioJson } from "./portfolio-json.js"
import { BackendApi } from "../definition.js"
import { NotFound } from "../errors.js"
import { findMarket, fromIndexer, parseAddress, parseMarketId } from "../lookup.js"
import { listUserTrades } from "../../read/user-trades.js"
import { readRedemptionFeeBps, readTokenBalances } from "./repository.js"
import { readChainNow } from "../markets/repository.js"
import { read } from "../../core/db.js"
import { item, itemJson, list } from "../respond.js"

/** The position of `address` in `market` when it holds nothing there: zero balances, its realized P&L. */
const emptyPosition = (address: Address, market: MarketRecord) =>
  Effect.map(listMarketPositions(market.id, { address, limit: 1, offset: 0 }), (answer) => ({
    marketId: marketIdToHex(market.id),
    question: market.question,
    marketStatus: market.status,
    outcome: market.isResolved ? side(market.outcome) : null,
    yesBalance: yes(answer.data[0]?.yesBalance ?? 0n),
    noBalance: no(answer.data[0]?.noBalance ?? 0n),
    yesCost: usdc(0n),
    noCost: usdc(0n),
    markPrice: null,
    value: usdc(0n),
    unrealizedPnl: usdc(0n),
    realizedPnl: usdc(answer.data[0]?.realizedPnl ?? 0n)
  }))

/** Unknown order or transaction: the indexer's 404s as NOT_FOUND. */
const notFoundAs = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catchIf(
    effect,
    (e): e is Extract<E, InstanceType<typeof OrderNotFound> | InstanceType<typeof IndexerNotFound>> =>
      e instanceof OrderNotFound || e instanceof IndexerNotFound,
    (e) => Effect.fail(new NotFound({ message: e.message }))
  )

export const TradingLive = HttpApiBuilder.group(BackendApi, "trading", (handlers) =>
  handlers
    .handle("profile", ({ path }) =>
      item(
        UserProfile,
        "warm"
      )(() =>
        Effect.gen(function* () {
          const address = yield* parseAddress(path.address)
          const stats = (yield* readUserStats(address)).data
          return {
            address,
            volume: usdc(stats.volume),
            tradeCount: stats.tradeCount,
            realizedPnl: usdc(stats.realizedPnl),
            rank: stats.rank,
            resolvedPositions: stats.resolvedPositions,
            correctPositions: stats.correctPositions,
            accuracy: stats.accuracy
          }
        })
      )
    )
    .handle("orders", ({ path, urlParams }) =>
      list(
        BackendOrder,
        "hot"
      )(() =>
        Effect.gen(function* () {
          const owner = yield* parseAddress(path.address)
          const answer = yield* listOrders({ ...urlParams, owner })
          return { rows: answer.data.map(toOrder), total: answer.meta.count, limit: urlParams.limit, offset: urlParams.offset }
        })
      )
    )
    .handle("portfolio", ({ path }) =>
      itemJson(BackendPortfolio, "hot")(() => Effect.flatMap(parseAddress(path.address), readPortfolioJson))
    )
    .handle("position", ({ path }) =>
      item(
        BackendPosition,
        "hot"
      )(() =>
        Effect.gen(function* () {
          const address = yield* parseAddress(path.address)
          yield* parseMarketId(path.marketId)
          const market = yield* findMarket(path.marketId)
          const held = (yield* readPortfolio(address)).data.positions.find((p) => p.marketId === market.id)
          return held === undefined ? yield* fromIndexer(emptyPosition(address, market), path.marketId) : toPosition(held)
        })
      )
    )
    .handle("trades", ({ path, urlParams }) =>
      list(
        BackendUserTrade,
        "hot"
      )(() =>
        Effect.gen(function* () {
          const address = yield* parseAddress(path.address)
          const page = yield* listUserTrades(address, urlParams)
          return { rows: page.rows.map(toBackendUserTrade), total: page.total, limit: urlParams.limit, offset: urlParams.offset }
        })
      )
    )
    .handle("pnl", ({ path }) =>
      item(
        BackendPnl,
        "warm"
      )(() =>
        Effect.gen(function* () {
          const address = yield* parseAddress(path.address)
          const p = (yield* readPnl(address)).data
          return {
            address,
            ...totals(p),
            volume: usdc(p.volume),
            tradeCount: p.tradeCount,
            marketsTraded: p.marketsTraded,
            openPositions: p.openPositions
          }
        })
      )
    )
    .handle("redemptionQuote", ({ path }) =>
      item(
        RedemptionQuote,
        "hot"
      )(() =>
        Effect.gen(function* () {
          const address = yield* parseAddress(path.address)
          yield* parseMarketId(path.marketId)
          const market = yield* findMarket(path.marketId)
          const { yes: yesBalance, no: noBalance } = yield* fromIndexer(readTokenBalances(address, market.id), path.marketId)
          const feeBps = yield* readRedemptionFeeBps(market.id, market.createdBlock)
          const now = yield* read(readChainNow)
          const base = {
            marketId: marketIdToHex(market.id),
            address,
            outcome: market.isResolved ? side(market.outcome) : null,
            yesBalance: yes(yesBalance),
            noBalance: no(noBalance),
            feeBps
          }
          if (market.isResolved && market.outcome !== null) {
            // redeem(): burns both balances, pays the winning amount less fee = winning * bps / 10000.
            const winning = market.outcome ? yesBalance : noBalance
            const fee = (winning * BigInt(feeBps)) / 10_000n
            return {
              ...base,
              mode: "redeem" as const,
              available: !now.paused && yesBalance + noBalance > 0n,
              burnYes: yes(yesBalance),
              burnNo: no(noBalance),
              fee: usdc(fee),
              payout: usdc(winning - fee)
            }
          }
          if (market.refundMode) {
            // refund(): burns min(YES, NO) of each and returns that much USDC; no fee.
            const pairs = yesBalance < noBalance ? yesBalance : noBalance
            return {
              ...base,
              mode: "refund" as const,
              available: pairs > 0n,
              burnYes: yes(pairs),
              burnNo: no(pairs),
              fee: usdc(0n),
              payout: usdc(pairs)
            }
          }
          return { ...base, mode: "none" as const, available: false, burnYes: yes(0n), burnNo: no(0n), fee: usdc(0n), payout: usdc(0n) }
        })
      )
    )
    .handle("breakdown", ({ path }) =>
      item(
        BackendTradeBreakdown,
        "hot"
      )(() =>
        Effect.map(notFoundAs(readTradeBreakdown(path.txHash)), ({ data }) => ({
          txHash: data.txHash,
          blockNumber: data.blockNumber,
          timestamp: data.timestamp,
          trades: data.trades.map(toBackendTrade),
          fills: data.matches.map(toFill),
          clobFilled: money(data.clobFilled, 6, "USDC").decimal,
          ammFilled: money(data.ammFilled, 6, "USDC").decimal,
          clobShare: data.clobShare
        }))
      )
    )
    .handle("fills", ({ path, urlParams }) =>
      list(
        BackendFill,
        "hot"
      )(() =>
        Effect.gen(function* () {
          yield* notFoundAs(getOrder(path.orderId))
          const answer = yield* listMatches({ orderId: path.orderId, limit: urlParams.limit, offset: urlParams.offset })
          return { rows: answer.data.map(toFill), total: answer.meta.count, limit: urlParams.limit, offset: urlParams.offset }
        })
      )
    )
)
