/**
 * The protocol's trading arithmetic, off-chain, to the raw unit: the pool's swap quote, the hook's
 * YES price and dynamic fee, the exchange's market-order matching and the router's waterfall
 * (protocol-facts sections 2 and 3; `tools/devnet/contracts/{Amm,Hook,Exchange,Router}.sol`, whose
 * integer arithmetic, rounding directions and revert conditions each function follows line by
 * line). Shared floor: the pipeline and the backend both import it; nothing here does I/O.
 *
 * Units: prices 1e6-scaled; USDC and outcome tokens 6 decimals, raw bigint units.
 */
import { yesPriceFromSqrt } from "./amm-price.js"

export const PRICE_UNIT = 1_000_000n
export const Q96 = 1n << 96n
export const MIN_TRADE_AMOUNT = 1_000n
export const MAX_CLOB_PRICE = 990_000n
export const MIN_CLOB_PRICE = 10_000n
export const DEFAULT_MAX_FILLS = 10
export const MAX_FILLS_PER_PLACE = 20

export type TradeSide = 0 | 1 | 2 | 3 // BUY_YES, SELL_YES, BUY_NO, SELL_NO
export const BUY_YES = 0
export const SELL_YES = 1
export const BUY_NO = 2
export const SELL_NO = 3
export const isBuySide = (side: number): boolean => side === BUY_YES || side === BUY_NO

const divUp = (a: bigint, b: bigint) => (a + b - 1n) / b

/** Why the chain would not do it: each is a revert (or the router's own refusal) on-chain. */
export class QuoteRevert extends Error {
  constructor(
    readonly reason:
      | "PoolNotInitialized"
      | "NoLiquidity"
      | "OutputTooLarge"
      | "ExactInUnfilled"
      | "ZeroAmount"
      | "Underflow"
      | "HookPaused"
      | "ExchangePaused",
    message: string
  ) {
    super(message)
  }
}

// ---------------------------------------------------------------------------------------------
// Hook

/** The hook's YES price of a pool at `sqrtPriceX96` (Hook.yesPrice); the pipeline's, too. */
export const yesPriceOf = yesPriceFromSqrt

/** The hook's dynamic LP fee in pips (1e6 = 100%) at `now` for a market ending at `endTime`. */
export const dynamicFee = (endTime: bigint, now: bigint): bigint => {
  const left = endTime > now ? endTime - now : 0n
  if (left > 7n * 86_400n) return 5_000n
  if (left > 3n * 86_400n) return 10_000n
  if (left > 86_400n) return 20_000n
  return 50_000n
}

// ---------------------------------------------------------------------------------------------
// Pool (PoolManager.quote): full-range liquidity, so one constant-L segment.

export interface PoolState {
  readonly initialized: boolean
  readonly sqrtPriceX96: bigint
  readonly liquidity: bigint
  readonly yesIsCurrency0: boolean
}

export interface SwapQuote {
  readonly amountIn: bigint
  readonly amountOut: bigint
  readonly sqrtPriceAfter: bigint
}

export const swapQuote = (pool: PoolState, fee: bigint, zeroForOne: boolean, exactInput: boolean, amount: bigint): SwapQuote => {
  if (!pool.initialized) throw new QuoteRevert("PoolNotInitialized", "the market's pool is not initialized")
  if (pool.liquidity === 0n) throw new QuoteRevert("NoLiquidity", "the market's pool has no liquidity")
  const l = pool.liquidity
  const p = pool.sqrtPriceX96
  if (exactInput) {
    const net = (amount * (PRICE_UNIT - fee)) / PRICE_UNIT
    if (zeroForOne) {
      const after = divUp(l * p, l + (net * p) / Q96)
      return { amountIn: amount, amountOut: (l * (p - after)) / Q96, sqrtPriceAfter: after }
    }
    const after = p + (net * Q96) / l
    return { amountIn: amount, amountOut: (l * Q96) / p - divUp(l * Q96, after), sqrtPriceAfter: after }
  }
  let net: bigint
  let after: bigint
  if (zeroForOne) {
    const drop = divUp(amount * Q96, l)
    if (drop >= p) throw new QuoteRevert("OutputTooLarge", "the pool cannot pay that much")
    after = p - drop
    net = divUp(l * Q96, after) - (l * Q96) / p
  } else {
    if ((amount * p) / Q96 >= l) throw new QuoteRevert("OutputTooLarge", "the pool cannot pay that much")
    after = divUp(l * p, l - (amount * p) / Q96)
    net = divUp(l * (after - p), Q96)
  }
  return { amountIn: divUp(net * PRICE_UNIT, PRICE_UNIT - fee), amountOut: amount, sqrtPriceAfter: after }
}

