/**
 * GET /metrics on the indexer port: a real scrape over HTTP of an API server, while an indexer
 * (in this process, publishing through Postgres as its own process would) backfills the committed
 * devnet fixture and then follows its tip head by head, its two reorgs included. The figures
 * move with what was indexed, and agree with the database.
 */
import { describe, expect, it } from "@effect/vitest"
import { HttpServer } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Logger, LogLevel, Redacted } from "effect"
import { indexerServerLayer } from "../../../http/indexer/api.js"
import { makeIndexer } from "../../../pipeline/run.js"
import { makeRpc } from "../../../pipeline/source/rpc.js"
import { FIXTURE_RECORDING } from "../../../src/fixture-recording.js"
import { pgClientLayer } from "../../../src/db/database.js"
import { runMigrations } from "../../../src/db/migrations.js"
import { ReplayChain } from "../../../tools/replay/chain.js"
import { serveReplay } from "../../../tools/replay/server.js"
import { migratedDatabaseUrl } from "../../support/postgres.js"

/** A scrape as series (`name{labels}`) to values, with the response's status and content type. */
const scrape = (url: string) =>
  Effect.promise(async () => {
    const response = await fetch(`${url}/metrics`)
    const text = await response.text()
    const series = new Map<string, number>()
    for (const line of text.split("\n")) {
      if (line === "" || line.startsWith("#")) continue
      const at = line.lastIndexOf(" ")
      series.set(line.slice(0, at), Number(line.slice(at + 1)))
    }
    return { status: response.status, type: response.headers.get("content-type"), text, series }
  })

describe("GET /metrics", () => {
  it.live(
    "serves the indexer's counters, histograms and position in Prometheus text, and they move as it indexes",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const chain = yield* Effect.promise(() => ReplayChain.load(FIXTURE_RECORDING))
          const node = yield* Effect.acquireRelease(
            Effect.promise(() => serveReplay(chain)),
            (s) => Effect.promise(() => s.close())
          )
          const database = pgClientLayer(Redacted.make(yield* migratedDatabaseUrl))
          const context = yield* Layer.build(Layer.provideMerge(indexerServerLayer(130, { port: 0, host: "127.0.0.1" }), database))
          const address = Context.get(context, HttpServer.HttpServer).address
          if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
          const api = `http://127.0.0.1:${address.port}`

          yield* Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            yield* runMigrations()
            const empty = yield* scrape(api)
            expect(empty.status).toBe(200)
            expect(empty.type).toContain("text/plain; version=0.0.4")
            expect(empty.text).toBe("") // nothing indexed, nothing published

            const indexer = yield* makeIndexer({ rpc: makeRpc({ url: node.url }), deployment: chain.meta.deployment, chainId: 130 })
            // The backfill of the first half of the heads.
            chain.advance(Math.floor(chain.remaining / 2))
            const reorgsBefore = chain.reorgCount
            let window = yield* indexer.step(yield* indexer.loadWindow)
            const first = yield* scrape(api)
            const [checkpoint] = yield* sql<{
              block: string
              head: string
            }>`select block_number as block, head_block as head from indexer_checkpoint`
            expect(first.text).toMatch(
              /^# HELP predix_indexer_blocks_indexed_total .+\n# TYPE predix_indexer_blocks_indexed_total counter\n/m
            )
            expect(first.series.get("predix_indexer_blocks_indexed_total")).toBeGreaterThan(0)
            expect(first.series.get("predix_indexer_events_indexed_total")).toBe(indexer.stats().events)
            expect(first.series.get("predix_indexer_batch_write_seconds_count")).toBe(first.series.get("predix_indexer_batches_total"))
            expect(first.series.get('predix_indexer_batch_write_seconds_bucket{le="+Inf"}')).toBe(
              first.series.get("predix_indexer_batches_total")
            )
            expect(first.series.get("predix_indexer_indexed_block")).toBe(Number(checkpoint!.block))
            expect(first.series.get("predix_checkpoint_block")).toBe(Number(checkpoint!.block))
            expect(first.series.get("predix_checkpoint_head_block")).toBe(Number(checkpoint!.head))
            expect(first.series.get("predix_checkpoint_lag_blocks")).toBe(Number(checkpoint!.head) - Number(checkpoint!.block))
            expect(first.series.get("predix_indexer_lag_blocks")).toBe(first.series.get("predix_checkpoint_lag_blocks"))
            expect(first.series.get("predix_indexer_metrics_age_seconds")).toBeGreaterThanOrEqual(0)
            expect(first.series.get("predix_indexer_reorgs_total")).toBe(0)

            // The rest head by head, as polls would see it: its reorgs included.
            while (chain.remaining > 0) {
              chain.advance(1)
              window = yield* indexer.step(window)
            }
            // A node that does not answer: a failed exchange of its kind, counted.
            const down = yield* Effect.either(makeRpc({ url: "http://127.0.0.1:9/", retries: 0 }).header("latest"))
            expect(down._tag).toBe("Left")
            window = yield* indexer.step(window)
            const second = yield* scrape(api)
            const grew = (name: string) => expect(second.series.get(name)!).toBeGreaterThan(first.series.get(name)!)
            grew("predix_indexer_blocks_indexed_total")
            grew("predix_indexer_events_indexed_total")
            grew("predix_indexer_batches_total")
            grew("predix_indexer_batch_write_seconds_count")
            grew("predix_indexer_indexed_block")
            expect(second.series.get("predix_indexer_indexed_block")).toBe(window.tip.number)
            // Every reorg the node played while we followed, once, with its depth.
            expect(chain.reorgCount - reorgsBefore).toBeGreaterThan(0)
            expect(second.series.get("predix_indexer_reorgs_total")).toBe(chain.reorgCount - reorgsBefore)
            expect(second.series.get("predix_indexer_reorg_depth_blocks_count")).toBe(chain.reorgCount - reorgsBefore)
            expect(second.series.get("predix_indexer_reorg_depth_blocks_sum")).toBeGreaterThanOrEqual(chain.reorgCount - reorgsBefore)
            expect(second.series.get('predix_indexer_rpc_errors_total{kind="ServerError"}')).toBeGreaterThanOrEqual(1)
            expect(second.series.get("predix_checkpoint_block")).toBe(window.tip.number)
          }).pipe(Effect.provide(context))
        })
      ).pipe(Logger.withMinimumLogLevel(LogLevel.Warning)),
    { timeout: 180_000 }
  )
})
