import { describe, expect, it } from "vitest"
import { bloomOf } from "../../pipeline/source/bloom.js"
import { type BlockRecord, type MetaRecord, parseRecord } from "../../tools/recording/format.js"
import { ReplayChain, RpcError } from "../../tools/replay/chain.js"

const h = (n: number, fork = 0) => `0x${(fork * 1_000_000 + n).toString(16).padStart(64, "0")}`
const ADDRESS = `0x${"11".repeat(20)}`
const OTHER = `0x${"22".repeat(20)}`
const TOPIC = `0x${"aa".repeat(32)}`

const block = (n: number, fork = 0, parentFork = fork, logs = 1): BlockRecord => ({
  t: "block",
  number: n,
  hash: h(n, fork),
  parentHash: h(n - 1, parentFork),
  timestamp: 1_700_000_000 + n,
  logs: Array.from({ length: logs }, (_, i) => ({
    address: i % 2 === 0 ? ADDRESS : OTHER,
    topics: [TOPIC, h(i)],
    data: "0x",
    logIndex: i,
    transactionHash: h(n * 10 + i, 9),
    transactionIndex: i
  }))
})

const meta = { t: "meta", version: 1, chainId: 130, deployment: {} as MetaRecord["deployment"], source: "test" } satisfies MetaRecord