// ---------------------------------------------------------------------------------------------
// Exchange: a market order (Exchange.fillMarketOrder with no taker order)

/** A live maker order: `side` 0..3, `remaining` = amount - filled. Books list them in queue order. */
export interface BookOrder {
  readonly id: string
  readonly side: number
  readonly price: bigint
  readonly remaining: bigint
}

export interface ClobFill {
  readonly orderId: string
  readonly kind: "COMPLEMENTARY" | "MINT" | "MERGE"
  readonly price: bigint
  readonly shares: bigint
}

export interface ClobResult {
  /** Output-token units: tokens for buys, USDC for sells. */
  readonly filled: bigint
  /** Input units spent. */
  readonly cost: bigint
  readonly fills: ReadonlyArray<ClobFill>
}

/** What a BUY maker's lock releases when `q` more of its `remaining` fill (lock = floor(remaining * price / 1e6)). */
const buyRelease = (remaining: bigint, price: bigint, q: bigint) =>
  (remaining * price) / PRICE_UNIT - ((remaining - q) * price) / PRICE_UNIT

/**
 * The exchange's matching of a market order of `side` for `amountIn` (USDC budget for buys,
 * tokens for sells) at `limit` or better, up to `maxFills` maker fills, over `book` (live orders
 * of the market, each level in queue order). An arithmetic underflow the contract would revert on
 * throws `Underflow` (the router then skips the CLOB).
 */
export const matchMarketOrder = (
  book: ReadonlyArray<BookOrder>,
  side: number,
  limit: bigint,
  amountIn: bigint,
  maxFills: number
): ClobResult => {
  const buy = isBuySide(side)
  const remainingOf = new Map(book.map((o) => [o.id, o.remaining]))
  const best = (s: number): BookOrder | undefined => {
    // Best level of side s (highest price for bids, lowest for asks); its head is the first order listed there.
    let chosen: BookOrder | undefined
    for (const o of book) {
      if (o.side !== s || (remainingOf.get(o.id) ?? 0n) === 0n) continue
      if (chosen === undefined || (isBuySide(s) ? o.price > chosen.price : o.price < chosen.price)) chosen = o
    }
    return chosen
  }
  let remaining = amountIn
  let out = 0n
  let spent = 0n
  const fills: Array<ClobFill> = []
  while (remaining > 0n && fills.length < maxFills) {
    const compOrder = best(side ^ 1)
    const synthOrder = best(side ^ 2)
    let comp = compOrder?.price ?? 0n
    if (comp !== 0n && (buy ? comp > limit : comp < limit)) comp = 0n
    let synthEff = synthOrder === undefined ? 0n : PRICE_UNIT - synthOrder.price
    if (synthEff !== 0n && (buy ? synthEff > limit : synthEff < limit)) synthEff = 0n
    if (comp === 0n && synthEff === 0n) break
    const useComp = comp !== 0n && (synthEff === 0n || (buy ? comp <= synthEff : comp >= synthEff))
    const maker = (useComp ? compOrder : synthOrder)!
    const kind = useComp ? "COMPLEMENTARY" : buy ? "MINT" : "MERGE"
    const makerRemaining = remainingOf.get(maker.id)!
    let q = makerRemaining
    if (buy) {
      const eff = kind === "COMPLEMENTARY" ? maker.price : PRICE_UNIT - maker.price
      const affordable = (remaining * PRICE_UNIT) / eff
      if (affordable < q) q = affordable
    } else if (remaining < q) q = remaining
    if (q === 0n) break
    let pay: bigint
    if (kind === "COMPLEMENTARY" && buy) {
      pay = divUp(q * maker.price, PRICE_UNIT)
      out += q
    } else if (kind === "COMPLEMENTARY") {
      out += buyRelease(makerRemaining, maker.price, q)
      pay = q
    } else if (kind === "MINT") {
      pay = q - buyRelease(makerRemaining, maker.price, q)
      out += q
    } else {
      out += q - (q * maker.price) / PRICE_UNIT
      pay = q
    }
    if (pay > remaining) throw new QuoteRevert("Underflow", "the exchange would revert (budget underflow)")
    remaining -= pay
    spent += pay
    remainingOf.set(maker.id, makerRemaining - q)
    fills.push({ orderId: maker.id, kind, price: maker.price, shares: q })
  }
  return fills.length === 0 ? { filled: 0n, cost: 0n, fills: [] } : { filled: out, cost: spent, fills }
}

