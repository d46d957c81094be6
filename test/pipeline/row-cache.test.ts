/**
 * The rows an indexer keeps in memory across batches (pipeline/row-cache.ts) never outlive the
 * database state they were read from: when another indexer moves the checkpoint in between, the
 * next batch is refused (CheckpointMoved) instead of writing stale rows, and the retry, loading
 * from Postgres, ends with exactly the tables of one uninterrupted run.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, LogLevel } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { makeIndexer } from "../../pipeline/run.js"
import { makeRpc } from "../../pipeline/source/rpc.js"
import { generateSynthetic } from "../../tools/recording/synthetic.js"
import { ReplayChain } from "../../tools/replay/chain.js"
import { serveReplay } from "../../tools/replay/server.js"
import { withScratchDb } from "../support/postgres.js"
import { dumpTables } from "./dump.js"

const dump = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return { ...(yield* dumpTables), checkpoint: yield* sql.unsafe(`select block_number, block_hash, digest from indexer_checkpoint`) }
})

describe("rows kept in memory across batches", () => {
  it.live(
    "are refused once another indexer moved the checkpoint, and the retry matches a straight run",
    () =>
      Effect.gen(function* () {
        const dir = yield* Effect.acquireRelease(
          Effect.promise(() => fs.mkdtemp(Path.join(os.tmpdir(), "predix-cache-"))),
          (d) => Effect.promise(() => fs.rm(d, { recursive: true, force: true }))
        )
        const out = Path.join(dir, "c.ndjson.gz")
        const summary = yield* Effect.promise(() =>
          generateSynthetic({ out, seed: 21, events: 6_000, users: 12, maxMarkets: 6, reorgEvery: 1_000_000 })
        )
        const chain = yield* Effect.promise(() => ReplayChain.load(out))
        chain.advanceAll()
        const server = yield* Effect.acquireRelease(
          Effect.promise(() => serveReplay(chain)),
          (s) => Effect.promise(() => s.close())
        )
        const rpc = makeRpc({ url: server.url })
        const deployBlock = summary.deployment.deployBlock
        const end = chain.finalizedNumber
        const [a, b] = [deployBlock + Math.floor((end - deployBlock) / 3), deployBlock + Math.floor(((end - deployBlock) * 2) / 3)]

        const withDb = <A, E>(body: Effect.Effect<A, E, SqlClient.SqlClient>) => withScratchDb(body, LogLevel.None)

        const straight = yield* withDb(
          Effect.gen(function* () {
            const indexer = yield* makeIndexer({ rpc, deployment: summary.deployment, chainId: 130 })
            yield* indexer.indexTo(end, chain.headNumber)
            return yield* dump
          })
        )

        const shared = yield* withDb(
          Effect.gen(function* () {
            const first = yield* makeIndexer({ rpc, deployment: summary.deployment, chainId: 130 })
            yield* first.indexTo(a, chain.headNumber)
            // Another writer indexes (a, b] behind the first one's back.
            const second = yield* makeIndexer({ rpc, deployment: summary.deployment, chainId: 130 })
            yield* second.indexTo(b, chain.headNumber)
            const refused = yield* Effect.flip(first.indexTo(end, chain.headNumber))
            const afterRefusal = yield* dump
            const retried = yield* first.indexTo(end, chain.headNumber)
            return { refused, afterRefusal, retried, tables: yield* dump }
          })
        )
        expect(shared.refused._tag).toBe("CheckpointMoved")
        // The refused batch changed nothing: the checkpoint is still the second indexer's.
        expect((shared.afterRefusal.checkpoint as Array<Record<string, string>>)[0]!["block_number"]).toBe(String(b))
        expect(shared.retried).toBe(end)
        expect(shared.tables).toEqual(straight)
      }).pipe(Effect.scoped),
    60_000
  )
})
