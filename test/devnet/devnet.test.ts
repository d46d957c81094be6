/**
 * The devnet from nothing: solc-js compiles the contracts, anvil (chain 130) starts, the protocol
 * deploys and the seeded scenario runs while being recorded. The recording must hold every spec
 * event with the spec's topic0, at least 20 markets, an event group, 10 users and two reorgs
 * (one of depth 3 or more) in the order they happened; it must replay to the node's own
 * eth_getLogs and block answers; the chain must keep the protocol's invariants; the same seed
 * must give the same blocks and logs; and the deployed-variants switch must emit section 7's forms.
 *
 * The scenario run is the committed fixture's own (`npm run fixture`: its seed and steps), so one
 * run serves both "the same seed gives the same blocks and logs" and "the fixture is regenerated
 * exactly by its command" (compared with the committed recording, block hashes and all): a
 * second run of another seed only to compare it with itself checked the same determinism less
 * strictly, at a minute of chain. The deployed-variants run goes alongside it on its own anvil.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { keccak256, stringToBytes, toEventSignature, type AbiEvent } from "viem"
import { specEvents } from "../../schema/abi.js"
import { CATALOG } from "../../schema/catalog.js"
import { FIXTURE_RECORDING } from "../../src/fixture-recording.js"
import { eventCoverage } from "../../tools/devnet/coverage.js"
import { FIXTURE, runDevnet, type DevnetResult } from "../../tools/devnet/run.js"
import type { BlockRecord } from "../../tools/recording/format.js"
import { readRecords } from "../../tools/recording/io.js"
import { Rpc } from "../../tools/recording/recorder.js"
import { ReplayChain } from "../../tools/replay/chain.js"
import { serveReplay } from "../../tools/replay/server.js"
import { decodeCanonical, expectProtocolInvariants } from "../support/invariants.js"

/**
 * Trading-loop steps of the deployed-variants run: its setup and resolution phases (which do not
 * depend on the steps) and this many trading steps emit every deployed form (20 steps miss
 * Hook_ReferralRecorded). The scenario is deterministic, so this holds or fails on every run alike;
 * a scenario change that needs more steps fails the coverage check below rather than passing it.
 */
const DEPLOYED_STEPS = 60
let dir: string
let spec: DevnetResult
let recording: string

beforeAll(async () => {
  dir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-devnet-"))
  recording = Path.join(dir, "spec.ndjson.gz")
  // Two chains side by side, each on its own anvil: each run waits on its node far more than it
  // computes, and neither reads the other (blocks, hashes and timestamps are fixed by the seed).
  const [first, second] = await Promise.allSettled([
    runDevnet({ seed: FIXTURE.seed, steps: FIXTURE.steps, deploymentFile: Path.join(dir, "spec.deployment.json"), record: recording }),
    runDevnet({
      seed: 5,
      steps: DEPLOYED_STEPS,
      deployedVariants: true,
      deploymentFile: Path.join(dir, "deployed.deployment.json"),
      record: Path.join(dir, "deployed.ndjson.gz")
    })
  ])
  // The deployed-variants chain is read from its recording only.
  if (second.status === "fulfilled") await second.value.anvil.stop()
  if (first.status === "rejected") throw first.reason
  spec = first.value
  if (second.status === "rejected") throw second.reason
}, 300_000)

afterAll(async () => {
  await spec?.anvil.stop()
  await fs.rm(dir, { recursive: true, force: true })
})

const blocksOf = async (file: string) => {
  const blocks: Array<BlockRecord> = []
  for await (const record of readRecords(file)) if (record.t === "block") blocks.push(record)
  return blocks
}