// ---------------------------------------------------------------------------------------------
// Router

export interface MarketForQuote {
  readonly pool: PoolState | undefined
  readonly endTime: bigint
  readonly book: ReadonlyArray<BookOrder>
  /**
   * The exchange is paused: its fillMarketOrder reverts, the router catches it (ClobSkipped) and
   * sends the whole input to the AMM, so a trade the AMM cannot take reverts.
   */
  readonly exchangePaused?: boolean
  /** The hook is paused: every swap reverts, so any AMM leg makes the trade revert. */
  readonly hookPaused?: boolean
}

/** Router._clobLimit: the AMM's fee-adjusted spot on the taker's side, on the price grid. */
export const clobLimit = (side: number, pool: PoolState | undefined, fee: bigint): bigint => {
  if (pool === undefined || !pool.initialized || pool.liquidity === 0n) return isBuySide(side) ? MAX_CLOB_PRICE : MIN_CLOB_PRICE
  const yes = yesPriceOf(pool.sqrtPriceX96, pool.yesIsCurrency0)
  const buyYes = (yes * PRICE_UNIT) / (PRICE_UNIT - fee)
  const sellYes = (yes * (PRICE_UNIT - fee)) / PRICE_UNIT
  let limit =
    side === BUY_YES
      ? buyYes
      : side === SELL_YES
        ? sellYes
        : side === BUY_NO
          ? PRICE_UNIT > sellYes
            ? PRICE_UNIT - sellYes
            : 0n
          : PRICE_UNIT > buyYes
            ? PRICE_UNIT - buyYes
            : 0n
  if (limit > MAX_CLOB_PRICE) limit = MAX_CLOB_PRICE
  if (limit < MIN_CLOB_PRICE) limit = MIN_CLOB_PRICE
  return limit
}

/** Router._mintAmount: the largest mint m with m - (USDC from selling m YES) <= budget. */
export const mintAmount = (pool: PoolState, fee: bigint, budget: bigint): bigint => {
  let low = budget
  let high = budget * 50n
  while (low < high) {
    const mid = (low + high + 1n) / 2n
    const r = swapQuote(pool, fee, pool.yesIsCurrency0, true, mid)
    if (mid - r.amountOut <= budget) low = mid
    else high = mid - 1n
  }
  return low
}

/**
 * The AMM leg for `amount` of input (Router._ammLeg): `out` in the output token, `spent` the input
 * it consumes (all of it, except BUY_NO: mint - proceeds of the YES sold, the rest is refunded).
 */
export const ammLeg = (
  side: number,
  pool: PoolState | undefined,
  fee: bigint,
  amount: bigint
): { readonly out: bigint; readonly spent: bigint } => {
  if (pool === undefined) throw new QuoteRevert("PoolNotInitialized", "the market has no pool")
  const yesIs0 = pool.yesIsCurrency0
  if (side === BUY_YES) return { out: swapQuote(pool, fee, !yesIs0, true, amount).amountOut, spent: amount }
  if (side === SELL_YES) return { out: swapQuote(pool, fee, yesIs0, true, amount).amountOut, spent: amount }
  if (side === BUY_NO) {
    const mint = (mintAmount(pool, fee, amount) * 995n) / 1000n
    const proceeds = swapQuote(pool, fee, yesIs0, true, mint).amountOut
    return { out: mint, spent: mint - proceeds }
  }
  const cost = swapQuote(pool, fee, !yesIs0, false, amount).amountIn
  if (cost > amount) throw new QuoteRevert("Underflow", "buying back the YES costs more than the NO pays")
  return { out: amount - cost, spent: amount }
}

