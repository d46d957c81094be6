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
import { historyKey } from "../../pipeline/reduce/positions.js"
import type { PositionHistoryRow } from "../../pipeline/reduce/model.js"
import { putRow } from "../../pipeline/reduce/rows.js"
import { RowCache } from "../../pipeline/row-cache.js"
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

  it("keep the position history a fold in progress wrote when the batch before it commits", () => {
    // The backfill writes a batch while the next one folds (backfill-writer.ts, foldedInPlace):
    // the write's end (`inPlaceCommitted`) drops the history rows of past minutes, and must not
    // drop the rows the fold in progress wrote or changed in a minute it has since gone past.
    const history = (user: string, minute: number, yesBalance: bigint): PositionHistoryRow => ({
      user,
      marketId: 1n,
      minute,
      yesBalance,
      noBalance: 0n,
      yesCost: 0n,
      noCost: 0n,
      realizedPnl: 0n
    })
    const put = (rows: ReturnType<RowCache["foldInPlace"]>["rows"], row: PositionHistoryRow) =>
      putRow(rows.positionHistory, historyKey(row.user, row.marketId, row.minute), row, "position_history")
    const cache = new RowCache()
    cache.startEmpty()
    // Batch 1 (blocks to 10): user a moved in minute 60.
    put(cache.foldInPlace().rows, history("0xa", 60, 1n))
    const first = cache.takeTouched()
    // Batch 2 folds while batch 1 is written: a and b move in minute 60 again, then a in minute 120.
    const second = cache.foldInPlace()
    put(second.rows, history("0xa", 60, 2n))
    put(second.rows, history("0xb", 60, 5n))
    put(second.rows, history("0xa", 120, 3n))
    // Batch 1's write ends now (nothing of it deleted).
    cache.inPlaceCommitted({ ...first, positionHistory: new Map() }, 10)
    const touched = cache.takeTouched()
    // What batch 2 writes (sink.ts, planInPlace): each touched key's row as the fold left it.
    const written = [...touched.positionHistory.keys()].map((key) => second.rows.positionHistory.map.get(key as string) ?? null)
    expect(written).toEqual([history("0xa", 60, 2n), history("0xb", 60, 5n), history("0xa", 120, 3n)])
  })
})
