/**
 * Handlers of the pricing group. The quote is `schema/protocol/router-math.ts` (the router's waterfall,
 * to the raw unit) over the indexed book and pool at the indexed head; a market the router
 * would refuse is MARKET_PAUSED (paused, past its end, resolved or in refund mode: the message
 * says which), never a zero quote.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import type { Address } from "viem"
import { MarketCandles, PricingView, Quote } from "../../../schema/backend-pricing.js"
import { InsufficientBalance, MarketPaused, ValidationFailed } from "../../../schema/errors.js"
import { TradeType } from "../../../schema/enums.js"
import { marketIdToHex, money, parseUnits6, PRICE_SCALE, type MoneyUnit } from "../../../schema/primitives.js"
import {
  BUY_YES,
  dynamicFee,
  isBuySide,
  PRICE_UNIT,
  QuoteRevert,
  quoteTrade,
  SELL_YES,
  yesPriceOf,
  type PoolState,
  type RouterQuote
} from "../../../schema/protocol/router-math.js"
import { Freshness } from "../../core/freshness.js"
import type { MarketRecord } from "../../read/markets.js"
import { read } from "../../core/db.js"
import { listCandles } from "../../read/market-prices.js"
import { positionsSource } from "../../read/positions.js"
import { SqlClient } from "@effect/sql"
import { ChainReader } from "./chain-reader.js"
import { toBackendCandle } from "../trading/convert.js"
import { BackendApi } from "../definition.js"
import { findMarket, fromIndexer, parseAddress } from "../lookup.js"
import { chainNowAtHead, readChainNow, type ChainNow } from "../markets/repository.js"
import { readQuoteState, readViewState, type QuoteState, type SideSummary } from "./repository.js"
import { marketStatus } from "../../../schema/market-status.js"
import { item, list } from "../respond.js"

const indexedAt = Effect.map(
  Effect.flatMap(Freshness, (f) => f.current),
  (head) => ({ number: head?.block ?? null, hash: head?.hash ?? null })
)

const spotPrices = (pool: PoolState | undefined, market: MarketRecord, now: ChainNow) => {
  if (pool === undefined || !pool.initialized || pool.liquidity === 0n) return null
  const fee = dynamicFee(BigInt(market.endTime), BigInt(now.time))
  const yes = yesPriceOf(pool.sqrtPriceX96, pool.yesIsCurrency0)
  const buyYes = (yes * PRICE_UNIT) / (PRICE_UNIT - fee)
  const sellYes = (yes * (PRICE_UNIT - fee)) / PRICE_UNIT
  const cap = (p: bigint) => (p > PRICE_UNIT ? PRICE_UNIT : p < 0n ? 0n : p)
  return {
    yesPrice: yes,
    feeBps: Number(fee / 100n),
    buyYes: cap(buyYes),
    sellYes: cap(sellYes),
    buyNo: cap(PRICE_UNIT - sellYes),
    sellNo: cap(PRICE_UNIT - buyYes),
    liquidity: pool.liquidity.toString(),
    sqrtPriceX96: pool.sqrtPriceX96.toString()
  }
}

const pricingView = (market: MarketRecord, now: ChainNow) =>
  Effect.gen(function* () {
    const state = yield* readViewState(market.id)
    const amm = spotPrices(state.pool, market, now)
    const [yesBids, yesAsks, noBids, noAsks] = state.sides as [SideSummary, SideSummary, SideSummary, SideSummary]
    const bookMid = yesBids.best !== null && yesAsks.best !== null ? (yesBids.best + yesAsks.best) / 2n : null
    return {
      marketId: marketIdToHex(market.id),
      tradable: marketStatus(market, now) === "active",
      clobPaused: now.exchangePaused,
      bestBidYes: yesBids.best,
      bestAskYes: yesAsks.best,
      bestBidNo: noBids.best,
      bestAskNo: noAsks.best,
      amm,
      impliedProbability: amm?.yesPrice ?? bookMid ?? market.yesPrice,
      depth: {
        yesBids: money(yesBids.shares, 6, "YES"),
        yesAsks: money(yesAsks.shares, 6, "YES"),
        noBids: money(noBids.shares, 6, "NO"),
        noAsks: money(noAsks.shares, 6, "NO"),
        levels: yesBids.levels + yesAsks.levels + noBids.levels + noAsks.levels
      },
      indexedAt: yield* indexedAt
    }
  })

const chainNow = chainNowAtHead
/** The quote reads the head's time and pauses afresh: its fee must be the head's to the raw unit, even before the head's NOTIFY arrives. */
const chainNowExact = read(readChainNow)

