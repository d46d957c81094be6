/**
 * Crash safety, as a user would meet it: `predix start` indexing a replayed chain is killed with
 * SIGKILL at scattered moments, again and again, and restarted each time; once it reaches the
 * head, its checkpoint digest and every derived table equal those of a run never interrupted.
 */
import { describe, expect, it } from "vitest"
import { Effect } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import pg from "pg"
import { ALL_TABLES } from "./dump.js"
import { generateSynthetic } from "../../src/recording/synthetic.js"
import { ReplayChain } from "../../src/replay/chain.js"
import { serveReplay } from "../../src/replay/server.js"
import { scratchDatabaseUrl } from "../support/postgres.js"
import { freePort, runCli } from "../support/process.js"

const snapshot = async (url: string) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const out: Record<string, unknown> = {}
    for (const t of ALL_TABLES) out[t] = (await client.query(`select * from ${t} order by (${t}.*)::text`)).rows
    out["checkpoint"] = (await client.query(`select block_number, block_hash, digest from indexer_checkpoint`)).rows
    return out
  } finally {
    await client.end()
  }
}

describe("crash safety", () => {
  it("SIGKILLed at scattered points and restarted, the index ends with the uninterrupted run's digest and tables", () =>
    Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const dir = yield* Effect.acquireRelease(
            Effect.promise(() => fs.mkdtemp(Path.join(os.tmpdir(), "predix-crash-"))),
            (d) => Effect.promise(() => fs.rm(d, { recursive: true, force: true }))
          )
          const out = Path.join(dir, "chain.ndjson.gz")
          const summary = yield* Effect.promise(() => generateSynthetic({ out, seed: 31, events: 40_000, users: 80, reorgEvery: 400 }))
          const deploymentFile = Path.join(dir, "deployment.json")
          yield* Effect.promise(() => fs.writeFile(deploymentFile, JSON.stringify(summary.deployment)))
          const chain = yield* Effect.promise(() => ReplayChain.load(out))
          chain.advanceAll()
          const server = yield* Effect.acquireRelease(Effect.promise(() => serveReplay(chain)), (s) => Effect.promise(() => s.close()))

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
              for (let i = 0; i < 1200; i++) {
                const body = await fetch(health).then((r) => r.json() as Promise<{ data?: { latestIndexedBlock: number | null } }>, () => undefined)
                if (body?.data?.latestIndexedBlock === chain.headNumber) return
                await new Promise((r) => setTimeout(r, 100))
              }
              throw new Error("the index never reached the head")
            })
          const runToHead = (databaseUrl: string) =>
            Effect.gen(function* () {
              const { app, health } = yield* start(databaseUrl)
              yield* Effect.promise(() => app.waitFor(/message=listening server=indexer/, 60_000))
              const began = Date.now()
              yield* untilHead(health)
              app.child.kill("SIGINT")
              yield* Effect.promise(() => app.exited)
              return Date.now() - began
            })

          const uninterrupted = yield* scratchDatabaseUrl
          const took = yield* runToHead(uninterrupted)
          const expected = yield* Effect.promise(() => snapshot(uninterrupted))

          const crashed = yield* scratchDatabaseUrl
          // Kill points spread over the indexing time of the uninterrupted run (each life
          // resumes where the last commit left it, so later kills land further along).
          const fractions = [0.02, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35]
          let killsWhileIndexing = 0
          for (const fraction of fractions) {
            const { app } = yield* start(crashed)
            yield* Effect.promise(() => app.waitFor(/message=listening server=indexer/, 60_000))
            yield* Effect.sleep(Math.round(took * fraction))
            if (/message=indexed /.test(app.output())) killsWhileIndexing++
            app.child.kill("SIGKILL")
            yield* Effect.promise(() => app.exited)
          }
          yield* runToHead(crashed)
          const actual = yield* Effect.promise(() => snapshot(crashed))
          expect(killsWhileIndexing).toBeGreaterThan(0)
          expect(actual["checkpoint"]).toEqual(expected["checkpoint"])
          expect(actual).toEqual(expected)
        })
      )
    ), 300_000)
})
