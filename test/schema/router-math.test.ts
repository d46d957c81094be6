/**
 * The router's waterfall rules, by hand-computed cases (the devnet test, quote-vs-router, checks
 * the same code against the contracts to the raw unit; these pin the rules it follows).
 */
import { describe, expect, it } from "vitest"
import {
  BUY_NO,
  BUY_YES,
  clobLimit,
  dynamicFee,
  matchMarketOrder,
  Q96,
  QuoteRevert,
  quoteTrade,
  SELL_NO,
  SELL_YES,
  swapQuote,
  yesPriceOf,
  type BookOrder,
  type PoolState
} from "../../schema/protocol/router-math.js"

const order = (id: string, side: number, price: bigint, remaining: bigint): BookOrder => ({ id, side, price, remaining })
// sqrtPrice for YES = 0.5 with YES as currency0 (price1per0 = 0.5): sqrt(0.5) * 2^96.
const HALF = 56022770974786139918731938227n
const pool: PoolState = { initialized: true, sqrtPriceX96: HALF, liquidity: 10n ** 12n, yesIsCurrency0: true }

describe("hook", () => {
  it("prices the pool and charges the fee tier by time to end", () => {
    expect(yesPriceOf(HALF, true)).toBe(499_999n)
    expect(yesPriceOf(Q96, false)).toBe(1_000_000n)
    expect(dynamicFee(100n + 8n * 86_400n, 100n)).toBe(5_000n)
    expect(dynamicFee(100n + 4n * 86_400n, 100n)).toBe(10_000n)
    expect(dynamicFee(100n + 2n * 86_400n, 100n)).toBe(20_000n)
    expect(dynamicFee(100n + 86_400n, 100n)).toBe(50_000n)
    expect(dynamicFee(0n, 100n)).toBe(50_000n)
  })
})

describe("exchange: market orders", () => {
  it("fills the best price first, FIFO within a level, and pays the maker's price rounded up", () => {
    const book = [
      order("a", SELL_YES, 400_000n, 5_000_000n),
      order("b", SELL_YES, 300_000n, 1_000_000n),
      order("c", SELL_YES, 300_000n, 1_000_000n)
    ]
    const r = matchMarketOrder(book, BUY_YES, 450_000n, 1_000_000n, 10)
    expect(r.fills.map((f) => f.orderId)).toEqual(["b", "c", "a"])
    // 1 share at 0.30 twice (0.60 USDC), then 0.40 left buys floor(0.4 / 0.4) = 1 share of "a".
    expect(r).toMatchObject({ filled: 3_000_000n, cost: 1_000_000n })
  })

  it("stops at the limit and at maxFills", () => {
    const book = [
      order("a", SELL_YES, 300_000n, 1_000_000n),
      order("b", SELL_YES, 300_000n, 1_000_000n),
      order("c", SELL_YES, 500_000n, 1_000_000n)
    ]
    expect(matchMarketOrder(book, BUY_YES, 400_000n, 10_000_000n, 10).fills.map((f) => f.orderId)).toEqual(["a", "b"])
    expect(matchMarketOrder(book, BUY_YES, 400_000n, 10_000_000n, 1).fills.map((f) => f.orderId)).toEqual(["a"])
  })

  it("mints against a NO bid when that is cheaper, and merges against a NO ask for a seller", () => {
    // BUY_YES taker, NO bid at 0.75: YES effectively at 0.25, cheaper than the YES ask at 0.30.
    const mint = matchMarketOrder(
      [order("ask", SELL_YES, 300_000n, 10_000_000n), order("nobid", BUY_NO, 750_000n, 2_000_000n)],
      BUY_YES,
      400_000n,
      1_000_000n,
      10
    )
    expect(mint.fills[0]).toMatchObject({ orderId: "nobid", kind: "MINT" })
    // The maker's lock pays 0.75 per share; the taker pays the rest: 2 shares for 0.50 USDC.
    expect(mint.fills[0]!.shares).toBe(2_000_000n)
    expect(mint.cost).toBeGreaterThanOrEqual(500_000n)
    // SELL_YES taker, NO ask at 0.40: merging pays 0.60 per YES, more than the YES bid at 0.55.
    const merge = matchMarketOrder(
      [order("bid", BUY_YES, 550_000n, 10_000_000n), order("noask", SELL_NO, 400_000n, 1_000_000n)],
      SELL_YES,
      500_000n,
      1_000_000n,
      10
    )
    expect(merge).toMatchObject({ filled: 600_000n, cost: 1_000_000n })
    expect(merge.fills[0]!.kind).toBe("MERGE")
  })
})