/** MARKET_PAUSED unless the router would take a trade on `market` now. */
const requireTradable = (market: MarketRecord, now: ChainNow) => {
  const status = marketStatus(market, now)
  if (status === "active") return Effect.void
  const why = {
    paused: "trading is paused",
    closed: "the market has ended and awaits resolution",
    resolved: "the market is resolved (redeem instead)",
    refunding: "the market is in refund mode (refund instead)"
  }[status]
  return Effect.fail(new MarketPaused({ message: `market ${market.id} cannot be traded: ${why}` }))
}

const amountProblem = (message: string) => new ValidationFailed({ message, details: [{ path: "amountIn", message }] })

/** Held balance of the token a sell pays with (outcome tokens are indexed; USDC balances are not). */
const heldOutcome = (marketId: bigint, address: string, outcome: "YES" | "NO") =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const source = positionsSource(sql, { marketId, user: address as never })
    const [row] = yield* sql<{ yes_balance: string; no_balance: string }>`select yes_balance, no_balance from ${source} s`
    return BigInt((outcome === "YES" ? row?.yes_balance : row?.no_balance) ?? 0)
  }).pipe(read)

/**
 * USDC held by `address` at the quoted block, read from the chain (USDC transfers are not
 * indexed). Only the balance: the router pulls with transferFrom, but a smart account approves
 * in the same batch as the trade, so a missing allowance now says nothing about the trade.
 */
const usdcHeld = (address: string, at: { readonly number: number | null }) =>
  Effect.gen(function* () {
    const reader = yield* ChainReader
    if (Option.isNone(reader)) {
      const message =
        "the USDC balance of a buy is read from the chain, and this server has no chain RPC endpoint (RPC_URL); quote without address"
      return yield* new ValidationFailed({ message, details: [{ path: "address", message }] })
    }
    return yield* reader.value.usdcBalance(address as Address, at.number)
  })

/**
 * The router's amounts, or why it would revert: a paused hook, or a paused exchange with an AMM
 * that cannot take the trade, is MARKET_PAUSED; the rest VALIDATION_FAILED on amountIn. A paused
 * exchange alone is no error: the router trades on the AMM, and so does the quote.
 */
const routerQuote = (
  market: MarketRecord,
  state: QuoteState,
  side: number,
  amountIn: bigint,
  maxFills: number,
  now: ChainNow
): Effect.Effect<RouterQuote, MarketPaused | ValidationFailed> =>
  Effect.try({
    try: () =>
      quoteTrade(
        {
          pool: state.pool,
          endTime: BigInt(market.endTime),
          book: state.book,
          hookPaused: state.hookPaused,
          exchangePaused: state.exchangePaused
        },
        side,
        amountIn,
        maxFills,
        BigInt(now.time)
      ),
    catch: (error) => error
  }).pipe(
    Effect.catchAll((error): Effect.Effect<never, MarketPaused | ValidationFailed> => {
      if (!(error instanceof QuoteRevert)) return Effect.die(error)
      if (error.reason === "HookPaused" || error.reason === "ExchangePaused")
        return Effect.fail(new MarketPaused({ message: `market ${market.id}: ${error.message}` }))
      return Effect.fail(amountProblem(`the router would revert (${error.reason}): ${error.message}`))
    })
  )

const bpsOf = (numerator: bigint, denominator: bigint) => (denominator === 0n ? 0 : Number((numerator * 10_000n) / denominator))

