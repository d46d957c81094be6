/**
 * An upgrade without downtime (docs/reindex.md "Upgrades"), two versions side by side on one
 * database: process A (`predix start`) serves and follows the replayed fixture; the new version's
 * migrations run with one extra, test-only migration that changes a derived table's shape (an
 * index on the template's `trade`), then process B (`predix start`) starts on the same database.
 * B's indexer sees the template's shape differ from the serving generation's, builds `index_2`
 * from the log store while A keeps following, asks A's writer to hand over, finishes and
 * switches. Requests at a steady rate go through a load balancer's rule (A first, then B on a
 * 503): every one is answered 200, by A until the switch and by B after; B answers 503
 * "building" before the switch and A 503 "superseded" after (its /api/health too). B's generation
 * equals a fresh index at the same block; the replaced generation is dropped when its grace ends.
 */
import { describe, expect, it } from "vitest"
import { Effect, Logger, LogLevel, Redacted } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { pgClientLayer } from "../../src/db/database.js"
import { MIGRATIONS_DIR, runMigrations } from "../../src/db/migrations.js"
import { generationCheckpoint, generationStates, query, scratchDatabaseUrl, tempDir } from "../support/postgres.js"
import { freePort, runCli, runningCli, type Running } from "../support/process.js"
import { servedFixtureAt, startEnv } from "../support/served-chain.js"
import { dumpIndex, freshIndexDump, onGeneration } from "./dump.js"

