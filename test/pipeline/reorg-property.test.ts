/**
 * Reorg equivalence as a property: for random chains (seed, reorg frequency, depths within the
 * window) played to the follower in random chunks, the index ends with the same tables and
 * digest as indexing the final canonical chain in one go; and the database then holds the
 * protocol's invariants (YES supply == NO supply == collateral for every live market; holders
 * sum to the supply).
 *
 * Each run costs seconds, so the runs are few: a fixed example whose chain reorgs at every depth
 * from 1 to 8 (the deepest the generator is asked for), played head by head so the follower
 * meets each of them, then seeded random runs.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, LogLevel } from "effect"
import fc from "fast-check"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { makeIndexer } from "../../pipeline/run.js"
import { makeRpc } from "../../pipeline/source/rpc.js"
import { readRecords } from "../../tools/recording/io.js"
import { generateSynthetic } from "../../tools/recording/synthetic.js"
import { ReplayChain } from "../../tools/replay/chain.js"
import { serveReplay } from "../../tools/replay/server.js"
import { withScratchDb } from "../support/postgres.js"
import { databaseInvariants } from "../support/db-invariants.js"
import { dumpTables } from "./dump.js"

const dump = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return { ...(yield* dumpTables), checkpoint: yield* sql.unsafe(`select block_number, block_hash, digest from indexer_checkpoint`) }
})

const withDb = <A, E>(body: Effect.Effect<A, E, SqlClient.SqlClient>) => withScratchDb(body, LogLevel.None)

/** The depths of the reorgs a recording holds (a block number at or below the previous one). */
const reorgDepths = async (file: string) => {
  const numbers: Array<number> = []
  for await (const record of readRecords(file)) if (record.t === "block") numbers.push(record.number)
  return numbers.flatMap((n, i) => (i > 0 && n <= numbers[i - 1]! ? [numbers[i - 1]! - n + 1] : []))
}

const MAX_DEPTH = 8

describe("reorg equivalence", () => {
  it.live(
    "holds for random reorg depths within the window and random head chunks",
    () =>
      Effect.promise(async () => {
        // Depths of the reorgs the follower met one head at a time, over every run.
        const metHeadByHead = new Set<number>()
        await fc.assert(
          fc.asyncProperty(
            fc.integer({ min: 1, max: 1_000_000 }),
            fc.integer({ min: 1, max: MAX_DEPTH }),
            fc.integer({ min: 15, max: 60 }),
            fc.integer({ min: 1, max: 4 }),
            async (seed, maxReorgDepth, reorgEvery, chunk) => {
              const dir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-prop-"))
              try {
                const out = Path.join(dir, "c.ndjson.gz")
                const summary = await generateSynthetic({
                  out,
                  seed,
                  events: 1_500,
                  users: 20,
                  maxMarkets: 12,
                  reorgEvery,
                  maxReorgDepth,
                  finalityDepth: 32
                })
                if (chunk === 1) for (const depth of await reorgDepths(out)) metHeadByHead.add(depth)
                const live = await ReplayChain.load(out)
                const server = await serveReplay(live)
                try {
                  const rpc = makeRpc({ url: server.url })
                  const deployment = summary.deployment
                  const followed = await Effect.runPromise(
                    withDb(
                      Effect.gen(function* () {
                        const indexer = yield* makeIndexer({ rpc, deployment, chainId: 130 })
                        let window = yield* indexer.loadWindow
                        while (live.remaining > 0) {
                          live.advance(chunk)
                          window = yield* indexer.step(window)
                        }
                        const live_markets = yield* databaseInvariants
                        return { tables: yield* dump, reorgs: indexer.stats().reorgs, live_markets }
                      })
                    )
                  )
                  const straight = await Effect.runPromise(
                    withDb(
                      Effect.gen(function* () {
                        const indexer = yield* makeIndexer({ rpc, deployment, chainId: 130 })
                        yield* indexer.step(yield* indexer.loadWindow)
                        return yield* dump
                      })
                    )
                  )
                  expect(followed.reorgs).toBeGreaterThan(0)
                  expect(followed.tables).toEqual(straight)
                } finally {
                  await server.close()
                }
              } finally {
                await fs.rm(dir, { recursive: true, force: true })
              }
            }
          ),
          // The example (seed 11, depth up to 8, a reorg every ~15 blocks, one head per step) has
          // eleven reorgs of depths 5, 7, 1, 6, 8, 8, 3, 2, 2, 4, 1; it counts as one of numRuns.
          { numRuns: 3, seed: 424242, examples: [[11, MAX_DEPTH, 15, 1]] }
        )
        expect([...metHeadByHead].sort((a, b) => a - b)).toEqual(Array.from({ length: MAX_DEPTH }, (_, i) => i + 1))
      }),
    180_000
  )
})