export const PricingLive = HttpApiBuilder.group(BackendApi, "pricing", (handlers) =>
  handlers
    .handle("view", ({ path }) =>
      item(
        PricingView,
        "hot"
      )(() =>
        Effect.gen(function* () {
          const market = yield* findMarket(path.idOrSlug)
          return yield* pricingView(market, yield* chainNow)
        })
      )
    )
    .handle("quote", ({ path, payload }) =>
      item(Quote, "hot")(
        () =>
          Effect.gen(function* () {
            const market = yield* findMarket(path.idOrSlug)
            const now = yield* chainNowExact
            yield* requireTradable(market, now)
            const side = TradeType.toCode(payload.tradeType)
            const amountIn = parseUnits6(payload.amountIn)
            const buy = isBuySide(side)
            const outcome = side === BUY_YES || side === SELL_YES ? "YES" : "NO"
            if (payload.address !== undefined) {
              const address = yield* parseAddress(payload.address)
              if (buy) {
                const held = yield* usdcHeld(address, yield* indexedAt)
                if (held < amountIn) {
                  return yield* Effect.fail(
                    new InsufficientBalance({
                      message: `${address} holds ${money(held, 6, "USDC").decimal} USDC, less than ${payload.amountIn}`
                    })
                  )
                }
              }
              if (!buy) {
                const held = yield* heldOutcome(market.id, address, outcome)
                if (held < amountIn) {
                  return yield* Effect.fail(
                    new InsufficientBalance({
                      message: `${address} holds ${money(held, 6, outcome).decimal} ${outcome} of market ${market.id}, less than ${payload.amountIn}`
                    })
                  )
                }
              }
            }
            const state = yield* readQuoteState(market.id)
            const maxFills = payload.maxFills ?? 10
            const slippageBps = payload.slippageBps ?? 50
            const quoted = yield* routerQuote(market, state, side, amountIn, maxFills, now)
            const inUnit: MoneyUnit = buy ? "USDC" : outcome
            const outUnit: MoneyUnit = buy ? outcome : "USDC"
            const used = quoted.clobSpent + quoted.ammSpent
            // USDC per share over the whole trade.
            const average = buy ? (used * PRICE_SCALE) / quoted.amountOut : (quoted.amountOut * PRICE_SCALE) / used
            const spot = quoted.spotPrice !== 0n ? quoted.spotPrice : (firstFillPrice(quoted.fills) ?? 0n)
            const impact = spot === 0n ? 0 : buy ? bpsOf(average - spot, spot) : bpsOf(spot - average, spot)
            const route = [
              ...quoted.fills.map((f) => ({
                venue: "CLOB" as const,
                match: f.kind,
                orderId: f.orderId,
                makerPrice: f.price,
                shares: money(f.shares, 6, outcome)
              })),
              ...(quoted.ammSpent > 0n
                ? [
                    {
                      venue: "AMM" as const,
                      amountIn: money(quoted.ammSpent, 6, inUnit),
                      amountOut: money(quoted.ammFilled, 6, outUnit),
                      feeBps: Number(quoted.fee / 100n)
                    }
                  ]
                : [])
            ]
            return {
              marketId: marketIdToHex(market.id),
              tradeType: payload.tradeType,
              amountIn: money(amountIn, 6, inUnit),
              amountOut: money(quoted.amountOut, 6, outUnit),
              clobFilled: money(quoted.clobFilled, 6, outUnit),
              ammFilled: money(quoted.ammFilled, 6, outUnit),
              refund: money(amountIn - used, 6, inUnit),
              averagePrice: average > PRICE_UNIT ? PRICE_UNIT : average,
              priceImpactBps: impact,
              slippageBps,
              minAmountOut: money((quoted.amountOut * BigInt(10_000 - slippageBps)) / 10_000n, 6, outUnit),
              maxFills,
              clobLimitPrice: quoted.limitPrice,
              route,
              indexedAt: yield* indexedAt
            }
          }),
        JSON.stringify(payload)
      )
    )
    .handle("priceViews", ({ payload }) =>
      list(PricingView, "hot")(
        () =>
          Effect.gen(function* () {
            const now = yield* chainNow
            const views = yield* Effect.forEach(payload.marketIds, (id) => Effect.flatMap(findMarket(id), (m) => pricingView(m, now)), {
              concurrency: 4
            })
            return { rows: views, total: views.length, limit: views.length, offset: 0 }
          }),
        JSON.stringify(payload)
      )
    )
    .handle("candles", ({ payload }) =>
      list(MarketCandles, "warm")(
        () =>
          Effect.gen(function* () {
            const timeframe = payload.timeframe ?? "1h"
            const rows = yield* Effect.forEach(
              payload.marketIds,
              (id) =>
                Effect.gen(function* () {
                  const market = yield* findMarket(id)
                  const answer = yield* fromIndexer(
                    listCandles(market.id, {
                      timeframe,
                      ...(payload.from === undefined ? {} : { from: payload.from }),
                      ...(payload.to === undefined ? {} : { to: payload.to }),
                      limit: payload.limit ?? 20,
                      offset: 0
                    }),
                    id
                  )
                  return { marketId: marketIdToHex(market.id), timeframe, candles: answer.data.map(toBackendCandle) }
                }),
              { concurrency: 4 }
            )
            return { rows, total: rows.length, limit: rows.length, offset: 0 }
          }),
        JSON.stringify(payload)
      )
    )
)

/** Without a pool: the first book fill's price on the taker's side is the reference. */
const firstFillPrice = (fills: ReadonlyArray<{ readonly kind: string; readonly price: bigint }>): bigint | undefined => {
  const first = fills[0]
  if (first === undefined) return undefined
  return first.kind === "COMPLEMENTARY" ? first.price : PRICE_UNIT - first.price
}
