/**
 * Database outages heal: `predix start` indexing a replayed chain through a TCP proxy in front of
 * the real Postgres loses its database twice (2 s during the backfill, a batch's transaction
 * open; then LONG_OUTAGE_MS while following a tip that keeps moving) and carries on by itself
 * each time: alive throughout, /api/health 503 meanwhile, every retry logged, and in the end the
 * digest and every derived table of an uninterrupted run.
 *
 * The first cut waits until the backfill is under way (start-up outages: startup-outage.test.ts).
 *
 * The long outage is longer than the retry backoff's cap (INDEXER_RETRY_MAX_MS, 1 s here rather
 * than the default 5 s), so it covers retries at the cap: from there on, a longer outage only
 * adds more of the same attempts (with the default cap the same test needed a 12 s outage).
 */
import { describe, expect, it } from "vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Logger, LogLevel, Redacted } from "effect"
import * as fs from "node:fs/promises"
import * as Path from "node:path"
import pg from "pg"
import { makeIndexer } from "../../pipeline/run.js"
import { makeRpc } from "../../pipeline/source/rpc.js"
import { pgClientLayer } from "../../src/db/database.js"
import { runMigrations } from "../../src/db/migrations.js"
import { generateSynthetic } from "../../tools/recording/synthetic.js"
import { ReplayChain } from "../../tools/replay/chain.js"
import { serveReplay } from "../../tools/replay/server.js"
import { migratedDatabaseUrl, scratchDatabaseUrl, tempDir } from "../support/postgres.js"
import { freePort, runCli } from "../support/process.js"
import { startTcpProxy } from "../support/tcp-proxy.js"
import { dumpTables } from "./dump.js"

/** The retry backoff's cap the service runs with here (INDEXER_RETRY_MAX_MS). */
const RETRY_MAX_MS = 1_000
/** Beyond the cap: the pauses 0.1, 0.2, 0.4, 0.8 s then 1 s each (jittered). */
const LONG_OUTAGE_MS = 4 * RETRY_MAX_MS

const dump = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return {
    ...(yield* dumpTables),
    checkpoint: yield* sql.unsafe(`select block_number, block_hash, digest from indexer_checkpoint`),
    deferred: yield* sql.unsafe(`select * from deferred_index`)
  }
})

const onDatabase = <A, E>(url: string, body: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.provide(body, pgClientLayer(Redacted.make(url))).pipe(Effect.scoped)

/** Queries straight to Postgres (not through the proxy), on one connection for the scope. */
const observer = (url: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      return client
    }),
    (client) => Effect.promise(() => client.end())
  ).pipe(
    Effect.map((client) => ({
      /** The checkpoint's block; -1 before the first commit. */
      checkpoint: () =>
        client
          .query<{ block_number: string }>(`select block_number from indexer_checkpoint`)
          .then((r) => (r.rows.length === 0 ? -1 : Number(r.rows[0]!.block_number))),
      /**
       * Whether a backfill batch's transaction is open: the backfill from nothing has begun (its
       * deferred indexes are listed) and a connection of the service is inside a transaction.
       */
      inBatch: () =>
        client
          .query(
            `select exists (select 1 from deferred_index) and exists (select 1 from pg_stat_activity
               where application_name = 'predix' and (state = 'idle in transaction' or (state = 'active' and query ilike 'copy %'))) as open`
          )
          .then(
            (r) => r.rows[0]?.open === true,
            () => false
          )
    }))
  )

