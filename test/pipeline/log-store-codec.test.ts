/**
 * The log store's binary form (`pipeline/log-store/codec.ts`): any fetched range comes back field
 * for field (property-based, over ranges with repeated and fresh words, zero and short words,
 * data of whole words and not, up to four topics), a dictionary past its one- and two-byte
 * references still resolves, a range decodes alone, and input it cannot keep exactly is refused
 * instead of being stored changed.
 */
import { describe, expect, it } from "vitest"
import * as fc from "fast-check"
import { decodeRange, encodeRange } from "../../pipeline/log-store/codec.js"
import type { Batch, BlockStamp } from "../../pipeline/source/backfill.js"
import type { ChainLog } from "../../pipeline/source/chain-log.js"

const hexOf = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex")
const hash = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => `0x${hexOf(b)}`)
const address = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => `0x${hexOf(b)}`)

/** A 32-byte word as ABI data holds them: zero, small, an amount, an address, or all 32 bytes. */
const word = fc
  .oneof(fc.constant(0), fc.integer({ min: 1, max: 2 }), fc.integer({ min: 3, max: 12 }), fc.constant(20), fc.integer({ min: 21, max: 32 }))
  .chain((significant) => fc.uint8Array({ minLength: significant, maxLength: significant }))
  .map((bytes) => hexOf(bytes).padStart(64, "0"))

interface LogShape {
  readonly block: number
  readonly newTx: boolean
  readonly address: number
  readonly topics: ReadonlyArray<number>
  readonly words: ReadonlyArray<number>
  readonly tail: Uint8Array | undefined
}

/** A range: a pool of words and addresses that logs draw from (so words repeat), blocks, logs in block order. */
const range = fc
  .record({
    from: fc.integer({ min: 0, max: 2 ** 40 }),
    span: fc.integer({ min: 0, max: 5_000 }),
    time: fc.integer({ min: 0, max: 2 ** 40 }),
    words: fc.array(word, { minLength: 1, maxLength: 40 }),
    addresses: fc.array(address, { minLength: 1, maxLength: 5 }),
    hashes: fc.array(hash, { minLength: 1, maxLength: 10 }),
    logs: fc.array(
      fc.record({
        block: fc.nat(),
        newTx: fc.boolean(),
        address: fc.nat(),
        topics: fc.array(fc.nat(), { maxLength: 4 }),
        words: fc.array(fc.nat(), { maxLength: 8 }),
        tail: fc.option(fc.uint8Array({ minLength: 1, maxLength: 40 }), { nil: undefined })
      }),
      { maxLength: 60 }
    )
  })
  .map((r): Batch => {
    const to = r.from + r.span
    const numbers = [...new Set([to, ...r.logs.map((l) => r.from + (l.block % (r.span + 1)))])].sort((a, b) => a - b)
    const blocks = new Map<number, BlockStamp>(
      numbers.map((n, i) => [n, { number: n, hash: r.hashes[i % r.hashes.length]!, timestamp: r.time + (n - r.from) * 2 }])
    )
    const shapes: Array<LogShape> = r.logs.map((l) => ({ ...l, block: r.from + (l.block % (r.span + 1)) }))
    shapes.sort((a, b) => a.block - b.block)
    let tx = 0
    let logIndex = 0
    let previousBlock = -1
    const logs = shapes.map((l): ChainLog => {
      if (l.block !== previousBlock) logIndex = 0
      if (l.newTx || l.block !== previousBlock) tx++
      previousBlock = l.block
      const pick = (i: number) => r.words[i % r.words.length]!
      const data = l.words.map(pick).join("") + (l.tail === undefined ? "" : hexOf(l.tail))
      const stamp = blocks.get(l.block)!
      return {
        address: r.addresses[l.address % r.addresses.length]!,
        topics: l.topics.map((t) => `0x${pick(t)}`),
        data: `0x${data}`,
        blockNumber: l.block,
        blockHash: stamp.hash,
        logIndex: logIndex++,
        transactionHash: `0x${tx.toString(16).padStart(64, "a")}`,
        transactionIndex: tx % 7,
        blockTimestamp: stamp.timestamp
      }
    })
    return { from: r.from, to, logs, blocks }
  })

const plain = (b: Batch) => ({ from: b.from, to: b.to, logs: b.logs, blocks: [...b.blocks.values()].sort((x, y) => x.number - y.number) })

