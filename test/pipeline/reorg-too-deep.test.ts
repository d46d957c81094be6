/**
 * A reorg deeper than the unfinalized window cannot be undone: `follow` stops with ReorgTooDeep
 * (naming the depth and the window) instead of retrying, and the database keeps what it held.
 * The node is swapped under the indexer for one that shows another history of the same chain:
 * every block hash differs (the same chain with each hash's last nibble flipped), so the common
 * ancestor lies below the finalized block.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Logger, LogLevel, Redacted } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { makeIndexer } from "../../pipeline/run.js"
import { makeRpc, type Rpc } from "../../pipeline/source/rpc.js"
import { pgClientLayer } from "../../src/db/database.js"
import { runMigrations } from "../../src/db/migrations.js"
import { generateSynthetic } from "../../tools/recording/synthetic.js"
import { ReplayChain } from "../../tools/replay/chain.js"
import { serveReplay } from "../../tools/replay/server.js"
import { migratedDatabaseUrl } from "../support/postgres.js"

/** Flips the last nibble of a 32-byte hash: self-inverse, so every block gets another identity. */
const flip = (hash: string) => hash.slice(0, -1) + (Number.parseInt(hash.slice(-1), 16) ^ 1).toString(16)
const flipHeader = <H extends { hash: string; parentHash: string }>(h: H): H => ({
  ...h,
  hash: flip(h.hash),
  parentHash: flip(h.parentHash)
})
const flipLogs = <L extends { blockHash: string }>(logs: ReadonlyArray<L>) => logs.map((l) => ({ ...l, blockHash: flip(l.blockHash) }))

/** The same chain as `rpc`, with every block hash flipped: a history that shares no block with it. */
const otherHistory = (rpc: Rpc): Rpc => ({
  ...rpc,
  header: (block) => Effect.map(rpc.header(block), flipHeader),
  headerByHash: (hash) => Effect.map(rpc.headerByHash(flip(hash)), flipHeader),
  headers: (from, to) => Effect.map(rpc.headers(from, to), (hs) => hs.map(flipHeader)),
  headersAt: (numbers) => Effect.map(rpc.headersAt(numbers), (hs) => hs.map(flipHeader)),
  logs: (addresses, from, to) => Effect.map(rpc.logs(addresses, from, to), flipLogs),
  logsAtHash: (addresses, hash) => Effect.map(rpc.logsAtHash(addresses, flip(hash)), flipLogs)
})

describe("a reorg deeper than the window", () => {
  it.live(
    "stops following with ReorgTooDeep and leaves the index as it was",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const dir = yield* Effect.acquireRelease(
            Effect.promise(() => fs.mkdtemp(Path.join(os.tmpdir(), "predix-deep-"))),
            (d) => Effect.promise(() => fs.rm(d, { recursive: true, force: true }))
          )
          const out = Path.join(dir, "chain.ndjson.gz")
          const summary = yield* Effect.promise(() =>
            generateSynthetic({ out, seed: 11, events: 800, users: 10, reorgEvery: 0, finalityDepth: 16 })
          )
          const chain = yield* Effect.promise(() => ReplayChain.load(out))
          chain.advanceAll()
          const server = yield* Effect.acquireRelease(
            Effect.promise(() => serveReplay(chain)),
            (s) => Effect.promise(() => s.close())
          )
          const real = makeRpc({ url: server.url })
          let node: Rpc = real
          const switchable = new Proxy({} as Rpc, { get: (_, key) => node[key as keyof Rpc] })

          const url = yield* migratedDatabaseUrl
          yield* Effect.provide(
            Effect.gen(function* () {
              yield* runMigrations()
              const sql = yield* SqlClient.SqlClient
              const indexer = yield* makeIndexer({
                rpc: switchable,
                deployment: summary.deployment,
                chainId: 130,
                pollInterval: 10,
                // The other history lives in this wrapper only: a backfill thread would ask the node itself.
                backfillThread: false
              })
              const window = yield* indexer.step(yield* indexer.loadWindow)
              expect(window.headers.length).toBeGreaterThan(0)
              const before = yield* sql.unsafe(`select block_number, block_hash, digest from indexer_checkpoint`)

              node = otherHistory(real)
              const stopped = yield* Effect.flip(indexer.follow)
              expect(stopped._tag).toBe("ReorgTooDeep")
              expect(stopped.message).toMatch(/reorg deeper than the unfinalized window/)
              expect(stopped.message).toMatch(/in the window/)
              expect(yield* sql.unsafe(`select block_number, block_hash, digest from indexer_checkpoint`)).toEqual(before)
            }),
            pgClientLayer(Redacted.make(url))
          )
        })
      ).pipe(Logger.withMinimumLogLevel(LogLevel.None)),
    60_000
  )
})