export interface RouterQuote {
  readonly amountOut: bigint
  readonly clobFilled: bigint
  readonly clobSpent: bigint
  readonly ammFilled: bigint
  /** Input the AMM leg consumed; amountIn - clobSpent - ammSpent is refunded as dust. */
  readonly ammSpent: bigint
  readonly limitPrice: bigint
  readonly fee: bigint
  readonly fills: ReadonlyArray<ClobFill>
  /** Spot price of the output token before the trade, input per output, 1e6-scaled (0: no AMM spot). */
  readonly spotPrice: bigint
}

/**
 * Router.trade's amounts for an exact-input trade of `amountIn` at chain time `now` (the caller
 * checks tradability: the router's own MarketNotTradable comes before any of this).
 */
export const quoteTrade = (market: MarketForQuote, side: number, amountIn: bigint, maxFills: number, now: bigint): RouterQuote => {
  if (amountIn < MIN_TRADE_AMOUNT) throw new QuoteRevert("ZeroAmount", `amountIn must be at least ${MIN_TRADE_AMOUNT} raw units`)
  const fills0 = maxFills === 0 ? DEFAULT_MAX_FILLS : maxFills
  const capped = fills0 > MAX_FILLS_PER_PLACE ? MAX_FILLS_PER_PLACE : fills0
  const fee = dynamicFee(market.endTime, now)
  const limitPrice = clobLimit(side, market.pool, fee)
  let clob: ClobResult = { filled: 0n, cost: 0n, fills: [] }
  if (market.exchangePaused !== true) {
    try {
      clob = matchMarketOrder(market.book, side, limitPrice, amountIn, capped)
    } catch (error) {
      if (!(error instanceof QuoteRevert)) throw error
    }
  }
  const rest = amountIn - clob.cost
  if (rest >= MIN_TRADE_AMOUNT && market.hookPaused === true)
    throw new QuoteRevert("HookPaused", "the AMM hook is paused and the book cannot fill the whole trade")
  const amm = rest >= MIN_TRADE_AMOUNT ? ammLegOf(market, side, fee, rest) : { out: 0n, spent: 0n }
  const ammFilled = amm.out
  const amountOut = clob.filled + ammFilled
  if (amountOut === 0n)
    throw new QuoteRevert(
      "ExactInUnfilled",
      "nothing would fill: the book has no order within the AMM's price and the pool cannot take the rest"
    )
  const pool = market.pool
  const spotPrice = pool === undefined || !pool.initialized || pool.liquidity === 0n ? 0n : spotOf(side, pool, fee)
  return {
    amountOut,
    clobFilled: clob.filled,
    clobSpent: clob.cost,
    ammFilled,
    ammSpent: amm.spent,
    limitPrice,
    fee,
    fills: clob.fills,
    spotPrice
  }
}

/** The AMM leg; while the exchange is paused the AMM is all there is, so its revert is the pause's. */
const ammLegOf = (market: MarketForQuote, side: number, fee: bigint, amount: bigint) => {
  try {
    return ammLeg(side, market.pool, fee, amount)
  } catch (error) {
    if (market.exchangePaused !== true || !(error instanceof QuoteRevert)) throw error
    throw new QuoteRevert(
      "ExchangePaused",
      `the exchange is paused (the router skips the book) and the AMM cannot take the trade: ${error.message}`
    )
  }
}

/** The fee-adjusted marginal price of the output token, in input per output (1e6 scale). */
const spotOf = (side: number, pool: PoolState, fee: bigint): bigint => {
  const yes = yesPriceOf(pool.sqrtPriceX96, pool.yesIsCurrency0)
  const buyYes = (yes * PRICE_UNIT) / (PRICE_UNIT - fee)
  const sellYes = (yes * (PRICE_UNIT - fee)) / PRICE_UNIT
  if (side === BUY_YES) return buyYes
  if (side === SELL_YES) return sellYes
  if (side === BUY_NO) return PRICE_UNIT - sellYes
  return PRICE_UNIT - buyYes
}