describe("ReplayChain", () => {
  it("plays heads in order and answers the standard calls", () => {
    const chain = new ReplayChain(meta, [block(10), block(11, 0, 0, 2), block(12)], { finalityDepth: 1 })
    expect(chain.request({ method: "eth_blockNumber" })).toBe("0x0")
    expect(chain.request({ method: "eth_getBlockByNumber", params: ["latest", false] })).toBeNull()
    chain.advance(2)
    expect(chain.request({ method: "eth_blockNumber" })).toBe("0xb")
    expect(chain.request({ method: "eth_chainId" })).toBe("0x82")
    expect((chain.request({ method: "eth_getBlockByNumber", params: ["finalized", false] }) as { number: string }).number).toBe("0xa")
    expect(chain.request({ method: "eth_getBlockByNumber", params: ["0xc", false] })).toBeNull()
    chain.advanceAll()
    const logs = chain.request({ method: "eth_getLogs", params: [{ fromBlock: "0xa", toBlock: "latest", address: ADDRESS }] }) as Array<{
      blockNumber: string
    }>
    expect(logs.map((l) => l.blockNumber)).toEqual(["0xa", "0xb", "0xc"])
    const byTopic = chain.request({ method: "eth_getLogs", params: [{ fromBlock: "0xa", topics: [[TOPIC], h(1)] }] }) as Array<unknown>
    expect(byTopic).toHaveLength(1)
    const byHash = chain.request({ method: "eth_getLogs", params: [{ blockHash: h(11) }] }) as Array<unknown>
    expect(byHash).toHaveLength(2)
  })

  it("serves the logsBloom a block record carries, and computes it from the recorded logs otherwise", () => {
    // A node's bloom covers every log of its block, recorded or not: here one bit pattern no recorded log explains.
    const recorded = `0x${"0".repeat(510)}81`
    const chain = new ReplayChain(meta, [block(10), { ...block(11), logsBloom: recorded }], { finalityDepth: 0 })
    chain.advanceAll()
    const bloomAt = (n: string) =>
      (chain.request({ method: "eth_getBlockByNumber", params: [n, false] }) as { logsBloom: string }).logsBloom
    expect(bloomAt("0xb")).toBe(recorded)
    expect(bloomAt("0xa")).toBe(bloomOf(block(10).logs))
    expect(bloomAt("0xa")).not.toBe(`0x${"0".repeat(512)}`)
  })

  it("refuses a block record whose logsBloom is not 0x and 512 hex digits", () => {
    const line = (bloom: unknown) => JSON.stringify({ ...block(1), logsBloom: bloom })
    expect(parseRecord(line(`0x${"0".repeat(512)}`), 2)).toMatchObject({ number: 1 })
    for (const bad of [`0x${"0".repeat(510)}`, `0x${"g".repeat(512)}`, 7, null]) {
      expect(() => parseRecord(line(bad), 2)).toThrow(/line 2: block record's logsBloom/)
    }
  })

  it("a block at or below the head replaces the chain from its number up (a reorg)", () => {
    const chain = new ReplayChain(meta, [block(1), block(2), block(3), block(4), block(3, 1, 0), block(4, 1), block(5, 1)], {
      finalityDepth: 2
    })
    chain.advance(4)
    expect(chain.head?.hash).toBe(h(4))
    chain.advance(1)
    expect(chain.reorgCount).toBe(1)
    expect(chain.headNumber).toBe(3)
    expect(chain.request({ method: "eth_getBlockByHash", params: [h(4), false] })).toBeNull()
    chain.advanceAll()
    expect(chain.head?.hash).toBe(h(5, 1))
    const logs = chain.request({ method: "eth_getLogs", params: [{ fromBlock: "0x1", toBlock: "0x5" }] }) as Array<{ blockHash: string }>
    expect(logs.map((l) => l.blockHash)).toEqual([h(1), h(2), h(3, 1), h(4, 1), h(5, 1)])
  })

  it("rejects a recording that breaks the chain: gaps, wrong parents, reorgs below finalized", () => {
    expect(() => new ReplayChain(meta, [block(1), block(3)]).advanceAll()).toThrow(/skips from block 1 to 3/)
    expect(() => new ReplayChain(meta, [block(1), block(2, 1, 7)]).advanceAll()).toThrow(/names parent/)
    const deep = new ReplayChain(meta, [block(1), block(2), block(3), block(4), block(2, 1, 0)], { finalityDepth: 1 })
    expect(() => deep.advanceAll()).toThrow(/at or below finalized block 3/)
  })

  it("answers bad parameters with JSON-RPC errors, not crashes", () => {
    const chain = new ReplayChain(meta, [block(1), block(2)])
    chain.advanceAll()
    const code = (call: () => unknown) => {
      try {
        call()
      } catch (error) {
        return error instanceof RpcError ? error.code : "not an RpcError"
      }
      return "no error"
    }
    expect(code(() => chain.request({ method: "eth_sendTransaction" }))).toBe(-32601)
    expect(code(() => chain.request({ method: "eth_getLogs", params: [{ fromBlock: "0x2", toBlock: "0x1" }] }))).toBe(-32602)
    expect(code(() => chain.request({ method: "eth_getLogs", params: [{ address: "0x12" }] }))).toBe(-32602)
    expect(code(() => chain.request({ method: "eth_getBlockByNumber", params: ["soon", false] }))).toBe(-32602)
    expect(code(() => chain.request({ method: "eth_getLogs", params: [{ blockHash: h(99) }] }))).toBe(-32000)
  })
})

describe("ReplayChain for other indexers", () => {
  it("serves full transactions built from the logs and a synthetic parent of the first block, to a real client over HTTP", async () => {
    const { serveReplay } = await import("../../tools/replay/server.js")
    const { createPublicClient, http } = await import("viem")
    const chain = new ReplayChain(meta, [block(10, 0, 0, 3), block(11)], { finalityDepth: 1 })
    chain.advanceAll()
    const server = await serveReplay(chain)
    try {
      const client = createPublicClient({ transport: http(server.url) })
      const full = await client.getBlock({ blockNumber: 10n, includeTransactions: true })
      expect(full.transactions.map((t) => [t.hash, t.to, t.transactionIndex, t.blockNumber, t.blockHash])).toEqual([
        [h(100, 9), ADDRESS, 0, 10n, h(10)],
        [h(101, 9), OTHER, 1, 10n, h(10)],
        [h(102, 9), ADDRESS, 2, 10n, h(10)]
      ])
      const hashes = await client.getBlock({ blockNumber: 10n })
      expect(hashes.transactions).toEqual([h(100, 9), h(101, 9), h(102, 9)])
      // the block before the first recorded one: what the first block names as its parent
      const parent = await client.getBlock({ blockNumber: 9n, includeTransactions: true })
      expect(parent).toMatchObject({ number: 9n, hash: h(9), timestamp: BigInt(1_700_000_000 + 10 - 1), transactions: [] })
      expect((await client.getBlock({ blockHash: h(9) as `0x${string}` })).number).toBe(9n)
      expect(await client.getLogs({ fromBlock: 9n, toBlock: 9n })).toEqual([])
      await expect(client.getBlock({ blockNumber: 8n })).rejects.toThrow(/could not be found/)
    } finally {
      await server.close()
    }
  })
})