describe("router", () => {
  it("lets the book fill only at the AMM's fee-adjusted spot or better", () => {
    const fee = 5_000n
    expect(clobLimit(BUY_YES, pool, fee)).toBe((499_999n * 1_000_000n) / 995_000n)
    expect(clobLimit(SELL_NO, pool, fee)).toBe(1_000_000n - (499_999n * 1_000_000n) / 995_000n)
    expect(clobLimit(BUY_NO, undefined, fee)).toBe(990_000n)
    expect(clobLimit(SELL_YES, undefined, fee)).toBe(10_000n)
  })

  it("sends the rest to the pool, and out = clob + amm", () => {
    const book = [order("a", SELL_YES, 300_000n, 2_000_000n)]
    const q = quoteTrade({ pool, endTime: 10n ** 9n, book }, BUY_YES, 10_000_000n, 0, 0n)
    expect(q.clobFilled).toBe(2_000_000n)
    expect(q.clobSpent).toBe(600_000n)
    expect(q.ammFilled).toBe(swapQuote(pool, 5_000n, false, true, 9_400_000n).amountOut)
    expect(q.amountOut).toBe(q.clobFilled + q.ammFilled)
  })

  it("refuses what the router reverts on: dust, nothing to fill, a paused hook with an AMM leg", () => {
    const empty: PoolState = { ...pool, liquidity: 0n }
    expect(() => quoteTrade({ pool, endTime: 10n ** 9n, book: [] }, BUY_YES, 999n, 0, 0n)).toThrow(QuoteRevert)
    expect(() => quoteTrade({ pool: empty, endTime: 10n ** 9n, book: [] }, SELL_YES, 5_000_000n, 0, 0n)).toThrow(QuoteRevert)
    expect(() => quoteTrade({ pool, endTime: 10n ** 9n, book: [], hookPaused: true }, BUY_NO, 5_000_000n, 0, 0n)).toThrow(/paused/)
    // With the whole trade on the book, a paused hook does not matter.
    const book = [order("a", SELL_YES, 300_000n, 100_000_000n)]
    expect(quoteTrade({ pool, endTime: 10n ** 9n, book, hookPaused: true }, BUY_YES, 3_000_000n, 0, 0n).ammFilled).toBe(0n)
  })

  it("a paused exchange: the book is skipped and the whole input goes to the AMM; without a pool that is a revert of the pause", () => {
    const book = [order("a", SELL_YES, 300_000n, 100_000_000n), order("b", BUY_NO, 700_000n, 100_000_000n)]
    const open = quoteTrade({ pool, endTime: 10n ** 9n, book }, BUY_YES, 3_000_000n, 0, 0n)
    expect(open.clobFilled).toBeGreaterThan(0n)
    const paused = quoteTrade({ pool, endTime: 10n ** 9n, book, exchangePaused: true }, BUY_YES, 3_000_000n, 0, 0n)
    expect(paused).toMatchObject({ clobFilled: 0n, clobSpent: 0n, fills: [], ammSpent: 3_000_000n })
    expect(paused.ammFilled).toBe(swapQuote(pool, 5_000n, false, true, 3_000_000n).amountOut)
    // The limit the router passes is computed all the same (it is an argument of the call that reverts).
    expect(paused.limitPrice).toBe(open.limitPrice)
    const revert = (run: () => unknown) => {
      try {
        run()
      } catch (error) {
        return error instanceof QuoteRevert ? error.reason : error
      }
      return "no revert"
    }
    expect(revert(() => quoteTrade({ pool: undefined, endTime: 10n ** 9n, book, exchangePaused: true }, SELL_YES, 3_000_000n, 0, 0n))).toBe(
      "ExchangePaused"
    )
    expect(
      revert(() =>
        quoteTrade({ pool: { ...pool, liquidity: 0n }, endTime: 10n ** 9n, book, exchangePaused: true }, BUY_NO, 3_000_000n, 0, 0n)
      )
    ).toBe("ExchangePaused")
    // Both venues paused: the hook's pause is the reason.
    expect(
      revert(() => quoteTrade({ pool, endTime: 10n ** 9n, book, exchangePaused: true, hookPaused: true }, BUY_YES, 3_000_000n, 0, 0n))
    ).toBe("HookPaused")
  })
})
