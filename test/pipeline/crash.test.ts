/**
 * Crash safety, as a user would meet it: `predix start` indexing a replayed chain is killed with
 * SIGKILL at scattered moments, again and again, and restarted each time; once it reaches the
 * head, its checkpoint digest and every derived table equal those of a run never interrupted.
 *
 * The kill points are placed by what the index has committed (watched in its checkpoint), not by
 * wall-clock guesses alone: inside the backfill's first batch (held at its checkpoint by a lock,
 * its rows written), just after a commit, among the one-block commits of the unfinalized tip, and
 * one at a seeded random moment anywhere.
 */
import { describe, expect, it } from "vitest"
import { Effect, Redacted } from "effect"
import pg from "pg"
import { ALL_TABLES } from "./dump.js"
import { prng } from "../../tools/prng.js"
import { servedSyntheticChain } from "../support/served-chain.js"
import { pgClientLayer } from "../../src/db/database.js"
import { runMigrations } from "../../src/db/migrations.js"
import { migratedDatabaseUrl, scratchDatabaseUrl } from "../support/postgres.js"
import { freePort, runCli } from "../support/process.js"

const snapshot = async (url: string) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const out: Record<string, unknown> = {}
    for (const t of ALL_TABLES) out[t] = (await client.query(`select * from ${t} order by (${t}.*)::text`)).rows
    out["checkpoint"] = (await client.query(`select block_number, block_hash, digest from indexer_checkpoint`)).rows
    // Secondary indexes deferred by a backfill from nothing are back, whatever the kills.
    out["indexes"] = (
      await client.query(`select indexname, indexdef from pg_indexes where schemaname = current_schema() order by indexname`)
    ).rows
    out["deferred"] = (await client.query(`select * from deferred_index`)).rows
    return out
  } finally {
    await client.end()
  }
}

/** The checkpoint's block of the database at `url`, polled; -1 before the first commit (or the migrations). */
const checkpointWatcher = (url: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      return client
    }),
    (client) => Effect.promise(() => client.end())
  ).pipe(
    Effect.map((client) => {
      const block = () =>
        client.query<{ block_number: string }>(`select block_number from indexer_checkpoint`).then(
          (r) => (r.rows.length === 0 ? -1 : Number(r.rows[0]!.block_number)),
          () => -1
        )
      /** Resolves with the block once `ready(block)` holds; rejects after `timeoutMs`. */
      const until = async (ready: (block: number) => boolean, timeoutMs = 60_000) => {
        const deadline = Date.now() + timeoutMs
        for (;;) {
          const current = await block()
          if (ready(current)) return current
          if (Date.now() > deadline) throw new Error(`the checkpoint never got there (it stands at ${current})`)
          await new Promise((r) => setTimeout(r, 10))
        }
      }
      return { block, until }
    })
  )

/**
 * Holds the checkpoint table locked against writers (reads go on), so that the first batch of a
 * backfill writes all its rows and then waits at its checkpoint, its transaction open: `inFlight`
 * resolves once a session both holds row locks on derived tables and waits for the checkpoint.
 * A kill then lands inside the batch whatever the machine's speed; `release` ends the killed
 * batch's connection and lifts the lock. A lock in the real Postgres: nothing stands in for it.
 */
const checkpointGate = (url: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      await client.query("begin")
      await client.query("lock table indexer_checkpoint in exclusive mode")
      return client
    }),
    (client) => Effect.promise(() => client.end().catch(() => undefined))
  ).pipe(
    Effect.map((client) => {
      /** The backend of a batch that wrote derived rows and waits for the checkpoint, if any. */
      const batchWaiting = () =>
        client
          .query<{ pid: number }>(
            `select waiting.pid from pg_locks waiting
               join pg_locks wrote on wrote.pid = waiting.pid and wrote.granted and wrote.mode = 'RowExclusiveLock'
               join pg_class derived on derived.oid = wrote.relation and derived.relname = any($1::text[])
              where not waiting.granted and waiting.relation = 'indexer_checkpoint'::regclass limit 1`,
            [ALL_TABLES as ReadonlyArray<string>]
          )
          .then((r) => r.rows[0]?.pid)
      let waiter: number | undefined
      const inFlight = async (timeoutMs = 120_000) => {
        const deadline = Date.now() + timeoutMs
        while ((waiter = await batchWaiting()) === undefined) {
          if (Date.now() > deadline) throw new Error("no backfill batch ever reached its checkpoint")
          await new Promise((r) => setTimeout(r, 20))
        }
      }
      // The killed process's connection ends here at once (Postgres would see it at its next read;
      // by then a child still dying could have sent its COMMIT).
      const release = async () => {
        if (waiter !== undefined) await client.query("select pg_terminate_backend($1)", [waiter])
        await client.query("rollback")
      }
      return { inFlight, release }
    })
  )

