/**
 * Following the unfinalized tip of the committed devnet fixture head by head, as a node shows
 * it (its reorgs of depth 2 and 4 included), with a restart in the middle that knows only what
 * the database holds, ends with the same tables, checkpoint and digest as indexing the final
 * chain in one go.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Logger, LogLevel, Redacted, type Scope, Stream } from "effect"
import { INDEXED_CHANNEL, makeIndexer, TIP_LOG_EVERY } from "../../pipeline/run.js"
import { makeRpc } from "../../pipeline/source/rpc.js"
import { pgClientLayer } from "../../src/db/database.js"
import { runMigrations } from "../../src/db/migrations.js"
import { migratedDatabaseUrl } from "../support/postgres.js"
import { dumpTables } from "./dump.js"
import { servedFixture } from "../support/served-chain.js"

const dump = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const out: Record<string, unknown> = { ...(yield* dumpTables) }
  out["indexer_checkpoint"] = yield* sql.unsafe(`select chain_id, block_number, block_hash, digest, head_block from indexer_checkpoint`)
  out["indexed_block"] = yield* sql.unsafe(`select * from indexed_block order by number`)
  out["undo_blocks"] = yield* sql.unsafe(`select distinct block_number from undo_log order by block_number`)
  return out
})

const withDb = <A, E>(body: Effect.Effect<A, E, SqlClient.SqlClient | PgClient.PgClient | Scope.Scope>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const url = yield* migratedDatabaseUrl
      return yield* Effect.provide(Effect.zipRight(runMigrations(), body), pgClientLayer(Redacted.make(url)))
    })
  ).pipe(Logger.withMinimumLogLevel(LogLevel.Warning))

describe("following the tip", () => {
  it.live(
    "through the fixture's reorgs and a restart gives what indexing the final chain gives",
    () =>
      Effect.gen(function* () {
        const { live, server } = yield* servedFixture
        const rpc = makeRpc({ url: server.url })
        const deployment = live.meta.deployment

        // The "following the tip" lines while following head by head: not one per step.
        const tipLines: Array<string> = []
        const captured = Logger.replace(
          Logger.defaultLogger,
          Logger.make(({ message }) => {
            const text = Array.isArray(message) ? message.join(" ") : String(message)
            if (text === "following the tip") tipLines.push(text)
          })
        )
        let blocksFollowed = 0
        const followed = yield* withDb(
          Effect.gen(function* () {
            let indexer = yield* makeIndexer({ rpc, deployment, chainId: 130 })
            let window = yield* indexer.loadWindow
            let reorgs = 0
            let steps = 0
            // Play the heads a few at a time; step after each play, as a poll would.
            const from = window.tip.number
            while (live.remaining > 0) {
              live.advance(1 + (steps % 3))
              window = yield* indexer.step(window).pipe(Effect.provide(captured), Logger.withMinimumLogLevel(LogLevel.Info))
              steps++
              if (steps === 150) {
                // A restart: a new indexer that knows only what the database holds.
                reorgs += indexer.stats().reorgs
                indexer = yield* makeIndexer({ rpc, deployment, chainId: 130 })
                window = yield* indexer.loadWindow
              }
            }
            reorgs += indexer.stats().reorgs
            blocksFollowed = window.tip.number - from
            return { tables: yield* dump, reorgs, window }
          })
        )
        expect(followed.reorgs).toBe(2)
        // The first step, one line per TIP_LOG_EVERY blocks, the two reorgs and the restart's first step.
        expect(tipLines.length).toBeGreaterThan(0)
        expect(tipLines.length).toBeLessThanOrEqual(Math.ceil(blocksFollowed / TIP_LOG_EVERY) + 4)
        expect(followed.window.tip.number).toBe(live.headNumber)

        const notified: Array<{ block: number; hash: string; reverted: boolean; markets?: ReadonlyArray<string> }> = []
        const straight = yield* withDb(
          Effect.gen(function* () {
            const pg = yield* PgClient.PgClient
            yield* pg.listen(INDEXED_CHANNEL).pipe(
              Stream.runForEach((payload) => Effect.sync(() => notified.push(JSON.parse(payload)))),
              Effect.forkScoped
            )
            yield* Effect.sleep("200 millis") // LISTEN is in place
            const indexer = yield* makeIndexer({ rpc, deployment, chainId: 130 })
            yield* indexer.step(yield* indexer.loadWindow)
            yield* Effect.sleep("200 millis")
            return yield* dump
          })
        )
        // One NOTIFY per commit, the last naming the head and its generation; a tip block's names the markets it changed (decimal ids).
        expect(notified.length).toBeGreaterThan(live.headNumber - live.finalizedNumber)
        expect(notified.at(-1)).toEqual({
          chainId: 130,
          block: live.headNumber,
          hash: live.blockAt(live.headNumber)!.hash,
          reverted: false,
          markets: expect.any(Array),
          generation: "public"
        })
        expect(notified.at(-1)!.markets!.every((id) => /^[1-9][0-9]*$/.test(id))).toBe(true)
        expect(followed.tables).toEqual(straight)
        const checkpoint = (straight["indexer_checkpoint"] as Array<Record<string, string>>)[0]!
        expect(checkpoint["block_number"]).toBe(String(live.headNumber))
        expect(checkpoint["block_hash"]).toBe(live.blockAt(live.headNumber)!.hash)
        // Only the unfinalized blocks keep window rows and undo images.
        const held = (straight["indexed_block"] as Array<Record<string, string>>).map((r) => Number(r["number"]))
        expect(held[0]).toBe(live.finalizedNumber + 1)
        expect(held.at(-1)).toBe(live.headNumber)
      }).pipe(Effect.scoped),
    300_000
  )
})
