/**
 * The log store (`pipeline/log-store/`) on a real Postgres and the fixture's replay node: after
 * following the fixture through its reorgs it holds exactly the logs of the final chain's watched
 * contracts (the orphaned blocks' logs gone), tiling the blocks from the deployment on; a re-index
 * of emptied derived tables (as a migration starts one) replays it with no call to the node and
 * gives the tables an index from the node gives; a re-index past the store's end fetches only
 * the blocks beyond it, and one over a store that starts late (an index begun before the store
 * existed) fetches only the blocks before it and stores them.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Stream, Chunk } from "effect"
import * as http from "node:http"
import { AddressBook } from "../../pipeline/decode.js"
import { decodeRange } from "../../pipeline/log-store/codec.js"
import { readStored, storeRanges } from "../../pipeline/log-store/store-sql.js"
import { makeIndexer } from "../../pipeline/run.js"
import { backfill } from "../../pipeline/source/backfill.js"
import { watchlistOf } from "../../pipeline/source/decoded-backfill.js"
import { makeRpc } from "../../pipeline/source/rpc.js"
import { SINK_TABLES } from "../../pipeline/tables.js"
import { withScratchDb } from "../support/postgres.js"
import { dumpTables } from "./dump.js"
import { servedFixture } from "../support/served-chain.js"

/** A JSON-RPC proxy in front of `target` that records every call's method and params. */
const countingProxy = (target: string) =>
  Effect.acquireRelease(
    Effect.promise(
      () =>
        new Promise<{ url: string; calls: Array<{ method: string; params: Array<unknown> }>; server: http.Server }>((resolve) => {
          const calls: Array<{ method: string; params: Array<unknown> }> = []
          const server = http.createServer((req, res) => {
            const chunks: Array<Buffer> = []
            req.on("data", (c: Buffer) => chunks.push(c))
            req.on("end", () => {
              const body = Buffer.concat(chunks)
              const parsed = JSON.parse(body.toString("utf8")) as { method: string; params: Array<unknown> } | Array<never>
              for (const call of Array.isArray(parsed) ? parsed : [parsed]) calls.push({ method: call.method, params: call.params })
              fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body }).then(async (answer) => {
                res.writeHead(answer.status, { "content-type": "application/json" })
                res.end(Buffer.from(await answer.arrayBuffer()))
              })
            })
          })
          server.listen(0, "127.0.0.1", () => {
            const address = server.address() as { port: number }
            resolve({ url: `http://127.0.0.1:${address.port}`, calls, server })
          })
        })
    ),
    (p) => Effect.promise(() => new Promise<void>((r) => p.server.close(() => r())))
  )

/** Every stored row in block order, and their logs decoded. */
const storeContents = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql.unsafe<{ from_block: string; to_block: string; logs: Uint8Array }>(
    `select from_block::text, to_block::text, logs from log_store order by log_store.to_block`
  )
  const ranges = rows.map((r) => ({ from: Number(r.from_block), to: Number(r.to_block), batch: decodeRange(r.logs) }))
  return { ranges, logs: ranges.flatMap((r) => r.batch.logs) }
})

/** Empties the derived tables and the checkpoint the way migrations 0011-0021 do; the log store stays. */
const emptyDerived = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`truncate ${[...SINK_TABLES, "undo_log", "indexed_block", "indexer_checkpoint"].join(", ")}`)
)

const snapshot = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return { ...(yield* dumpTables), checkpoint: yield* sql.unsafe(`select block_number, block_hash, digest from indexer_checkpoint`) }
})

/** The fields a log is (the timestamp is the block's, which a range answer may leave out). */
const logKey = (l: {
  address: string
  topics: ReadonlyArray<string>
  data: string
  blockNumber: number
  blockHash: string
  logIndex: number
  transactionHash: string
}) => [l.blockNumber, l.logIndex, l.blockHash, l.address, l.topics.join(","), l.data, l.transactionHash].join("|")

