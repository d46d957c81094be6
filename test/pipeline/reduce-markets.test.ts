/**
 * The event-source rules, each with a test that fails when the rule is broken, and a fold of a
 * whole synthetic chain whose totals must equal independent sums over its events.
 */
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import type { DomainEvent } from "../../schema/domain-events.js"
import { AddressBook, decodeLog, protocolContracts } from "../../pipeline/decode.js"
import { marketRow, reduceEvent } from "../../pipeline/reduce/markets.js"
import { positionKey } from "../../pipeline/reduce/positions.js"
import type { Located } from "../../pipeline/reduce/model.js"
import { protocolOf } from "../../pipeline/reduce/protocol-totals.js"
import { emptyState, type State } from "../../pipeline/reduce/state.js"
import { generateSynthetic } from "../../tools/recording/synthetic.js"
import { ReplayChain } from "../../tools/replay/chain.js"

const A = (n: number) => `0x${n.toString(16).padStart(40, "0")}`
const ROUTER = A(0xf00d)
const at = (block: number, logIndex = 0): Located => ({
  block,
  timestamp: 1_700_000_000 + block,
  txHash: `0x${"ab".repeat(32)}`,
  logIndex,
  address: A(0xd1a)
})
const protocol = { has: (a: string) => a === ROUTER, isVenue: (a: string) => a === ROUTER }
const alice = A(1)
const bob = A(2)

const run = (events: ReadonlyArray<DomainEvent>): State => {
  const w = emptyState()
  events.forEach((e, i) => reduceEvent(w, e, at(100 + i), protocol))
  return w
}

const created: DomainEvent = {
  _tag: "MarketCreated",
  marketId: 1n,
  creator: alice,
  oracle: A(9),
  yesToken: A(10),
  noToken: A(11),
  endTime: 2_000_000_000n,
  question: "Q?"
}
const trade = (recipient: string, tradeType: 0 | 1 | 2 | 3, amountIn: bigint, amountOut: bigint, trader = alice): DomainEvent => ({
  _tag: "Trade",
  marketId: 1n,
  trader,
  recipient,
  tradeType,
  amountIn,
  amountOut,
  clobFilled: 0n,
  ammFilled: amountOut,
  builder: null
})

describe("event-source rules", () => {
  it("1. Trade is the only source of volume and trade counts, in USDC on both sides", () => {
    const w = run([created, trade(alice, 0, 50_000_000n, 90_000_000n), trade(alice, 1, 40_000_000n, 20_000_000n)])
    const m = marketRow(w, 1n)!
    expect(m.volume).toBe(70_000_000n)
    expect(m.tradeCount).toBe(2n)
    expect(protocolOf(w)).toMatchObject({ totalVolume: 70_000_000n, totalTrades: 2n, totalMarkets: 1n })
    expect(w.rows.users.map.get(alice)).toMatchObject({ volume: 70_000_000n, tradeCount: 2n })
  })

  it("2. Hook_MarketTraded moves the price and last-trade time, never volume or counts", () => {
    const w = run([
      created,
      {
        _tag: "Hook_MarketTraded",
        marketId: 1n,
        trader: bob,
        isBuy: true,
        usdcVolume: 9_000_000n,
        yesVolume: 15_000_000n,
        yesPrice: 610_000n,
        noPrice: 390_000n
      }
    ])
    const m = marketRow(w, 1n)!
    expect(m.volume).toBe(0n)
    expect(m.tradeCount).toBe(0n)
    expect(protocolOf(w).totalVolume).toBe(0n)
    expect(m.yesPrice).toBe(610_000n)
    expect(w.logs.priceSnapshots.map((s) => s.source)).toEqual(["hook_amm"])
  })

  it("3. split, merge, redeem and refund always change collateral, even for protocol contracts, which get no position", () => {
    const w = run([
      created,
      { _tag: "PositionSplit", marketId: 1n, user: ROUTER, amount: 10_000_000n },
      { _tag: "PositionMerged", marketId: 1n, user: ROUTER, amount: 4_000_000n }
    ])
    expect(marketRow(w, 1n)!.totalCollateral).toBe(6_000_000n)
    expect(w.rows.positions.map.has(positionKey(ROUTER, 1n))).toBe(false)
    expect(w.rows.users.map.has(ROUTER)).toBe(false)
  })

  it("4. a Trade to a protocol contract writes no position but still counts volume", () => {
    const w = run([created, trade(ROUTER, 0, 5_000_000n, 8_000_000n), trade(bob, 2, 5_000_000n, 9_000_000n)])
    expect(w.rows.positions.map.has(positionKey(ROUTER, 1n))).toBe(false)
    expect(w.rows.positions.map.get(positionKey(bob, 1n))).toMatchObject({ noBalance: 9_000_000n, noCost: 5_000_000n })
    expect(marketRow(w, 1n)!.volume).toBe(10_000_000n)
  })

  it("positions: average-cost basis, realized PnL on sells and redemption", () => {
    const w = run([
      created,
      trade(bob, 0, 40_000_000n, 100_000_000n), // 100 YES for 40 USDC
      trade(bob, 1, 50_000_000n, 30_000_000n, bob), // bob sells 50 YES for 30 USDC: cost 20, pnl +10
      { _tag: "MarketResolved", marketId: 1n, outcome: true, resolver: A(9) },
      {
        _tag: "TokensRedeemed",
        marketId: 1n,
        user: bob,
        winningBurned: 50_000_000n,
        losingBurned: 0n,
        fee: 1_000_000n,
        payout: 49_000_000n
      }
    ])
    const p = w.rows.positions.map.get(positionKey(bob, 1n))!
    expect(p.realizedPnl).toBe(10_000_000n + (49_000_000n - 20_000_000n))
    expect(p.yesBalance).toBe(0n)
    const m = marketRow(w, 1n)!
    expect(m).toMatchObject({ isResolved: true, outcome: true, resolutionType: "ORACLE" })
  })

  it("a resolved market never flips back", () => {
    const w = run([
      created,
      { _tag: "MarketResolved", marketId: 1n, outcome: true, resolver: A(9) },
      { _tag: "MarketEmergencyResolved", marketId: 1n, outcome: false, resolver: A(9) }
    ])
    expect(marketRow(w, 1n)).toMatchObject({ isResolved: true, outcome: true, resolutionType: "ORACLE" })
  })
})

