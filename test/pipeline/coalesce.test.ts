/**
 * Joining ready batches (`coalesceBatches`): the joined batches tile the same blocks, hold the
 * same logs in the same order and the same block stamps, stay within the log bound unless one
 * batch alone exceeds it, and leave the batches they were joined from as they were.
 */
import { Chunk, Effect, Stream } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type Batch, coalesceBatches } from "../../pipeline/source/backfill.js"
import type { ChainLog } from "../../pipeline/source/rpc.js"

const logAt = (block: number, logIndex: number): ChainLog => ({
  address: "0x".padEnd(42, "a"),
  topics: [],
  data: "0x",
  blockNumber: block,
  blockHash: `0x${block.toString(16).padStart(64, "0")}`,
  logIndex,
  transactionHash: `0x${"1".repeat(64)}`,
  transactionIndex: 0,
  blockTimestamp: block * 2
})

/** Adjacent batches of the given (block count, logs per block) shapes, from block 100 on. */
const batchesOf = (shapes: ReadonlyArray<readonly [number, number]>): Array<Batch> => {
  let from = 100
  return shapes.map(([blocks, perBlock]) => {
    const to = from + blocks - 1
    const logs: Array<ChainLog> = []
    const stamps = new Map<number, { number: number; hash: string; timestamp: number }>()
    for (let b = from; b <= to; b++) {
      for (let i = 0; i < perBlock; i++) logs.push(logAt(b, i))
      if (perBlock > 0 || b === to) stamps.set(b, { number: b, hash: logAt(b, 0).blockHash, timestamp: b * 2 })
    }
    const batch: Batch = { from, to, logs, blocks: stamps }
    from = to + 1
    return batch
  })
}

const snapshot = (batches: ReadonlyArray<Batch>) => batches.map((b) => ({ from: b.from, to: b.to, logs: [...b.logs], blocks: [...b.blocks] }))

describe("coalesceBatches", () => {
  it("joins ready batches without losing, reordering or changing anything", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 0, max: 4 })), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 25 }),
        async (shapes, maxLogs) => {
          const input = batchesOf(shapes)
          const before = snapshot(input)
          const joined = Chunk.toReadonlyArray(await Effect.runPromise(Stream.runCollect(Stream.fromIterable(input).pipe(coalesceBatches(maxLogs)))))
          expect(snapshot(input)).toEqual(before)
          expect(joined[0]!.from).toBe(input[0]!.from)
          expect(joined[joined.length - 1]!.to).toBe(input[input.length - 1]!.to)
          for (let i = 1; i < joined.length; i++) expect(joined[i]!.from).toBe(joined[i - 1]!.to + 1)
          expect(joined.flatMap((b) => b.logs)).toEqual(input.flatMap((b) => b.logs))
          expect(joined.flatMap((b) => [...b.blocks])).toEqual(input.flatMap((b) => [...b.blocks]))
          const largest = Math.max(...input.map((b) => b.logs.length))
          for (const b of joined) expect(b.logs.length).toBeLessThanOrEqual(Math.max(maxLogs, largest))
        }
      ),
      { numRuns: 200 }
    )
  })
})
