/**
 * The backfill thread: it yields exactly the decoded ranges the indexing thread would decode
 * itself (events, digests, unknown logs, tokens watched), a node's failure arrives as the same
 * typed ChainError, and a consumer that stops early stops the job without spoiling the next.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import * as Path from "node:path"
import { GENESIS_DIGEST } from "../../pipeline/decode-batch.js"
import { AddressBook } from "../../pipeline/decode.js"
import { threadBackfill } from "../../pipeline/source/backfill-thread.js"
import { decodedBackfill, watchlistOf } from "../../pipeline/source/decoded-backfill.js"
import { makeRpc } from "../../pipeline/source/rpc.js"
import { generateSynthetic } from "../../tools/recording/synthetic.js"
import { ReplayChain } from "../../tools/replay/chain.js"
import { serveReplay } from "../../tools/replay/server.js"
import { tempDir } from "../support/postgres.js"
import { freePort } from "../support/process.js"

describe("backfill thread", () => {
  it.live(
    "decodes what the indexing thread decodes, fails with the node's typed error, and stops when its consumer does",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir("predix-thread")
        const out = Path.join(dir, "c.ndjson.gz")
        const summary = yield* Effect.promise(() => generateSynthetic({ out, seed: 5, events: 6_000, users: 20, reorgEvery: 0 }))
        const chain = yield* Effect.promise(() => ReplayChain.load(out))
        chain.advanceAll()
        const server = yield* Effect.acquireRelease(
          Effect.promise(() => serveReplay(chain)),
          (s) => Effect.promise(() => s.close())
        )
        const rpc = makeRpc({ url: server.url })
        const range = { from: summary.deployment.deployBlock, to: chain.finalizedNumber, concurrency: 2 }

        const book = new AddressBook(summary.deployment)
        const here = Chunk.toReadonlyArray(
          yield* Stream.runCollect(decodedBackfill(rpc, book, watchlistOf(book), range, GENESIS_DIGEST, { decodeMs: 0 }))
        )
        const job = { transport: rpc.transport, deployment: summary.deployment, tokens: [], digest: GENESIS_DIGEST, ...range }
        const there = Chunk.toReadonlyArray(yield* Stream.runCollect(threadBackfill(job)))
        // Range sizes adapt to timing, so compare what the ranges add up to.
        expect(there.flatMap((m) => m.batch.events)).toEqual(here.flatMap((b) => b.events))
        expect(there.flatMap((m) => m.batch.unknown)).toEqual(here.flatMap((b) => b.unknown))
        expect(there.at(-1)!.batch.digest).toBe(here.at(-1)!.digest)
        expect(there.at(-1)!.batch.to).toBe(range.to)
        expect(new Set(there.flatMap((m) => m.watched))).toEqual(new Set(book.tokens))
        expect(book.tokens.length).toBeGreaterThan(0)

        // In two jobs, the second started with the first's digest and tokens: the same events and digest.
        const middle = Math.floor((range.from + range.to) / 2)
        const head = Chunk.toReadonlyArray(yield* Stream.runCollect(threadBackfill({ ...job, to: middle })))
        const tail = Chunk.toReadonlyArray(
          yield* Stream.runCollect(
            threadBackfill({ ...job, from: middle + 1, digest: head.at(-1)!.batch.digest, tokens: head.flatMap((m) => m.watched) })
          )
        )
        expect(tail.length).toBeGreaterThan(0)
        expect([...head, ...tail].flatMap((m) => m.batch.events)).toEqual(here.flatMap((b) => b.events))
        expect(tail.at(-1)!.batch.digest).toBe(here.at(-1)!.digest)

        // A node nobody answers at: the transport failure, typed, once retries are spent.
        const nowhere = makeRpc({ url: `http://127.0.0.1:${yield* Effect.promise(freePort)}`, retries: 0 })
        const failure = yield* Effect.flip(Stream.runDrain(threadBackfill({ ...job, transport: nowhere.transport })))
        expect(failure._tag).toBe("ServerError")
        expect(failure.message).toMatch(/transport/)

        // A consumer that takes one range and stops; the thread then serves a whole job again.
        const first = Chunk.toReadonlyArray(yield* Stream.runCollect(Stream.take(threadBackfill(job), 1)))
        expect(first.length).toBe(1)
        const again = Chunk.toReadonlyArray(yield* Stream.runCollect(threadBackfill(job)))
        expect(again.at(-1)!.batch.digest).toBe(there.at(-1)!.batch.digest)
      }).pipe(Effect.scoped),
    60_000
  )
})
