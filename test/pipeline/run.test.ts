/**
 * Indexing a replayed synthetic chain into a real Postgres: totals equal independent sums over
 * the canonical events, and a run interrupted and resumed from its checkpoint, or backfilled on
 * the indexing thread instead of the backfill thread, ends with the same digest and tables as an
 * uninterrupted one.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Logger, LogLevel, Redacted } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { AddressBook, decodeLog } from "../../pipeline/decode.js"
import { makeIndexer } from "../../pipeline/run.js"
import { makeRpc } from "../../pipeline/source/rpc.js"
import { pgClientLayer } from "../../src/db/database.js"
import { runMigrations } from "../../src/db/migrations.js"
import { generateSynthetic } from "../../tools/recording/synthetic.js"
import { ReplayChain } from "../../tools/replay/chain.js"
import { serveReplay } from "../../tools/replay/server.js"
import { migratedDatabaseUrl } from "../support/postgres.js"
import { freePort } from "../support/process.js"
import { deferIndexes } from "../../pipeline/deferred-indexes.js"
import { dumpTables, indexDefinitions } from "./dump.js"

const dump = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const out: Record<string, unknown> = { ...(yield* dumpTables) }
  out["indexer_checkpoint"] = yield* sql.unsafe(`select * from indexer_checkpoint`)
  delete (out["indexer_checkpoint"] as Array<Record<string, unknown>>)[0]!["updated_at"]
  // The commit position counts this database's commits (a resumed run commits more often): the
  // state it names is what the rest of the dump compares.
  delete (out["indexer_checkpoint"] as Array<Record<string, unknown>>)[0]!["commit_seq"]
  return out
})

describe("indexing loop", () => {
  it.live(
    "indexes the finalized chain exactly once, and resuming from the checkpoint changes nothing",
    () =>
      Effect.gen(function* () {
        const dir = yield* Effect.acquireRelease(
          Effect.promise(() => fs.mkdtemp(Path.join(os.tmpdir(), "predix-run-"))),
          (d) => Effect.promise(() => fs.rm(d, { recursive: true, force: true }))
        )
        const out = Path.join(dir, "c.ndjson.gz")
        const summary = yield* Effect.promise(() => generateSynthetic({ out, seed: 9, events: 40_000, users: 40, reorgEvery: 250 }))
        const chain = yield* Effect.promise(() => ReplayChain.load(out))
        chain.advanceAll()
        const server = yield* Effect.acquireRelease(
          Effect.promise(() => serveReplay(chain)),
          (s) => Effect.promise(() => s.close())
        )
        const rpc = makeRpc({ url: server.url })
        const finalized = chain.finalizedNumber
        const middle = Math.floor((summary.deployment.deployBlock + finalized) / 2)

        // Independent sums over the canonical events up to the finalized block.
        const book = new AddressBook(summary.deployment)
        let volume = 0n
        let trades = 0n
        for (let n = summary.deployment.deployBlock; n <= finalized; n++) {
          for (const log of chain.blockAt(n)!.logs) {
            const kinds = book.kindsOf(log.address)
            const e = kinds && decodeLog(kinds, log)?.event
            if (e?._tag === "MarketCreated") {
              book.watchToken(e.yesToken)
              book.watchToken(e.noToken)
            }
            if (e?._tag === "Trade") {
              volume += e.tradeType === 0 || e.tradeType === 2 ? e.amountIn : e.amountOut
              trades++
            }
          }
        }

        const index = (stops: ReadonlyArray<number>, backfillThread = true, cacheLimit?: number) =>
          Effect.scoped(
            Effect.gen(function* () {
              const url = yield* migratedDatabaseUrl
              return yield* Effect.provide(
                Effect.gen(function* () {
                  yield* runMigrations()
                  const migrated = yield* indexDefinitions
                  for (const stop of stops) {
                    // A fresh indexer per stop: a restart that knows only what the database holds.
                    const indexer = yield* makeIndexer({
                      rpc,
                      deployment: summary.deployment,
                      chainId: 130,
                      backfillThread,
                      ...(cacheLimit === undefined ? {} : { cacheLimit, batchEvents: 1_000 })
                    })
                    yield* indexer.indexTo(stop, chain.headNumber)
                    // The secondary indexes deferred through the backfill from nothing are back.
                    expect(yield* indexDefinitions).toEqual(migrated)
                  }
                  return yield* dump
                }),
                pgClientLayer(Redacted.make(url))
              )
            })
          ).pipe(Logger.withMinimumLogLevel(LogLevel.Warning))

        // Indexes left deferred by a process killed mid-backfill: the next indexer creates them first.
        // A backfill that fails builds them before it returns.
        yield* Effect.scoped(
          Effect.gen(function* () {
            const url = yield* migratedDatabaseUrl
            yield* Effect.provide(
              Effect.gen(function* () {
                yield* runMigrations()
                const migrated = yield* indexDefinitions
                yield* deferIndexes
                const deferred = yield* indexDefinitions
                expect(deferred.length).toBeLessThan(migrated.length - 20)
                yield* makeIndexer({ rpc, deployment: summary.deployment, chainId: 130 })
                expect(yield* indexDefinitions).toEqual(migrated)

                // A backfill from nothing that fails (a node nobody answers at): built again on the way out.
                const nowhere = makeRpc({ url: `http://127.0.0.1:${yield* Effect.promise(freePort)}`, retries: 0 })
                const failing = yield* makeIndexer({ rpc: nowhere, deployment: summary.deployment, chainId: 130 })
                const failure = yield* Effect.flip(failing.indexTo(finalized, chain.headNumber))
                expect(failure._tag).toBe("ServerError")
                expect(yield* indexDefinitions).toEqual(migrated)
                expect(yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`select * from deferred_index`))).toEqual([])
              }),
              pgClientLayer(Redacted.make(url))
            )
          })
        )

        const straight = yield* index([finalized])
        const resumed = yield* index([middle, middle, finalized])
        expect(resumed).toEqual(straight)
        // Fetching and decoding on the indexing thread instead of the backfill thread: the same.
        expect(yield* index([middle, finalized], false)).toEqual(straight)
        // A row cache too small for the chain: dropped after the first batches, the rest loaded per batch.
        expect(yield* index([finalized], true, 500)).toEqual(straight)
        const stats = (straight["protocol_stats"] as Array<Record<string, string>>)[0]!
        expect(stats["total_volume"]).toBe(volume.toString())
        expect(stats["total_trades"]).toBe(trades.toString())
        expect((straight["trade"] as Array<unknown>).length).toBe(Number(trades))
        const checkpoint = (straight["indexer_checkpoint"] as Array<Record<string, string>>)[0]!
        expect(checkpoint["block_number"]).toBe(String(finalized))
        expect(checkpoint["block_hash"]).toBe(chain.blockAt(finalized)!.hash)
      }).pipe(Effect.scoped),
    // A hang guard (vitest.config.ts's 180 s): this took 42 s in CI at a load of 8, and timed out
    // at 60 s at a load average of 17.
    180_000
  )
})
