/**
 * AMM and candle reducers on hand-made events: rule 5 (registered pools only), pool state,
 * liquidity positions, and OHLC + volume per timeframe from price snapshots and router Trades.
 */
import { describe, expect, it } from "vitest"
import type { DomainEvent } from "../../schema/domain-events.js"
import { lpKey, poolKey } from "../../pipeline/reduce/amm.js"
import { bucketStart, candleKey } from "../../pipeline/reduce/candles.js"
import { A, fold, H, rows } from "./fold.js"

const POOL = H(0x9001)
const OTHER = H(0x9002)
const lp = A(0x77)
const created: DomainEvent = {
  _tag: "MarketCreated",
  marketId: 1n,
  creator: A(1),
  oracle: A(9),
  yesToken: A(0x10),
  noToken: A(0x11),
  endTime: 2_000_000_000n,
  question: "Q?"
}
const initialize = (id: string): DomainEvent => ({
  _tag: "Initialize",
  id,
  currency0: A(0x10),
  currency1: A(0x20),
  fee: 0x800000,
  tickSpacing: 60,
  hooks: A(0x30),
  sqrtPriceX96: 56022770974786139918731938227n,
  tick: -6932
})
const modify = (id: string, delta: bigint, salt = H(0)): DomainEvent => ({
  _tag: "ModifyLiquidity",
  id,
  sender: lp,
  tickLower: -887220,
  tickUpper: 887220,
  liquidityDelta: delta,
  salt
})

describe("AMM", () => {
  it("pool-manager events of unregistered pools change nothing (rule 5)", () => {
    const s = fold([created, initialize(OTHER), modify(OTHER, 1000n)])
    expect(rows(s.rows.pools)).toEqual([])
    expect(rows(s.rows.lpPositions)).toEqual([])
    expect(s.logs.liquidityEvents).toEqual([])
  })

  it("a registered pool: initialize, add liquidity, swap, remove; positions leave at zero", () => {
    const s = fold([
      created,
      { _tag: "Hook_PoolRegistered", marketId: 1n, poolId: POOL, yesToken: A(0x10), quoteToken: A(0x20), yesIsCurrency0: true },
      initialize(POOL),
      modify(POOL, 5_000n),
      modify(POOL, 2_000n, H(1)),
      {
        _tag: "Swap",
        id: POOL,
        sender: A(0xf00d),
        amount0: -10n,
        amount1: 12n,
        sqrtPriceX96: 60000000000000000000000000000n,
        liquidity: 6_500n,
        tick: -5500,
        fee: 10_000
      },
      modify(POOL, -5_000n)
    ])
    expect(s.rows.pools.map.get(poolKey(POOL))).toMatchObject({
      marketId: 1n,
      initialized: true,
      sqrtPriceX96: 60000000000000000000000000000n,
      tick: -5500,
      fee: 0x800000,
      tickSpacing: 60,
      liquidity: 6_500n - 5_000n,
      updatedBlock: 107
    })
    expect(s.rows.lpPositions.map.get(lpKey(POOL, lp, -887220, 887220, H(0)))).toBeNull()
    expect(rows(s.rows.lpPositions)).toEqual([
      {
        poolId: POOL,
        owner: lp,
        tickLower: -887220,
        tickUpper: 887220,
        salt: H(1),
        marketId: 1n,
        liquidity: 2_000n,
        updatedAt: 1_700_000_105
      }
    ])
    expect(s.logs.liquidityEvents.map((e) => e.liquidityDelta)).toEqual([5_000n, 2_000n, -5_000n])
  })
})

const T0 = 1_700_000_080 // 40 s into a minute
const trade = (tradeType: 0 | 1, amountIn: bigint, amountOut: bigint, timestamp: number) => ({
  event: {
    _tag: "Trade",
    marketId: 1n,
    trader: A(5),
    recipient: A(5),
    tradeType,
    amountIn,
    amountOut,
    clobFilled: 0n,
    ammFilled: amountOut,
    builder: null
  } as DomainEvent,
  timestamp
})
const hook = (yesPrice: bigint, timestamp: number) => ({
  event: {
    _tag: "Hook_MarketTraded",
    marketId: 1n,
    trader: A(5),
    isBuy: true,
    usdcVolume: 1n,
    yesVolume: 1n,
    yesPrice,
    noPrice: 1_000_000n - yesPrice
  } as DomainEvent,
  timestamp
})

describe("candles", () => {
  it("OHLC from every price snapshot, volume and count from router Trades only", () => {
    const s = fold([
      created,
      trade(0, 6_000_000n, 10_000_000n, T0), // router snapshot 0.60, volume 6
      hook(620_000n, T0 + 5), // price only
      trade(1, 10_000_000n, 5_000_000n, T0 + 10), // sell YES at 0.50, volume 5
      hook(550_000n, T0 + 15),
      trade(0, 7_000_000n, 10_000_000n, T0 + 30) // next minute: 0.70
    ])
    const minute = bucketStart(60, T0)
    expect(s.rows.candles.map.get(candleKey(1n, "1m", minute))).toEqual({
      marketId: 1n,
      timeframe: "1m",
      bucket: minute,
      open: 600_000n,
      high: 620_000n,
      low: 500_000n,
      close: 550_000n,
      volume: 11_000_000n,
      tradeCount: 2n
    })
    expect(s.rows.candles.map.get(candleKey(1n, "1m", minute + 60))).toMatchObject({
      open: 700_000n,
      close: 700_000n,
      volume: 7_000_000n,
      tradeCount: 1n
    })
    expect(s.rows.candles.map.get(candleKey(1n, "1h", bucketStart(3600, T0)))).toMatchObject({
      open: 600_000n,
      high: 700_000n,
      low: 500_000n,
      close: 700_000n,
      volume: 18_000_000n,
      tradeCount: 3n
    })
    // Candle prices are exactly the price snapshots.
    expect(s.logs.priceSnapshots.map((p) => p.yesPrice)).toEqual([600_000n, 620_000n, 500_000n, 550_000n, 700_000n])
  })

  it("buckets: multiples of the timeframe, weeks from Monday 00:00 UTC", () => {
    expect(bucketStart(300, 1_700_000_040)).toBe(1_699_999_800)
    // 2023-11-14 22:14 UTC was a Tuesday; its week began Monday 2023-11-13 00:00 UTC.
    expect(bucketStart(604_800, 1_700_000_040)).toBe(1_699_833_600)
    expect(new Date(1_699_833_600 * 1000).getUTCDay()).toBe(1)
    expect(bucketStart(604_800, 1_699_833_600)).toBe(1_699_833_600)
    expect(bucketStart(604_800, 1_699_833_599)).toBe(1_699_833_600 - 604_800)
  })

  it("a trade that moved no shares adds volume without a price", () => {
    const s = fold([created, trade(0, 3_000_000n, 0n, T0)])
    expect(s.rows.candles.map.get(candleKey(1n, "1d", bucketStart(86_400, T0)))).toMatchObject({
      open: null,
      close: null,
      volume: 3_000_000n,
      tradeCount: 1n
    })
  })
})
