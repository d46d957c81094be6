/**
 * Handlers of the pricing group. The quote itself is pure (`quote.ts`); its handler reads what
 * it needs (the market, the chain's time, the book and pool at the indexed head, the trader's
 * balance when an address is given) and passes it in.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import type { Address } from "viem"
import { MarketCandles, PricingView, Quote } from "../../../schema/backend-pricing.js"
import { InsufficientBalance, ValidationFailed } from "../../../schema/errors.js"
import { TradeType } from "../../../schema/enums.js"
import { marketIdToHex, money, parseUnits6 } from "../../../schema/primitives.js"
import { dynamicFee, isBuySide, PRICE_UNIT, yesPriceOf, type PoolState } from "../../../schema/protocol/router-math.js"
import { Freshness } from "../../core/freshness.js"
import type { MarketRecord } from "../../read/markets.js"
import { read } from "../../core/db.js"
import { listCandles } from "../../read/market-prices.js"
import { positionsSource } from "../../read/positions.js"
import { SqlClient } from "@effect/sql"
import { ChainReader } from "./chain-reader.js"
import { toBackendCandle } from "../trading/convert.js"
import { BackendApi } from "../definition.js"
import { findMarket, fromIndexer, marketNotFound, parseAddress, parseIdOrSlug } from "../lookup.js"
import { chainNowAtHead, type ChainNow } from "../markets/repository.js"
import { readMarketQuoteState, readMarketViewState, readQuoteState, readViewState, type SideSummary, type ViewState } from "./repository.js"
import { marketStatus } from "../../../schema/market-status.js"
import { item, list } from "../respond.js"
import { outcomeOf, quote, tradableProblem } from "./quote.js"

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

const pricingView = (market: MarketRecord, now: ChainNow, state: ViewState) =>
  Effect.gen(function* () {
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

/**
 * The market `input` names with the state `byId` reads for it. By id (what apps send) the market
 * and its state are one statement (`readMarketViewState`, `readMarketQuoteState`); by slug the
 * market is looked up first, then its state read by `byIdOf`. Same errors either way: a malformed
 * id or slug is INVALID_MARKET_ID, no such market MARKET_NOT_FOUND naming `input`.
 */
const marketWith = <S, E, R, E2, R2>(
  input: string,
  byId: (id: bigint) => Effect.Effect<{ readonly market: MarketRecord | undefined } & S, E, R>,
  byIdOf: (market: MarketRecord) => Effect.Effect<S, E2, R2>
) =>
  Effect.gen(function* () {
    const key = yield* parseIdOrSlug(input)
    if ("id" in key) {
      const found = yield* byId(key.id)
      return found.market === undefined ? yield* Effect.fail(marketNotFound(input)) : { ...found, market: found.market }
    }
    const market = yield* findMarket(input)
    return { ...(yield* byIdOf(market)), market }
  })

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

export const PricingLive = HttpApiBuilder.group(BackendApi, "pricing", (handlers) =>
  handlers
    .handle("view", ({ path }) =>
      item(
        PricingView,
        "hot"
      )(() =>
        Effect.gen(function* () {
          const { market, view } = yield* marketWith(path.idOrSlug, readMarketViewState, (m) =>
            Effect.map(readViewState(m.id), (view) => ({ view }))
          )
          return yield* pricingView(market, yield* chainNow, view)
        })
      )
    )
    .handle("quote", ({ path, payload }) =>
      item(Quote, "hot")(
        () =>
          Effect.gen(function* () {
            const { market, now, state } = yield* marketWith(path.idOrSlug, readMarketQuoteState, (m) => readQuoteState(m.id))
            const untradable = tradableProblem(market, now)
            if (untradable !== undefined) return yield* untradable
            const side = TradeType.toCode(payload.tradeType)
            const amountIn = parseUnits6(payload.amountIn)
            const outcome = outcomeOf(side)
            if (payload.address !== undefined) {
              const address = yield* parseAddress(payload.address)
              if (isBuySide(side)) {
                const held = yield* usdcHeld(address, yield* indexedAt)
                if (held < amountIn) {
                  return yield* new InsufficientBalance({
                    message: `${address} holds ${money(held, 6, "USDC").decimal} USDC, less than ${payload.amountIn}`
                  })
                }
              } else {
                const held = yield* heldOutcome(market.id, address, outcome)
                if (held < amountIn) {
                  return yield* new InsufficientBalance({
                    message: `${address} holds ${money(held, 6, outcome).decimal} ${outcome} of market ${market.id}, less than ${payload.amountIn}`
                  })
                }
              }
            }
            const answer = yield* quote({
              market,
              state,
              now,
              tradeType: payload.tradeType,
              side,
              amountIn,
              maxFills: payload.maxFills ?? 10,
              slippageBps: payload.slippageBps ?? 50
            })
            return { ...answer, indexedAt: yield* indexedAt }
          }),
        JSON.stringify(payload)
      )
    )
    .handle("priceViews", ({ payload }) =>
      list(PricingView, "hot")(
        () =>
          Effect.gen(function* () {
            const now = yield* chainNow
            const views = yield* Effect.forEach(
              payload.marketIds,
              (id) => Effect.flatMap(findMarket(id), (m) => Effect.flatMap(readViewState(m.id), (view) => pricingView(m, now, view))),
              {
                concurrency: 4
              }
            )
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