describe("the log store", () => {
  // Migration 0029: what the encoder leaves is mostly random hashes, which pglz only spends CPU on.
  it.live("stores a range as encoded, out of line and not compressed, and reads it back the same", () =>
    withScratchDb(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        // Compressible bytes, far over the size at which Postgres would compress them by default.
        const bytes = new Uint8Array(64 * 1024).map((_, i) => i % 7)
        yield* sql.withTransaction(storeRanges(130, [{ from: 10, to: 19, bytes }]))
        const [stored] = yield* sql.unsafe<{ compression: string | null; size: number }>(
          `select pg_column_compression(logs) as compression, pg_column_size(logs) as size from log_store`
        )
        expect(stored).toEqual({ compression: null, size: 64 * 1024 })
        const read = yield* readStored(130, 0, 10)
        expect(read.map((r) => [r.from, r.to, Buffer.from(r.bytes).equals(Buffer.from(bytes))])).toEqual([[10, 19, true]])
      })
    )
  )

  it.live(
    "holds exactly the final chain's watched logs after the fixture's reorgs, and a re-index replays it with no RPC call",
    () =>
      Effect.gen(function* () {
        const { live, server } = yield* servedFixture
        const rpc = makeRpc({ url: server.url })
        const deployment = live.meta.deployment
        const proxy = yield* countingProxy(server.url)

        const result = yield* withScratchDb(
          Effect.gen(function* () {
            const indexer = yield* makeIndexer({ rpc, deployment, chainId: 130 })
            let window = yield* indexer.loadWindow
            let steps = 0
            while (live.remaining > 0) {
              live.advance(1 + (steps++ % 3))
              window = yield* indexer.step(window)
            }
            const reorgs = indexer.stats().reorgs
            const stored = yield* storeContents
            // A re-index: derived tables emptied, the store kept; the node only behind a counting proxy.
            const finalized = live.finalizedNumber
            yield* emptyDerived
            const again = yield* makeIndexer({ rpc: makeRpc({ url: proxy.url }), deployment, chainId: 130 })
            yield* again.indexTo(finalized, live.headNumber)
            const callsDuringReindex = proxy.calls.length
            const replayed = yield* snapshot
            const afterReindex = yield* storeContents
            return { reorgs, stored, finalized, callsDuringReindex, replayed, afterReindex, tip: window.tip.number }
          })
        )
        expect(result.reorgs).toBe(2)
        expect(result.tip).toBe(live.headNumber)

        // Rows tile the blocks from the deployment to the tip, without gap or overlap.
        const ranges = result.stored.ranges
        expect(ranges[0]!.from).toBe(deployment.deployBlock)
        for (let i = 1; i < ranges.length; i++) expect(ranges[i]!.from).toBe(ranges[i - 1]!.to + 1)
        expect(ranges[ranges.length - 1]!.to).toBe(live.headNumber)

        // Exactly the logs an independent fetch of the final chain gives: no orphan, none missing.
        const canonical = yield* Stream.runCollect(
          backfill(rpc, watchlistOf(new AddressBook(deployment)), { from: deployment.deployBlock, to: live.headNumber })
        ).pipe(Effect.map((batches) => Chunk.toReadonlyArray(batches).flatMap((b) => b.logs)))
        expect(canonical.length).toBeGreaterThan(100)
        expect(result.stored.logs.map(logKey)).toEqual(canonical.map(logKey))

        // The re-index asked the node nothing, and left the store as far as it indexed.
        expect(result.callsDuringReindex).toBe(0)
        expect(result.afterReindex.ranges[result.afterReindex.ranges.length - 1]!.to).toBe(result.finalized)

        // Its tables are those of an index from the node at the same block (store off there).
        const fromRpc = yield* withScratchDb(
          Effect.gen(function* () {
            const indexer = yield* makeIndexer({ rpc, deployment, chainId: 130, logStore: false })
            yield* indexer.indexTo(result.finalized, live.headNumber)
            return yield* snapshot
          })
        )
        expect(result.replayed).toEqual(fromRpc)
      }).pipe(Effect.scoped),
    600_000
  )

  it.live(
    "a re-index past the store's end replays what it holds and fetches only the blocks beyond; a store that starts late has its head fetched and filled in",
    () =>
      Effect.gen(function* () {
        const { live, server } = yield* servedFixture
        live.advanceAll()
        const rpc = makeRpc({ url: server.url })
        const deployment = live.meta.deployment
        const proxy = yield* countingProxy(server.url)
        const lateProxy = yield* countingProxy(server.url)
        const end = live.finalizedNumber
        const middle = deployment.deployBlock + Math.floor((end - deployment.deployBlock) / 2)

        const result = yield* withScratchDb(
          Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            const first = yield* makeIndexer({ rpc, deployment, chainId: 130 })
            yield* first.indexTo(middle, live.headNumber)
            const storedTo = (yield* storeContents).ranges.at(-1)!.to
            yield* emptyDerived
            const again = yield* makeIndexer({ rpc: makeRpc({ url: proxy.url }), deployment, chainId: 130 })
            yield* again.indexTo(end, live.headNumber)
            const stored = yield* storeContents
            const tables = yield* snapshot
            // A store that starts late, as on an index begun before migration 0025: its first rows gone.
            yield* sql.unsafe(`delete from log_store where to_block < $1`, [end])
            const lateStart = (yield* storeContents).ranges[0]!.from
            yield* emptyDerived
            const late = yield* makeIndexer({ rpc: makeRpc({ url: lateProxy.url }), deployment, chainId: 130 })
            yield* late.indexTo(end, live.headNumber)
            return { storedTo, tables, stored, lateStart, lateTables: yield* snapshot, lateStored: yield* storeContents }
          })
        )
        expect(result.storedTo).toBe(middle)
        /** The first block of each range asked of the node by `eth_getLogs` (by hash: none expected here). */
        const logRanges = (calls: ReadonlyArray<{ method: string; params: Array<unknown> }>) =>
          calls
            .filter((c) => c.method === "eth_getLogs")
            .map((c) => c.params[0] as { fromBlock?: string; toBlock?: string; blockHash?: string })
            .map((f) => (f.blockHash === undefined ? [Number(f.fromBlock), Number(f.toBlock)] : [Number.NaN, Number.NaN]))
        const beyond = logRanges(proxy.calls)
        expect(beyond.length).toBeGreaterThan(0)
        for (const [from] of beyond) expect(from).toBeGreaterThan(middle)
        // The store now tiles the whole index.
        const tiles = (ranges: ReadonlyArray<{ from: number; to: number }>) => {
          for (let i = 1; i < ranges.length; i++) expect(ranges[i]!.from).toBe(ranges[i - 1]!.to + 1)
          expect([ranges[0]!.from, ranges.at(-1)!.to]).toEqual([deployment.deployBlock, end])
        }
        tiles(result.stored.ranges)

        // The late store: only its missing head was asked for, and it is held again.
        expect(result.lateStart).toBeGreaterThan(deployment.deployBlock)
        const head = logRanges(lateProxy.calls)
        expect(head.length).toBeGreaterThan(0)
        for (const [from, to] of head) expect([from! >= deployment.deployBlock, to! < result.lateStart]).toEqual([true, true])
        tiles(result.lateStored.ranges)
        expect(result.lateStored.logs.map(logKey)).toEqual(result.stored.logs.map(logKey))

        const fromRpc = yield* withScratchDb(
          Effect.gen(function* () {
            const indexer = yield* makeIndexer({ rpc, deployment, chainId: 130, logStore: false })
            yield* indexer.indexTo(end, live.headNumber)
            return yield* snapshot
          })
        )
        expect(result.tables).toEqual(fromRpc)
        expect(result.lateTables).toEqual(fromRpc)
      }).pipe(Effect.scoped),
    300_000
  )
})