const until = async (what: string, ready: () => Promise<boolean>, timeoutMs = 90_000) => {
  const deadline = Date.now() + timeoutMs
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

describe("database outages", () => {
  it(
    "a 2 s outage in the backfill and a longer one while following heal by themselves; the index ends as an uninterrupted run's",
    () =>
      Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const dir = yield* tempDir("predix-outage")
            const out = Path.join(dir, "chain.ndjson.gz")
            const summary = yield* Effect.promise(() =>
              generateSynthetic({ out, seed: 23, events: 15_000, users: 60, reorgEvery: 150, maxReorgDepth: 6, finalityDepth: 24 })
            )
            const deploymentFile = Path.join(dir, "deployment.json")
            yield* Effect.promise(() => fs.writeFile(deploymentFile, JSON.stringify(summary.deployment)))
            const chain = yield* Effect.promise(() => ReplayChain.load(out))
            const total = chain.remaining
            chain.advance(Math.floor(total * 0.6))
            const server = yield* Effect.acquireRelease(
              Effect.promise(() => serveReplay(chain)),
              (s) => Effect.promise(() => s.close())
            )

            const direct = yield* scratchDatabaseUrl
            const target = new URL(direct)
            const proxy = yield* Effect.acquireRelease(
              Effect.promise(() => startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) })),
              (p) => Effect.promise(() => p.close())
            )
            const viaProxy = new URL(direct)
            viaProxy.port = String(proxy.port)
            const indexerPort = yield* Effect.promise(freePort)
            const health = `http://127.0.0.1:${indexerPort}/api/health`
            const app = yield* Effect.acquireRelease(
              Effect.promise(async () =>
                runCli(["start"], {
                  DATABASE_URL: viaProxy.toString(),
                  RPC_URL: server.url,
                  DEPLOYMENT: deploymentFile,
                  INDEXER_PORT: String(indexerPort),
                  BACKEND_PORT: String(await freePort()),
                  INDEXER_RETRY_MAX_MS: String(RETRY_MAX_MS),
                  LOG_LEVEL: "info"
                })
              ),
              (app) =>
                Effect.promise(async () => {
                  if (app.child.exitCode === null) app.child.kill("SIGKILL")
                  await app.exited
                })
            )
            const healthStatus = () =>
              fetch(health).then(
                (r) => r.status,
                () => 0
              )
            const alive = () => expect(app.child.exitCode, app.output()).toBeNull()
            const db = yield* observer(direct)
            const atHead = () => db.checkpoint().then((b) => b === chain.headNumber)

            yield* Effect.promise(async () => {
              await app.waitFor(/message=listening server=indexer/, 60_000)
              // 1. Two seconds, from a moment a transaction of the backfill is open.
              await until("a batch transaction of the backfill", db.inBatch, 60_000)
              expect(await db.checkpoint()).toBeLessThan(chain.finalizedNumber)
              proxy.cut()
              await new Promise((r) => setTimeout(r, 1000))
              expect(await healthStatus(), app.output()).toBe(503)
              await new Promise((r) => setTimeout(r, 1000))
              alive()
              proxy.restore()
              await until("the head after the first outage", atHead)
              expect(await healthStatus(), app.output()).toBe(200)

              // 2. A longer one while following, the chain moving on (reorgs included) meanwhile.
              const refusedBefore = proxy.refused()
              proxy.cut()
              const cutAt = Date.now()
              while (Date.now() - cutAt < LONG_OUTAGE_MS) {
                chain.advance(Math.ceil(total * 0.01))
                await new Promise((r) => setTimeout(r, 500))
              }
              expect(await healthStatus(), app.output()).toBe(503)
              alive()
              expect(proxy.refused() - refusedBefore).toBeGreaterThan(3)
              proxy.restore()
              // The rest of the chain, a few heads at a time.
              while (chain.remaining > 0) {
                chain.advance(Math.ceil(total * 0.02))
                await new Promise((r) => setTimeout(r, 100))
              }
              await until("the head after the second outage", atHead)
              expect(await healthStatus(), app.output()).toBe(200)
              alive()
            })

            // Each attempt was logged, with stable keys; the attempts of the long outage count up.
            const retries = app
              .output()
              .split("\n")
              .filter((l) => l.includes(`message="indexing failed; retrying"`))
            expect(retries.length, app.output()).toBeGreaterThan(3)
            const attempts = retries.map((l) => Number(/attempt=(\d+)/.exec(l)?.[1]))
            expect(Math.max(...attempts)).toBeGreaterThan(3)
            for (const line of retries) for (const key of [/ attempt=\d+ /, / phase=\w+ /, / error="[^"]+"/]) expect(line).toMatch(key)

            app.child.kill("SIGINT")
            expect(yield* Effect.promise(() => app.exited)).toBe(0)

            const actual = yield* onDatabase(direct, dump)
            const clean = yield* migratedDatabaseUrl
            const expected = yield* onDatabase(
              clean,
              Effect.gen(function* () {
                yield* runMigrations()
                const indexer = yield* makeIndexer({ rpc: makeRpc({ url: server.url }), deployment: summary.deployment, chainId: 130 })
                yield* indexer.step(yield* indexer.loadWindow)
                return yield* dump
              }).pipe(Logger.withMinimumLogLevel(LogLevel.Warning))
            )
            expect(actual.checkpoint).toEqual(expected.checkpoint)
            expect(actual).toEqual(expected)
          })
        )
      ),
    240_000
  )
})
