/**
 * The trader totals (pipeline/reduce/trader-activity.ts) on hand-made events: running totals per
 * address, a snapshot per active UTC day, streaks over consecutive trading days, liquidity days,
 * per-market footprint; and on Postgres, a reorg reverts them to the common ancestor exactly and
 * the replacing branch equals a from-scratch fold.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { DomainEvent } from "../../schema/domain-events.js"
import type { LocatedEvent } from "../../pipeline/batch.js"
import { DAY_SECONDS } from "../../pipeline/reduce/trader-activity.js"
import { reorgEqualsScratch } from "./reorg-check.js"
import { A, fold, H, rows } from "./fold.js"

const DAY0 = 19_700 // a UTC day number; its first second is DAY0 * 86400
const at = (day: number, second = 0) => DAY0 * DAY_SECONDS + day * DAY_SECONDS + second
const created: DomainEvent = {
  _tag: "MarketCreated",
  marketId: 1n,
  creator: A(1),
  oracle: A(9),
  yesToken: A(10),
  noToken: A(11),
  endTime: 2_000_000_000n,
  question: "Q?"
}
const trade = (trader: string, tradeType: 0 | 1 | 2 | 3, usdc: bigint, shares: bigint, recipient = trader): DomainEvent => ({
  _tag: "Trade",
  marketId: 1n,
  trader,
  recipient,
  tradeType,
  amountIn: tradeType === 0 || tradeType === 2 ? usdc : shares,
  amountOut: tradeType === 0 || tradeType === 2 ? shares : usdc,
  clobFilled: 0n,
  ammFilled: tradeType === 0 || tradeType === 2 ? shares : usdc,
  builder: null
})
const USDC = 1_000_000n

describe("trader totals (in memory)", () => {
  it("running totals, one snapshot per active day, and streaks of 7 consecutive days", () => {
    // Days 0..6 (a 7-day run), a gap, days 8..9; the largest trade (12 USDC) makes the first trade.
    const days = [0, 1, 2, 3, 4, 5, 6, 8, 9]
    const s = fold([
      { event: created, timestamp: at(0) },
      ...days.map((d, i) => ({ event: trade(A(2), 0, (i === 3 ? 12n : 1n) * USDC, 2n * USDC), timestamp: at(d, 100) })),
      { event: trade(A(2), 1, 5n * USDC, 3n * USDC), timestamp: at(9, 200) }
    ])
    const [total] = rows(s.rows.traderTotals)
    expect(total).toMatchObject({
      address: A(2),
      day: DAY0 + 9,
      volume: 25n * USDC,
      trades: 10n,
      firstTrade: true,
      firstTradeAt: at(0, 100),
      lastTradeAt: at(9, 200),
      dayFirstTradeAt: at(9, 100),
      lastTradeDay: DAY0 + 9,
      run: 2,
      longestRun: 7,
      streaks: 1,
      liquidityDays: 0
    })
    const byDay = rows(s.rows.traderDays).sort((a, b) => a.day - b.day)
    expect(byDay.map((r) => r.day - DAY0)).toEqual(days)
    // A day row is the totals at the end of that day.
    expect(byDay[2]).toMatchObject({ volume: 3n * USDC, trades: 3n, firstTrade: false, run: 3, streaks: 0 })
    expect(byDay[6]).toMatchObject({ volume: 18n * USDC, trades: 7n, firstTrade: true, run: 7, streaks: 1 })
    expect(byDay[8]).toEqual(total)
    // Net shares as recipient: bought 9 x 2 YES, sold 3 YES.
    expect(rows(s.rows.traderMarkets)).toEqual([{ address: A(2), marketId: 1n, lastTradedAt: at(9, 200), netYes: 15n * USDC, netNo: 0n }])
  })

  it("a trade's shares count for the recipient's market row, its volume for the trader", () => {
    const s = fold([
      { event: created, timestamp: at(0) },
      { event: trade(A(2), 2, 50n * USDC, 80n * USDC, A(3)), timestamp: at(0, 5) }
    ])
    expect(rows(s.rows.traderTotals).map((r) => [r.address, r.volume])).toEqual([[A(2), 50n * USDC]])
    expect(rows(s.rows.traderMarkets).sort((a, b) => a.address.localeCompare(b.address))).toEqual([
      { address: A(2), marketId: 1n, lastTradedAt: at(0, 5), netYes: 0n, netNo: 0n },
      { address: A(3), marketId: 1n, lastTradedAt: null, netYes: 0n, netNo: 80n * USDC }
    ])
  })
})

// On Postgres: liquidity adds and trades over three days, reorged from the second block.
const ROUTER = A(0xf00d)
const protocol = { has: (a: string) => a === ROUTER, isVenue: (a: string) => a === ROUTER }
const POOL = H(0x9001)
const ev = (block: number, logIndex: number, timestamp: number, event: DomainEvent): LocatedEvent => ({
  event,
  at: { block, timestamp, txHash: H(block * 100 + logIndex), logIndex, address: A(0xd1a) }
})
const lp = (block: number, logIndex: number, timestamp: number, owner: string, delta: bigint) =>
  ev(block, logIndex, timestamp, {
    _tag: "ModifyLiquidity",
    id: POOL,
    sender: owner,
    tickLower: -600,
    tickUpper: 600,
    liquidityDelta: delta,
    salt: H(0)
  })
const block10 = [
  ev(10, 0, at(0), created),
  ev(10, 1, at(0), { _tag: "Hook_PoolRegistered", marketId: 1n, poolId: POOL, yesToken: A(10), quoteToken: A(0x20), yesIsCurrency0: true }),
  ev(10, 2, at(0), {
    _tag: "Initialize",
    id: POOL,
    currency0: A(10),
    currency1: A(0x20),
    fee: 0x800000,
    tickSpacing: 60,
    hooks: A(0x30),
    sqrtPriceX96: 1n << 96n,
    tick: 0
  }),
  ev(10, 3, at(0, 10), trade(A(2), 0, 20n * USDC, 30n * USDC)),
  lp(10, 4, at(0, 20), A(2), 1_000n)
]
const block11 = [
  ev(11, 0, at(1, 10), trade(A(2), 0, 7n * USDC, 9n * USDC)),
  lp(11, 1, at(1, 20), A(2), 500n),
  lp(11, 2, at(1, 30), A(2), -200n)
]
const block12 = [ev(12, 0, at(2, 10), trade(A(3), 3, 4n * USDC, 5n * USDC)), ev(12, 1, at(2, 20), trade(A(2), 1, 1n * USDC, 2n * USDC))]
const block11b = [ev(11, 0, at(0, 500), trade(A(2), 2, 3n * USDC, 4n * USDC)), lp(11, 1, at(1, 5), A(4), 7n)]

const TABLES = ["trader_total", "trader_day", "trader_market"]
const dump = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const out: Record<string, unknown> = {}
  for (const t of TABLES) out[t] = yield* sql.unsafe(`select * from ${t} order by (${t}.*)::text`)
  return out
})

describe("trader totals (Postgres, reorg)", () => {
  it.live("a revert restores the totals, day rows and market rows of the common ancestor; the new branch equals a from-scratch fold", () =>
    Effect.gen(function* () {
      const reorged = yield* reorgEqualsScratch({
        protocol,
        dump,
        blocks: { b10: block10, b11: block11, b12: block12, b11b: block11b },
        atTip: (at12, atAncestor) => {
          for (const t of TABLES) expect.soft(at12[t], t).not.toEqual(atAncestor[t])
          // Three days of A(2): a run of 3 trading days, liquidity on days 0 and 1.
          expect(at12["trader_total"]).toContainEqual(
            expect.objectContaining({ address: A(2), trades: "3", run: 3, longest_run: 3, liquidity_days: 2, volume: "28000000" })
          )
        }
      })
      expect(reorged["trader_total"]).toEqual([
        expect.objectContaining({
          address: A(2),
          day: String(DAY0),
          trades: "2",
          volume: "23000000",
          first_trade: true,
          liquidity_days: 1,
          run: 1
        }),
        expect.objectContaining({ address: A(4), day: String(DAY0 + 1), trades: "0", volume: "0", liquidity_days: 1 })
      ])
    })
  )
})