describe("crash safety", () => {
  it(
    "SIGKILLed at scattered points and restarted, the index ends with the uninterrupted run's digest and tables",
    () =>
      Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const { chain, server, deploymentFile } = yield* servedSyntheticChain({ seed: 31, events: 40_000, users: 80, reorgEvery: 400 })

            const start = (databaseUrl: string) =>
              Effect.promise(async () => {
                const port = await freePort()
                const app = runCli(["start"], {
                  DATABASE_URL: databaseUrl,
                  RPC_URL: server.url,
                  DEPLOYMENT: deploymentFile,
                  INDEXER_PORT: String(port),
                  BACKEND_PORT: String(await freePort()),
                  LOG_LEVEL: "info"
                })
                return { app, health: `http://127.0.0.1:${port}/api/health` }
              })
            /** Polls /api/health until the index stands at the head. */
            const untilHead = (health: string) =>
              Effect.promise(async () => {
                for (let i = 0; i < 2400; i++) {
                  const body = await fetch(health).then(
                    (r) => r.json() as Promise<{ data?: { latestIndexedBlock: number | null } }>,
                    () => undefined
                  )
                  if (body?.data?.latestIndexedBlock === chain.headNumber) return
                  await new Promise((r) => setTimeout(r, 50))
                }
                throw new Error("the index never reached the head")
              })
            const finalized = chain.finalizedNumber
            const head = chain.headNumber
            expect(finalized).toBeLessThan(head)

            // The uninterrupted run, timed to the head (the unfinalized tip one block at a time).
            const uninterrupted = yield* scratchDatabaseUrl
            const timeline = yield* Effect.gen(function* () {
              const { app, health } = yield* start(uninterrupted)
              yield* Effect.promise(() => app.waitFor(/message=listening server=indexer/, 60_000))
              const began = Date.now()
              yield* untilHead(health)
              const took = Date.now() - began
              app.child.kill("SIGINT")
              yield* Effect.promise(() => app.exited)
              return { took }
            }).pipe(Effect.scoped)
            const expected = yield* Effect.promise(() => snapshot(uninterrupted))

            const crashed = yield* migratedDatabaseUrl
            const watcher = yield* checkpointWatcher(crashed)
            const random = prng(31)
            const within = (ms: number) => Math.round(random() * ms)
            // Each life resumes where the last commit left it; each is SIGKILLed once its trigger
            // holds (seen in the checkpoint) and a seeded random delay has passed.
            const lives: ReadonlyArray<{
              readonly trigger: (block: number, atStart: number) => boolean
              readonly delay: number
              /** Killed while its first batch waits at the checkpoint gate, its rows written. */
              readonly gated?: boolean
            }> = [
              // Inside the backfill, before its first commit: a batch transaction in flight, its rows
              // written. Held there by a lock rather than hit by a delay guessed from the
              // uninterrupted run, which a loaded machine (CI) made miss: the whole backfill had
              // committed before the kill.
              { trigger: () => true, delay: 0, gated: true },
              // Just after a commit of this life, the next batch already being fetched or written.
              { trigger: (block, atStart) => block !== atStart, delay: within(20) },
              // Among the one-block commits (with undo images) of the unfinalized tip: soon after the
              // first, since the tip takes well under a second and a later kill may find it done.
              { trigger: (block) => block > finalized, delay: within(20) },
              // Anywhere in this life's share of the uninterrupted run's time.
              { trigger: () => true, delay: within(timeline.took) }
            ]
            let killsWhileIndexing = 0
            const killedAt: Array<number> = []
            // The gate needs the tables before the first life starts (its own migrations are then none).
            yield* Effect.provide(runMigrations(), pgClientLayer(Redacted.make(crashed)))
            for (const life of lives) {
              const atStart = yield* Effect.promise(() => watcher.block())
              const gate = life.gated ? yield* checkpointGate(crashed) : undefined
              const { app } = yield* start(crashed)
              yield* Effect.promise(() => app.waitFor(/message=listening server=indexer/, 60_000))
              yield* Effect.promise(() => watcher.until((b) => life.trigger(b, atStart)))
              if (gate !== undefined) yield* Effect.promise(() => gate.inFlight())
              yield* Effect.sleep(life.delay)
              if (/message=indexed /.test(app.output()) || gate !== undefined) killsWhileIndexing++
              app.child.kill("SIGKILL")
              yield* Effect.promise(() => app.exited)
              if (gate !== undefined) yield* Effect.promise(() => gate.release())
              killedAt.push(yield* Effect.promise(() => watcher.block()))
            }
            // The kills left the index mid-backfill and mid-tip, not only at the head.
            expect(
              killedAt.some((b) => b < finalized),
              `checkpoints after the kills: ${killedAt}`
            ).toBe(true)
            expect(
              killedAt.some((b) => b > finalized && b < head),
              `checkpoints after the kills: ${killedAt}`
            ).toBe(true)
            const { app, health } = yield* start(crashed)
            yield* Effect.promise(() => app.waitFor(/message=listening server=indexer/, 60_000))
            yield* untilHead(health)
            app.child.kill("SIGINT")
            yield* Effect.promise(() => app.exited)
            const actual = yield* Effect.promise(() => snapshot(crashed))
            expect(killsWhileIndexing).toBeGreaterThan(0)
            expect(actual["checkpoint"]).toEqual(expected["checkpoint"])
            expect(actual).toEqual(expected)
          })
        )
      ),
    300_000
  )
})