const until = async (what: string, ready: () => Promise<boolean>, timeoutMs = 180_000) => {
  const deadline = Date.now() + timeoutMs
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** The new version's one extra migration: an index on a derived table, added to the template. */
const UPGRADE_MIGRATION = "create index trade_upgrade_test_idx on index_template.trade (trader, block_number);\n"

/** The folder in `dir` that holds the new version's extra migration. */
const upgradeMigrations = (dir: string) =>
  Effect.promise(async () => {
    const extra = Path.join(dir, "migrations")
    await fs.mkdir(extra)
    await fs.writeFile(Path.join(extra, "9001_upgrade_test.sql"), UPGRADE_MIGRATION)
    return extra
  })

describe("an upgrade whose migration changes a derived table", () => {
  it(
    "old and new version side by side: the new one builds, takes over and switches; no request fails",
    () =>
      Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const dir = yield* tempDir("predix-upgrade")
            const extra = yield* upgradeMigrations(dir)
            const { chain, server, deploymentFile } = yield* servedFixtureAt(dir, 0.6)
            const url = yield* scratchDatabaseUrl
            const ports = yield* Effect.promise(() => Promise.all([freePort(), freePort(), freePort(), freePort()]))
            const launch = (indexerPort: number, backendPort: number) =>
              runningCli(["start"], {
                ...startEnv(url, { server, deploymentFile }, indexerPort, backendPort),
                RATE_LIMIT_PUBLIC_PER_MINUTE: "0"
              })
            const a = yield* launch(ports[0]!, ports[1]!)
            const ask = <R extends Record<string, unknown>>(text: string) => Effect.runPromise(query<R>(url, text))
            const checkpointOf = (schema: string) => generationCheckpoint(url, schema)
            const generations = () => generationStates(url)

            const indexerOf = (port: number) => `http://127.0.0.1:${port}`
            const served: Array<{ by: "A" | "B"; status: number; generation: string | null }> = []
            const failures: Array<string> = []
            let b: Running | undefined
            let bStarted = 0
            let switchedAt = 0
            yield* Effect.addFinalizer(() =>
              Effect.promise(async () => {
                if (b !== undefined && b.child.exitCode === null) b.child.kill("SIGKILL")
                await b?.exited
              })
            )
            /** A process's CPU seconds so far (user and system, clock ticks of 10 ms), from /proc. */
            const cpuOf = async (pid: number | string | undefined) => {
              const fields = (await fs.readFile(`/proc/${pid}/stat`, "utf8")).split(") ")[1]!.split(" ")
              return (Number(fields[11]) + Number(fields[12])) / 100
            }
            let bCpu = 0
            const load = os.loadavg()
            yield* Effect.promise(async () => {
              await a.waitFor(/message=listening server=backend/, 120_000)
              await until("A at the head", async () => (await checkpointOf("public")) === chain.headNumber)
              // A load balancer's rule: A first, B on A's 503 (once B is up), a request every 20 ms.
              let running = true
              const lb = (async () => {
                while (running) {
                  const started = Date.now()
                  const targets: Array<["A" | "B", number]> = [["A", ports[0]!]]
                  if (b !== undefined) targets.push(["B", ports[2]!])
                  let answered = false
                  const tried: Array<string> = []
                  for (const [by, port] of targets) {
                    try {
                      const response = await fetch(`${indexerOf(port)}/api/markets?limit=5`)
                      const text = await response.text()
                      if (response.status === 200) {
                        served.push({ by, status: 200, generation: response.headers.get("x-indexed-generation") })
                        answered = true
                        break
                      }
                      tried.push(`${by} ${response.status} ${text.slice(0, 200)}`)
                    } catch (error) {
                      tried.push(`${by} ${String(error)}`)
                    }
                  }
                  if (!answered) failures.push(tried.join(" | "))
                  await new Promise((r) => setTimeout(r, Math.max(0, 20 - (Date.now() - started))))
                }
              })()
              const advancing = setInterval(() => {
                if (chain.remaining > 1) chain.advance(1)
              }, 200)
              try {
                await new Promise((r) => setTimeout(r, 1_000))
                // The new version: its migrations (with the test's extra one), then its processes.
                await Effect.runPromise(
                  Effect.provide(runMigrations([MIGRATIONS_DIR, extra]), pgClientLayer(Redacted.make(url))).pipe(
                    Effect.scoped,
                    Logger.withMinimumLogLevel(LogLevel.Warning)
                  )
                )
                bStarted = performance.now()
                b = runCli(["start"], {
                  ...startEnv(url, { server, deploymentFile }, ports[2], ports[3]),
                  RATE_LIMIT_PUBLIC_PER_MINUTE: "0"
                })
                const bApp = b
                await bApp.waitFor(/message=listening server=backend/, 120_000)
                // Before the switch the new version does not read the old index.
                const early = await fetch(`${indexerOf(ports[2]!)}/api/markets?limit=5`)
                const earlyBody = await early.text()
                if ((await generations()).every((g) => g.schema !== "index_2" || g.state === "building")) {
                  expect(early.status, earlyBody).toBe(503)
                  expect(earlyBody).toMatch(/"ServiceUnavailable".*building/)
                }
                await until(
                  "the switch",
                  async () => (await generations()).some((g) => g.schema === "index_2" && g.state === "active"),
                  240_000
                )
                switchedAt = performance.now()
                // B's CPU: its API process and its indexer child (whose pid it logs).
                const childPid = /message="indexer process started" pid=(\d+)/.exec(bApp.output())?.[1]
                bCpu = (await cpuOf(bApp.child.pid).catch(() => 0)) + (await cpuOf(childPid).catch(() => 0))
                await new Promise((r) => setTimeout(r, 1_500))
              } finally {
                clearInterval(advancing)
                running = false
                await lb
              }
              // After the switch the old version refuses, its health too.
              for (const path of ["/api/markets?limit=5", "/api/health"]) {
                const late = await fetch(`${indexerOf(ports[0]!)}${path}`)
                const lateBody = await late.text()
                expect(late.status, lateBody).toBe(503)
                expect(lateBody).toMatch(/superseded/)
              }
              const ready = await fetch(`http://127.0.0.1:${ports[1]}/ready`)
              expect(ready.status, await ready.text()).toBe(503)
              const backendLate = await fetch(`http://127.0.0.1:${ports[1]}/api/markets?limit=5`)
              const backendBody = await backendLate.text()
              expect(backendLate.status, backendBody).toBe(503)
              expect(backendBody).toMatch(/"INDEXER_UNAVAILABLE".*superseded/)
              // The replaced generation goes when its grace ends (brought forward here).
              await ask(`update index_generation set drop_after = now() where state = 'retired'`)
              await until("the retired generation dropped", async () =>
                (await generations()).some((g) => g.schema === "public" && g.state === "dropped")
              )
              chain.advanceAll()
              await until("the new generation at the head", async () => (await checkpointOf("index_2")) === chain.headNumber)
            })
            const switchLine = b!.output().match(/message="generation switched".*/)?.[0] ?? ""
            console.log(
              `upgrade: B's start to the switch ${((switchedAt - bStarted) / 1000).toFixed(1)} s wall; B's processes' CPU by then ${bCpu.toFixed(1)} s; ${switchLine}; load average ${load.map((l) => l.toFixed(1)).join(" ")}`
            )

            // The two-process path: B asked, A's writer handed over, then A wrote nothing.
            expect(b!.output()).toMatch(/message="a migration changed the derived tables: building a new generation"/)
            expect(b!.output()).toMatch(/message="the serving writer handed over"/)
            expect(a.output()).toMatch(/message="handed over to a new version's builder"/)
            expect(a.output()).toMatch(/message="superseded: /)
            expect(failures).toEqual([])
            const sequence = served.map((s) => `${s.by} ${s.generation}`)
            const firstB = sequence.indexOf("B index_2")
            expect(firstB, "answers of B").toBeGreaterThan(0)
            expect(new Set(sequence.slice(0, firstB))).toEqual(new Set(["A public"]))
            expect(new Set(sequence.slice(firstB))).toEqual(new Set(["B index_2"]))
            expect(yield* Effect.promise(generations)).toEqual([
              { schema: "public", state: "dropped" },
              { schema: "index_2", state: "active" }
            ])
            // B's generation has the new shape (the index) and a fresh index's rows.
            const indexes = yield* query<{ n: number }>(
              url,
              `select count(*)::int as n from pg_indexes where schemaname = 'index_2' and indexdef like '%(trader, block_number)%'`
            )
            expect(indexes.rows[0]!.n).toBe(1)
            const actual = yield* onGeneration(url, "index_2", dumpIndex)
            const expected = yield* freshIndexDump(server.url, chain.meta.deployment)
            expect(actual.checkpoint).toEqual(expected.checkpoint)
            expect(actual).toEqual(expected)
            b!.child.kill("SIGINT")
            a.child.kill("SIGINT")
            expect(yield* Effect.promise(() => b!.exited)).toBe(0)
            expect(yield* Effect.promise(() => a.exited)).toBe(0)
          })
        )
      ),
    420_000
  )

  it(
    "one process: the old version stopped first, the new one builds, follows and switches; 503 building meanwhile",
    () =>
      Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const dir = yield* tempDir("predix-upgrade-one")
            const extra = yield* upgradeMigrations(dir)
            const { chain, server, deploymentFile } = yield* servedFixtureAt(dir, 0.6)
            const url = yield* scratchDatabaseUrl
            const [indexerPort, backendPort] = yield* Effect.promise(() => Promise.all([freePort(), freePort()]))
            const launch = runningCli(["start"], startEnv(url, { server, deploymentFile }, indexerPort, backendPort))
            const ask = <R extends Record<string, unknown>>(text: string) => Effect.runPromise(query<R>(url, text))
            const activeOf = () =>
              ask<{ schema: string }>(`select schema_name as schema from index_generation where state = 'active'`).then(
                (r) => r.rows[0]?.schema
              )
            const a = yield* launch
            yield* Effect.promise(async () => {
              await a.waitFor(/message=listening server=backend/, 120_000)
              await until("A's first commit", async () => ask(`select 1 from public.indexer_checkpoint`).then((r) => r.rowCount === 1))
              a.child.kill("SIGINT")
              expect(await a.exited).toBe(0)
            })
            yield* Effect.provide(runMigrations([MIGRATIONS_DIR, extra]), pgClientLayer(Redacted.make(url))).pipe(
              Effect.scoped,
              Logger.withMinimumLogLevel(LogLevel.Warning)
            )
            const b = yield* launch
            yield* Effect.promise(async () => {
              await b.waitFor(/message=listening server=indexer/, 120_000)
              const statuses: Array<string> = []
              while ((await activeOf()) !== "index_2") {
                const response = await fetch(`http://127.0.0.1:${indexerPort}/api/markets?limit=5`)
                const text = await response.text()
                if ((await activeOf()) !== "index_2") statuses.push(`${response.status} ${/building/.test(text)}`)
                await new Promise((r) => setTimeout(r, 100))
              }
              // Until its switch the new version serves nothing of the old index.
              expect(new Set(statuses)).toEqual(new Set(statuses.length === 0 ? [] : ["503 true"]))
              await until("B's answers from its generation", async () => {
                const response = await fetch(`http://127.0.0.1:${indexerPort}/api/markets?limit=5`)
                await response.text()
                return response.status === 200 && response.headers.get("x-indexed-generation") === "index_2"
              })
              expect(b.output()).toMatch(/message="building a generation".*writer=other/)
              expect(b.output()).toMatch(/message="the serving writer handed over"/)
              chain.advance(5)
              const head = chain.headNumber
              await until("B following into index_2", async () =>
                ask<{ block: string }>(`select block_number::text as block from index_2.indexer_checkpoint`).then(
                  (r) => Number(r.rows[0]?.block ?? -1) === head
                )
              )
              b.child.kill("SIGINT")
              expect(await b.exited).toBe(0)
            })
          })
        )
      ),
    300_000
  )
})