describe("devnet", () => {
  it("deploys and writes a deployment file the indexer accepts", async () => {
    const written = JSON.parse(await fs.readFile(Path.join(dir, "spec.deployment.json"), "utf8")) as Record<string, unknown>
    expect(written).toEqual(spec.devnet.deployment)
    expect(written["chainId"]).toBe(130)
    for (const [key, value] of Object.entries(written)) {
      if (key !== "chainId" && key !== "deployBlock") expect(value, key).toMatch(/^0x[0-9a-f]{40}$/)
    }
  })

  it("emits every spec event, with the spec's topic0, in a scenario of 20+ markets, an event group, 10+ users and two reorgs", async () => {
    const coverage = await eventCoverage(recording)
    expect(coverage.missing("spec")).toEqual([])
    expect(coverage.unknown).toBe(0)
    // The topic0 the recording carries is keccak256 of the spec table's signature, computed here
    // independently of the catalog.
    const topics = new Set<string>()
    for (const block of await blocksOf(recording)) for (const log of block.logs) topics.add(log.topics[0] ?? "")
    for (const events of Object.values(specEvents)) {
      for (const abi of Object.values(events) as Array<AbiEvent>) {
        expect(topics, toEventSignature(abi)).toContain(keccak256(stringToBytes(toEventSignature(abi))))
      }
    }
    expect(spec.summary.markets).toBeGreaterThanOrEqual(20)
    expect(spec.summary.events).toBeGreaterThanOrEqual(1)
    expect(spec.summary.users).toBeGreaterThanOrEqual(10)
    expect(spec.summary.reorgs.length).toBeGreaterThanOrEqual(2)
    expect(Math.max(...spec.summary.reorgs.map((r) => r.depth))).toBeGreaterThanOrEqual(3)
  })

  it("records the reorgs in the order they happened: orphaned heads, then the fork from the ancestor", async () => {
    const blocks = await blocksOf(recording)
    const rewinds = blocks.flatMap((b, i) =>
      i > 0 && b.number <= blocks[i - 1]!.number ? [{ from: blocks[i - 1]!.number, to: b.number }] : []
    )
    expect(rewinds.map((r) => r.from - r.to + 1)).toEqual(spec.summary.reorgs.map((r) => r.depth))
    const chain = await ReplayChain.load(recording)
    chain.advanceAll()
    expect(chain.reorgCount).toBe(spec.summary.reorgs.length)
  })

  it("replays to the node's own eth_getLogs and block answers", async () => {
    const chain = await ReplayChain.load(recording)
    chain.advanceAll()
    const server = await serveReplay(chain)
    try {
      const node = new Rpc(spec.anvil.url)
      const replay = new Rpc(server.url)
      const head = await node.call<string>("eth_blockNumber")
      expect(await replay.call<string>("eth_blockNumber")).toBe(head)
      const d = spec.devnet.deployment
      const market = CATALOG.find((e) => e.contract === "marketFacet" && e.name === "MarketCreated")!.topic0
      const created = await node.call<Array<{ data: string }>>("eth_getLogs", [
        { address: d.diamond, topics: [market], fromBlock: "0x0", toBlock: head }
      ])
      const tokens = created.flatMap((l) => [`0x${l.data.slice(26, 66)}`, `0x${l.data.slice(90, 130)}`])
      const addresses = [d.diamond, d.router, d.exchange, d.hookProxy, d.manualOracle, d.priceFeedOracle, d.poolManager, ...tokens]
      const filters = [
        { address: addresses, fromBlock: `0x${d.deployBlock.toString(16)}`, toBlock: head },
        { address: d.router, fromBlock: "0x0", toBlock: head },
        { address: addresses, topics: [market], fromBlock: "0x0", toBlock: "latest" },
        { address: tokens.slice(0, 4), fromBlock: "0x40", toBlock: "0x200" }
      ]
      const shape = (logs: Array<Record<string, unknown>>) =>
        logs.map((l) => [l["address"], l["topics"], l["data"], l["blockNumber"], l["blockHash"], l["logIndex"], l["transactionHash"]])
      for (const filter of filters) {
        const expected = await node.call<Array<Record<string, unknown>>>("eth_getLogs", [filter])
        const actual = await replay.call<Array<Record<string, unknown>>>("eth_getLogs", [filter])
        expect(expected.length).toBeGreaterThan(0)
        expect(shape(actual)).toEqual(shape(expected))
      }
      for (const tag of ["latest", "finalized", "0x10", `0x${(Number(head) - 3).toString(16)}`]) {
        const expected = await node.call<Record<string, string>>("eth_getBlockByNumber", [tag, false])
        const actual = await replay.call<Record<string, string>>("eth_getBlockByNumber", [tag, false])
        for (const field of ["number", "hash", "parentHash", "timestamp"]) expect(actual[field], `${tag}.${field}`).toBe(expected[field])
      }
    } finally {
      await server.close()
    }
  })

  it("keeps the protocol invariants on the canonical chain", async () => {
    const events = await decodeCanonical(recording)
    expect(expectProtocolInvariants(events)).toBeGreaterThan(0)
  })

  it("is the committed fixture regenerated exactly: the same seed gives the same blocks and logs", async () => {
    const shape = async (file: string) => (await blocksOf(file)).map((b) => [b.number, b.hash, b.parentHash, b.timestamp, b.logs])
    expect(await shape(recording)).toEqual(await shape(FIXTURE_RECORDING))
    expect(spec.devnet.deployment).toEqual(JSON.parse(await fs.readFile(FIXTURE.deployment, "utf8")))
  })

  it("emits section 7's variants behind the switch, and not the spec forms they replace", async () => {
    const coverage = await eventCoverage(Path.join(dir, "deployed.ndjson.gz"))
    expect(coverage.missing("deployed")).toEqual([])
    expect(coverage.unknown).toBe(0)
    // The spec forms the switch replaces are gone.
    for (const gone of [
      "router.Trade/spec/3",
      "exchange.OrderPlaced/spec/3",
      "hook.Hook_MarketTraded/spec/2",
      "eventFacet.EventCreated/spec/2"
    ]) {
      expect(coverage.counts.has(gone), gone).toBe(false)
    }
  })
})