describe("folding a whole synthetic chain", () => {
  it("ends with totals equal to independent sums over the canonical events", async () => {
    const dir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-fold-"))
    try {
      const out = Path.join(dir, "c.ndjson.gz")
      const summary = await generateSynthetic({ out, seed: 4, events: 20_000, users: 40, reorgEvery: 200 })
      const chain = await ReplayChain.load(out)
      chain.advanceAll()
      const book = new AddressBook(summary.deployment)
      const protocolSet = protocolContracts(summary.deployment, new AddressBook(summary.deployment))
      const w = emptyState()
      let volume = 0n
      let trades = 0n
      const collateral = new Map<bigint, bigint>()
      for (let n = summary.deployment.deployBlock; n <= chain.headNumber; n++) {
        const block = chain.blockAt(n)!
        for (const log of block.logs) {
          const kinds = book.kindsOf(log.address)
          const decoded = kinds && decodeLog(kinds, log)
          if (!decoded) continue
          const e = decoded.event
          if (e._tag === "MarketCreated") {
            book.watchToken(e.yesToken)
            book.watchToken(e.noToken)
          }
          if (e._tag === "Trade") {
            volume += e.tradeType === 0 || e.tradeType === 2 ? e.amountIn : e.amountOut
            trades++
          }
          if (e._tag === "PositionSplit") collateral.set(e.marketId, (collateral.get(e.marketId) ?? 0n) + e.amount)
          if (e._tag === "PositionMerged") collateral.set(e.marketId, (collateral.get(e.marketId) ?? 0n) - e.amount)
          if (e._tag === "TokensRedeemed") collateral.set(e.marketId, (collateral.get(e.marketId) ?? 0n) - e.winningBurned)
          if (e._tag === "MarketRefunded") collateral.set(e.marketId, (collateral.get(e.marketId) ?? 0n) - e.payout)
          reduceEvent(
            w,
            e,
            { block: n, timestamp: block.timestamp, txHash: log.transactionHash, logIndex: log.logIndex, address: log.address },
            protocolSet
          )
        }
      }
      expect(protocolOf(w).totalVolume).toBe(volume)
      expect(protocolOf(w).totalTrades).toBe(trades)
      expect(w.logs.trades.length).toBe(Number(trades))
      const markets = [...w.rows.markets.map.values()].map((m) => m!)
      for (const m of markets) expect(m.totalCollateral).toBe(collateral.get(m.id) ?? 0n)
      let marketVolume = 0n
      for (const m of markets) marketVolume += m.volume
      expect(marketVolume).toBe(volume)
    } finally {
      await fs.rm(dir, { recursive: true, force: true })
    }
  })
})
