/**
 * The quote, pure: the router's waterfall (`schema/protocol/router-math.ts`, to the raw unit)
 * over one market's indexed book and pool at one chain moment, shaped as the backend's answer.
 * No I/O and no clock: the handler reads the market, the state and the chain's time and passes
 * them in, so a quote is a function of the indexed head (what the answer cache keys on) and the
 * request.
 *
 * A market the router would refuse is MARKET_PAUSED (paused, past its end, resolved or in refund
 * mode: the message says which), never a zero quote; a trade the router would revert on is
 * VALIDATION_FAILED on `amountIn`, naming the revert.
 */
import { Either } from "effect"
import { MarketPaused, ValidationFailed } from "../../../schema/errors.js"
import { marketStatus } from "../../../schema/market-status.js"
import { marketIdToHex, money, PRICE_SCALE, type MoneyUnit } from "../../../schema/primitives.js"
import {
  BUY_YES,
  isBuySide,
  PRICE_UNIT,
  QuoteRevert,
  quoteTrade,
  SELL_YES,
  type RouterQuote
} from "../../../schema/protocol/router-math.js"
import type { MarketRecord } from "../../read/markets.js"
import type { ChainNow } from "../markets/repository.js"
import type { QuoteState } from "./repository.js"

/** MARKET_PAUSED unless the router would take a trade on `market` at `now`. */
export const tradableProblem = (market: MarketRecord, now: ChainNow): MarketPaused | undefined => {
  const status = marketStatus(market, now)
  if (status === "active") return undefined
  const why = {
    paused: "trading is paused",
    closed: "the market has ended and awaits resolution",
    resolved: "the market is resolved (redeem instead)",
    refunding: "the market is in refund mode (refund instead)"
  }[status]
  return new MarketPaused({ message: `market ${market.id} cannot be traded: ${why}` })
}

const amountProblem = (message: string) => new ValidationFailed({ message, details: [{ path: "amountIn", message }] })

/** The outcome a trade side buys or sells. */
export const outcomeOf = (side: number): "YES" | "NO" => (side === BUY_YES || side === SELL_YES ? "YES" : "NO")

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
): Either.Either<RouterQuote, MarketPaused | ValidationFailed> => {
  try {
    return Either.right(
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
      )
    )
  } catch (error) {
    if (!(error instanceof QuoteRevert)) throw error
    if (error.reason === "HookPaused" || error.reason === "ExchangePaused")
      return Either.left(new MarketPaused({ message: `market ${market.id}: ${error.message}` }))
    return Either.left(amountProblem(`the router would revert (${error.reason}): ${error.message}`))
  }
}

const bpsOf = (numerator: bigint, denominator: bigint) => (denominator === 0n ? 0 : Number((numerator * 10_000n) / denominator))

/** Without a pool: the first book fill's price on the taker's side is the reference. */
const firstFillPrice = (fills: ReadonlyArray<{ readonly kind: string; readonly price: bigint }>): bigint | undefined => {
  const first = fills[0]
  if (first === undefined) return undefined
  return first.kind === "COMPLEMENTARY" ? first.price : PRICE_UNIT - first.price
}

export interface QuoteInput<T extends string> {
  readonly market: MarketRecord
  readonly state: QuoteState
  readonly now: ChainNow
  /** The trade type as asked (echoed), and its router code. */
  readonly tradeType: T
  readonly side: number
  readonly amountIn: bigint
  readonly maxFills: number
  readonly slippageBps: number
}

/** The backend's quote (all but `indexedAt`, which the handler adds), or why the router would refuse. */
export const quote = <T extends string>(input: QuoteInput<T>) =>
  Either.map(routerQuote(input.market, input.state, input.side, input.amountIn, input.maxFills, input.now), (quoted) => {
    const { amountIn, slippageBps } = input
    const buy = isBuySide(input.side)
    const outcome = outcomeOf(input.side)
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
      marketId: marketIdToHex(input.market.id),
      tradeType: input.tradeType,
      amountIn: money(amountIn, 6, inUnit),
      amountOut: money(quoted.amountOut, 6, outUnit),
      clobFilled: money(quoted.clobFilled, 6, outUnit),
      ammFilled: money(quoted.ammFilled, 6, outUnit),
      refund: money(amountIn - used, 6, inUnit),
      averagePrice: average > PRICE_UNIT ? PRICE_UNIT : average,
      priceImpactBps: impact,
      slippageBps,
      minAmountOut: money((quoted.amountOut * BigInt(10_000 - slippageBps)) / 10_000n, 6, outUnit),
      maxFills: input.maxFills,
      clobLimitPrice: quoted.limitPrice,
      route
    }
  })
