/**
 * The committed fixture (fixtures/devnet.*) is what the issue asks of it. That `npm run fixture`
 * regenerates it exactly (the same seed gives the same blocks and logs) is checked in
 * devnet.test.ts, whose scenario run is the fixture's command: one run of the 400-step scenario
 * serves both files.
 */
import { describe, expect, it } from "vitest"
import * as fs from "node:fs/promises"
import * as Path from "node:path"
import { FIXTURE_RECORDING } from "../../src/fixture-recording.js"
import { eventCoverage } from "../../tools/devnet/coverage.js"
import { FIXTURE } from "../../tools/devnet/run.js"
import type { BlockRecord } from "../../tools/recording/format.js"
import { readRecords } from "../../tools/recording/io.js"
import { decodeCanonical, expectProtocolInvariants } from "../support/invariants.js"

const blocksOf = async (file: string) => {
  const blocks: Array<BlockRecord> = []
  for await (const record of readRecords(file)) if (record.t === "block") blocks.push(record)
  return blocks
}

describe("committed fixture", () => {
  it("is small and holds every spec event, 20+ markets, an event group, 10+ users and two reorgs (one of depth 3+)", async () => {
    expect(FIXTURE_RECORDING).toBe(Path.resolve(FIXTURE.record))
    expect((await fs.stat(FIXTURE_RECORDING)).size).toBeLessThan(4 * 1024 * 1024)
    const coverage = await eventCoverage(FIXTURE_RECORDING)
    expect(coverage.missing("spec")).toEqual([])
    expect(coverage.unknown).toBe(0)

    const events = await decodeCanonical(FIXTURE_RECORDING)
    expectProtocolInvariants(events)
    const markets = events.filter((e) => e.event._tag === "MarketCreated")
    const groups = events.filter((e) => e.event._tag === "EventCreated")
    const traders = new Set(events.flatMap((e) => (e.event._tag === "Trade" ? [e.event.trader] : [])))
    expect(markets.length).toBeGreaterThanOrEqual(20)
    expect(groups.length).toBeGreaterThanOrEqual(1)
    expect(traders.size).toBeGreaterThanOrEqual(10)

    const blocks = await blocksOf(FIXTURE_RECORDING)
    const depths = blocks.flatMap((b, i) => (i > 0 && b.number <= blocks[i - 1]!.number ? [blocks[i - 1]!.number - b.number + 1] : []))
    expect(depths.length).toBeGreaterThanOrEqual(2)
    expect(Math.max(...depths)).toBeGreaterThanOrEqual(3)

    const deployment = JSON.parse(await fs.readFile(FIXTURE.deployment, "utf8")) as unknown
    for await (const record of readRecords(FIXTURE_RECORDING)) {
      if (record.t === "meta") expect(record.deployment).toEqual(deployment)
      break
    }
  })
})