describe("the log store's codec", () => {
  it("gives back every range it encodes, field for field", () => {
    fc.assert(
      fc.property(range, (batch) => {
        expect(plain(decodeRange(encodeRange(batch)))).toEqual(plain(batch))
      }),
      { numRuns: 300 }
    )
  })

  it("stores repeated words as references: a range of one trader's transfers is a fraction of its raw bytes", () => {
    const trader = `0x${"0".repeat(24)}${"ab".repeat(20)}`
    const signature = `0x${"dd".repeat(32)}`
    const logs: Array<ChainLog> = Array.from({ length: 1_000 }, (_, i) => ({
      address: `0x${"11".repeat(20)}`,
      topics: [signature, trader, `0x${"0".repeat(63)}1`],
      data: `0x${(1_000_000 + i).toString(16).padStart(64, "0")}`,
      blockNumber: 100 + i,
      blockHash: `0x${(100 + i).toString(16).padStart(64, "c")}`,
      logIndex: 0,
      transactionHash: `0x${i.toString(16).padStart(64, "e")}`,
      transactionIndex: 0,
      blockTimestamp: 5_000 + i
    }))
    const batch: Batch = {
      from: 100,
      to: 1_099,
      logs,
      blocks: new Map(logs.map((l) => [l.blockNumber, { number: l.blockNumber, hash: l.blockHash, timestamp: l.blockTimestamp! }]))
    }
    const bytes = encodeRange(batch)
    expect(plain(decodeRange(bytes))).toEqual(plain(batch))
    // Per log: its block (hash, number, time: 35), its transaction (33), then about 12 for the rest,
    // where a plain layout spends 32 per topic and per data word.
    expect(bytes.byteLength / logs.length).toBeLessThan(85)
    expect(bytes.byteLength / logs.length).toBeGreaterThan(64)
  })

  it("resolves references past the one- and two-byte ones (over 65,743 distinct words in a range)", () => {
    const count = 70_000
    const logs: Array<ChainLog> = []
    for (let i = 0; i < count; i++) {
      // Each word twice: first a literal, then a reference to it.
      const w = (0x1000000 + i).toString(16).padStart(64, "0")
      logs.push({
        address: `0x${"22".repeat(20)}`,
        topics: [`0x${w}`],
        data: `0x${w}`,
        blockNumber: 7,
        blockHash: `0x${"77".repeat(32)}`,
        logIndex: i,
        transactionHash: `0x${"99".repeat(32)}`,
        transactionIndex: 3,
        blockTimestamp: 1
      })
    }
    const batch: Batch = { from: 7, to: 7, logs, blocks: new Map([[7, { number: 7, hash: `0x${"77".repeat(32)}`, timestamp: 1 }]]) }
    // The logs as text (a deep comparison of 70,000 logs takes seconds; both build their fields in one order).
    const decoded = decodeRange(encodeRange(batch))
    expect(decoded.logs.length).toBe(count)
    expect(decoded.logs.map((l) => JSON.stringify(l)).join("\n") === logs.map((l) => JSON.stringify(l)).join("\n")).toBe(true)
    expect([...decoded.blocks.values()]).toEqual([...batch.blocks.values()])
  })

  it("refuses what it could not give back exactly, and a damaged range", () => {
    const log: ChainLog = {
      address: `0x${"22".repeat(20)}`,
      topics: [`0x${"33".repeat(32)}`],
      data: "0x",
      blockNumber: 7,
      blockHash: `0x${"77".repeat(32)}`,
      logIndex: 0,
      transactionHash: `0x${"99".repeat(32)}`,
      transactionIndex: 0,
      blockTimestamp: 1
    }
    const batchOf = (l: ChainLog): Batch => ({
      from: 7,
      to: 7,
      logs: [l],
      blocks: new Map([[7, { number: 7, hash: l.blockHash, timestamp: 1 }]])
    })
    expect(() => encodeRange(batchOf({ ...log, data: "0x12g4" }))).toThrow(/hex/)
    expect(() => encodeRange(batchOf({ ...log, data: "0x123" }))).toThrow(/whole bytes/)
    expect(() => encodeRange(batchOf({ ...log, topics: ["0x1234"] }))).toThrow(/topic/)
    expect(() => encodeRange(batchOf({ ...log, blockNumber: 8 }))).toThrow(/stamp/)
    const good = encodeRange(batchOf(log))
    expect(decodeRange(good).logs).toHaveLength(1)
    expect(() => decodeRange(good.subarray(0, good.byteLength - 3))).toThrow(/ends early/)
    expect(() => decodeRange(Buffer.concat([good, Buffer.of(0)]))).toThrow(/past its logs/)
    expect(() => decodeRange(Buffer.concat([Buffer.of(9), good.subarray(1)]))).toThrow(/format 9/)
  })
})
