/**
 * The synthetic generator's output holds only known events and the protocol invariants of
 * protocol-facts section 9, checked by decoding every canonical log through the catalog.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { decodeEventLog, type Hex } from "viem"
import { COMPONENT_KINDS, lookupAny, type ContractKind } from "../../schema/catalog.js"
import { COMPONENTS } from "../../schema/components.js"
import type { DomainEvent } from "../../schema/domain-events.js"
import type { BlockRecord } from "../../src/recording/format.js"
import { generateSynthetic, type SyntheticSummary } from "../../src/recording/synthetic.js"
import { ReplayChain } from "../../src/replay/chain.js"

const ZERO = `0x${"0".repeat(40)}`
let dir: string
let out: string
let summary: SyntheticSummary

beforeAll(async () => {
  dir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-synth-"))
  out = Path.join(dir, "synthetic.ndjson.gz")
  summary = await generateSynthetic({ out, seed: 7, events: 40_000, users: 60, maxMarkets: 40, reorgEvery: 400, maxReorgDepth: 5 })
})
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true })
})

interface Decoded {
  readonly block: number
  readonly tx: string
  readonly address: string
  readonly event: DomainEvent
}

const decodeCanonical = async (): Promise<Array<Decoded>> => {
  const chain = await ReplayChain.load(out, { finalityDepth: 64 })
  chain.advanceAll()
  const kinds = new Map<string, ReadonlyArray<ContractKind>>()
  for (const c of COMPONENTS) {
    const k = COMPONENT_KINDS[c]
    if (k !== undefined) kinds.set(summary.deployment[c], k)
  }
  kinds.set(summary.deployment.testUsdc, ["outcomeToken"])
  const decoded: Array<Decoded> = []
  for (let n = summary.deployment.deployBlock; n <= chain.headNumber; n++) {
    const block = chain.blockAt(n) as BlockRecord
    for (const log of block.logs) {
      const entry = lookupAny(kinds.get(log.address) ?? [], log.topics[0]!, log.topics.length)
      if (entry === undefined) throw new Error(`unknown log at block ${n}: ${log.address} ${log.topics[0]}`)
      const args = decodeEventLog({ abi: [entry.abi], topics: log.topics as [Hex, ...Array<Hex>], data: log.data as Hex, strict: true }).args
      const event = entry.toDomain(args as Record<string, unknown>)
      if (event._tag === "MarketCreated") {
        kinds.set(event.yesToken, ["outcomeToken"])
        kinds.set(event.noToken, ["outcomeToken"])
      }
      decoded.push({ block: n, tx: log.transactionHash, address: log.address, event })
    }
  }
  return decoded
}

describe("synthetic recordings", () => {
  it("reach the requested size with reorgs, deterministically per seed", async () => {
    expect(summary.logs + summary.orphanedLogs).toBeGreaterThanOrEqual(40_000)
    expect(summary.reorgs).toBeGreaterThan(0)
    const again = Path.join(dir, "again.ndjson.gz")
    await generateSynthetic({ out: again, seed: 7, events: 40_000, users: 60, maxMarkets: 40, reorgEvery: 400, maxReorgDepth: 5 })
    const [a, b] = await Promise.all([fs.readFile(out), fs.readFile(again)])
    expect(a.equals(b)).toBe(true)
  })

  it("hold only known events, and the protocol invariants on the canonical chain", async () => {
    const events = await decodeCanonical()
    expect(events.length).toBe(summary.logs)
    const tags = new Set(events.map((e) => e.event._tag))
    for (const tag of ["MarketCreated", "PositionSplit", "PositionMerged", "Trade", "Swap", "Hook_MarketTraded", "OrderPlaced", "OrderMatched", "OrderCancelled", "TakerFilled", "MarketResolved", "TokensRedeemed", "Transfer"]) {
      expect(tags).toContain(tag)
    }

    const markets = new Map<bigint, { yes: string; no: string; collateral: bigint; resolved: boolean; refund: boolean; outcome?: boolean }>()
    const supply = new Map<string, bigint>()
    const tokenMarket = new Map<string, bigint>()
    const settlingTx = new Map<string, Set<bigint>>()
    for (const { tx, event } of events) {
      if (["PositionSplit", "PositionMerged", "TokensRedeemed", "MarketRefunded"].includes(event._tag)) {
        const id = (event as { marketId: bigint }).marketId
        if (!settlingTx.has(tx)) settlingTx.set(tx, new Set())
        settlingTx.get(tx)!.add(id)
      }
    }
    for (const { tx, address, event } of events) {
      switch (event._tag) {
        case "MarketCreated":
          markets.set(event.marketId, { yes: event.yesToken, no: event.noToken, collateral: 0n, resolved: false, refund: false })
          tokenMarket.set(event.yesToken, event.marketId)
          tokenMarket.set(event.noToken, event.marketId)
          break
        case "PositionSplit":
          markets.get(event.marketId)!.collateral += event.amount
          break
        case "PositionMerged":
          markets.get(event.marketId)!.collateral -= event.amount
          break
        case "TokensRedeemed":
          expect(event.fee + event.payout).toBe(event.winningBurned)
          markets.get(event.marketId)!.collateral -= event.winningBurned
          break
        case "MarketRefunded":
          expect(event.yesBurned).toBe(event.noBurned)
          markets.get(event.marketId)!.collateral -= event.payout
          break
        case "MarketResolved": {
          const m = markets.get(event.marketId)!
          expect(m.resolved).toBe(false) // isResolved never flips back, nor resolves twice
          m.resolved = true
          m.outcome = event.outcome
          break
        }
        case "RefundModeEnabled":
          markets.get(event.marketId)!.refund = true
          break
        case "Trade":
          expect(event.clobFilled + event.ammFilled).toBe(event.amountOut)
          break
        case "Transfer": {
          const market = tokenMarket.get(address)
          if (market === undefined) break // collateral token
          if (event.from === ZERO || event.to === ZERO) {
            expect(settlingTx.get(tx)?.has(market)).toBe(true) // only the diamond mints and burns, while settling
          }
          if (event.from === ZERO) supply.set(address, (supply.get(address) ?? 0n) + event.value)
          if (event.to === ZERO) supply.set(address, (supply.get(address) ?? 0n) - event.value)
          break
        }
      }
    }
    let checked = 0
    for (const m of markets.values()) {
      const yes = supply.get(m.yes) ?? 0n
      const no = supply.get(m.no) ?? 0n
      if (!m.resolved) {
        expect(yes).toBe(no)
        expect(m.collateral).toBe(yes)
        checked++
      } else {
        expect(m.collateral).toBe(m.outcome ? yes : no)
      }
    }
    expect(checked).toBeGreaterThan(0)
  })
})
