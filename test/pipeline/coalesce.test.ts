/**
 * Joining ready decoded batches (`coalesceDecoded`): the joined batches tile the same blocks,
 * hold the same events and unknown-log counts in the same order, end with their last part's
 * hash and digest, stay within the event bound unless one batch alone exceeds it, and leave the
 * batches they were joined from as they were.
 */
import { Chunk, Effect, Stream } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { coalesceDecoded, type DecodedBatch, type LocatedEvent } from "../../pipeline/decode-batch.js"

const hashOf = (block: number) => `0x${block.toString(16).padStart(64, "0")}`

const eventAt = (block: number, logIndex: number): LocatedEvent => ({
  event: {
    _tag: "Transfer",
    from: "0x".padEnd(42, "a"),
    to: "0x".padEnd(42, "b"),
    value: BigInt(block * 10 + logIndex)
  } as unknown as LocatedEvent["event"],
  at: { block, timestamp: block * 2, txHash: `0x${"1".repeat(64)}`, logIndex, address: "0x".padEnd(42, "c") }
})

/** Adjacent batches of the given (block count, events per block) shapes, from block 100 on. */
const batchesOf = (shapes: ReadonlyArray<readonly [number, number]>): Array<DecodedBatch> => {
  let from = 100
  return shapes.map(([blocks, perBlock], i) => {
    const to = from + blocks - 1
    const events: Array<LocatedEvent> = []
    for (let b = from; b <= to; b++) for (let j = 0; j < perBlock; j++) events.push(eventAt(b, j))
    const unknown = i % 3 === 0 ? [{ address: "0x".padEnd(42, "d"), topic0: hashOf(i), block: from, count: i + 1 }] : []
    const stored = [{ from, to, bytes: Uint8Array.of(i) }]
    const batch: DecodedBatch = { from, to, hash: hashOf(to), digest: hashOf(to * 7), events, unknown, stored }
    from = to + 1
    return batch
  })
}

const snapshot = (batches: ReadonlyArray<DecodedBatch>) =>
  batches.map((b) => ({ ...b, events: [...b.events], unknown: [...b.unknown], stored: [...b.stored] }))

describe("coalesceDecoded", () => {
  it("joins ready batches without losing, reordering or changing anything", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 0, max: 4 })), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 25 }),
        async (shapes, maxEvents) => {
          const input = batchesOf(shapes)
          const before = snapshot(input)
          const joined = Chunk.toReadonlyArray(
            await Effect.runPromise(Stream.runCollect(Stream.fromIterable(input).pipe(coalesceDecoded(maxEvents, "1 second"))))
          )
          expect(snapshot(input)).toEqual(before)
          expect(joined[0]!.from).toBe(input[0]!.from)
          expect(joined[joined.length - 1]!.to).toBe(input[input.length - 1]!.to)
          for (let i = 1; i < joined.length; i++) expect(joined[i]!.from).toBe(joined[i - 1]!.to + 1)
          // Each joined batch ends where one of its parts ended, with that part's hash and digest.
          for (const b of joined) {
            const last = input.find((p) => p.to === b.to)!
            expect([b.hash, b.digest]).toEqual([last.hash, last.digest])
          }
          expect(joined.flatMap((b) => b.events)).toEqual(input.flatMap((b) => b.events))
          expect(joined.flatMap((b) => b.unknown)).toEqual(input.flatMap((b) => b.unknown))
          // The log store's ranges go with their events: every part's, in order.
          expect(joined.flatMap((b) => b.stored)).toEqual(input.flatMap((b) => b.stored))
          const largest = Math.max(...input.map((b) => b.events.length))
          for (const b of joined) expect(b.events.length).toBeLessThanOrEqual(Math.max(maxEvents, largest))
        }
      ),
      { numRuns: 200 }
    )
  })
})
