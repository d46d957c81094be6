/**
 * The synthetic generator's output holds only known events and the protocol invariants of
 * protocol-facts section 9, checked by decoding every canonical log through the catalog.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { bloomOf } from "../../pipeline/source/bloom.js"
import { readRecords } from "../../tools/recording/io.js"
import { generateSynthetic, type SyntheticSummary } from "../../tools/recording/synthetic.js"
import { decodeCanonical, expectProtocolInvariants } from "../support/invariants.js"

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

describe("synthetic recordings", () => {
  it("reach the requested size with reorgs, deterministically per seed", async () => {
    expect(summary.logs + summary.orphanedLogs).toBeGreaterThanOrEqual(40_000)
    expect(summary.reorgs).toBeGreaterThan(0)
    const again = Path.join(dir, "again.ndjson.gz")
    await generateSynthetic({ out: again, seed: 7, events: 40_000, users: 60, maxMarkets: 40, reorgEvery: 400, maxReorgDepth: 5 })
    const [a, b] = await Promise.all([fs.readFile(out), fs.readFile(again)])
    expect(a.equals(b)).toBe(true)
  })

  it("carry each block's logsBloom, the bloom of all of its logs (what a node's header would say)", async () => {
    let blocks = 0
    let withLogs = 0
    for await (const record of readRecords(out)) {
      if (record.t !== "block") continue
      blocks++
      if (record.logs.length > 0) withLogs++
      expect(record.logsBloom).toBe(bloomOf(record.logs))
    }
    expect(blocks).toBeGreaterThan(100)
    expect(withLogs).toBeGreaterThan(100)
  })

  it("hold only known events, and the protocol invariants on the canonical chain", async () => {
    const events = await decodeCanonical(out)
    expect(events.length).toBe(summary.logs)
    const tags = new Set(events.map((e) => e.event._tag))
    for (const tag of [
      "MarketCreated",
      "PositionSplit",
      "PositionMerged",
      "Trade",
      "Swap",
      "Hook_MarketTraded",
      "OrderPlaced",
      "OrderMatched",
      "OrderCancelled",
      "TakerFilled",
      "MarketResolved",
      "TokensRedeemed",
      "Transfer"
    ]) {
      expect(tags).toContain(tag)
    }

    const checked = expectProtocolInvariants(events)
    expect(checked).toBeGreaterThan(0)
  })
})
