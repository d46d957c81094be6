/**
 * Start-up waits out outages: `predix start --only indexer` started while its node is
 * unreachable, then (node back) while its database is unreachable, keeps retrying each start-up
 * step (logged `phase=starting`) instead of exiting, and indexes the chain to its head once both
 * are back. Both sit behind TCP proxies in front of the real parts (a replayed fixture, the
 * run's Postgres).
 */
import { describe, expect, it } from "vitest"
import { Effect } from "effect"
import * as fs from "node:fs/promises"
import * as Path from "node:path"
import { FIXTURE_RECORDING } from "../../src/fixture-recording.js"
import { ReplayChain } from "../../tools/replay/chain.js"
import { serveReplay } from "../../tools/replay/server.js"
import { query, scratchDatabaseUrl, tempDir } from "../support/postgres.js"
import { runCli } from "../support/process.js"
import { startTcpProxy } from "../support/tcp-proxy.js"

const proxied = (url: string, port: number) => {
  const u = new URL(url)
  u.hostname = "127.0.0.1"
  u.port = String(port)
  return u.toString()
}

describe("start-up outages", () => {
  it(
    "the node and then the database down at start are waited out, not fatal",
    () =>
      Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const dir = yield* tempDir("predix-startup-outage")
            const chain = yield* Effect.promise(() => ReplayChain.load(FIXTURE_RECORDING))
            chain.advanceAll()
            const deploymentFile = Path.join(dir, "deployment.json")
            yield* Effect.promise(() => fs.writeFile(deploymentFile, JSON.stringify(chain.meta.deployment)))
            const server = yield* Effect.acquireRelease(
              Effect.promise(() => serveReplay(chain)),
              (s) => Effect.promise(() => s.close())
            )
            const node = new URL(server.url)
            const nodeProxy = yield* Effect.acquireRelease(
              Effect.promise(() => startTcpProxy({ host: node.hostname, port: Number(node.port) })),
              (p) => Effect.promise(() => p.close())
            )
            const database = yield* scratchDatabaseUrl
            const target = new URL(database)
            const databaseProxy = yield* Effect.acquireRelease(
              Effect.promise(() => startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) })),
              (p) => Effect.promise(() => p.close())
            )
            // Migrations run before the indexer's start-up steps; the outages begin after them.
            yield* Effect.promise(() => runCli(["migrate"], { DATABASE_URL: database, LOG_LEVEL: "warning" }).exited)
            nodeProxy.cut()
            const app = yield* Effect.acquireRelease(
              Effect.sync(() =>
                runCli(["start", "--only", "indexer"], {
                  DATABASE_URL: proxied(database, databaseProxy.port),
                  RPC_URL: proxied(server.url, nodeProxy.port),
                  DEPLOYMENT: deploymentFile,
                  LOG_LEVEL: "info"
                })
              ),
              (app) =>
                Effect.promise(async () => {
                  if (app.child.exitCode === null) app.child.kill("SIGKILL")
                  await app.exited
                })
            )
            const retried = (count: number) =>
              app.waitFor(new RegExp(`message="indexing failed; retrying" attempt=${count} phase=starting `), 60_000)
            yield* Effect.promise(async () => {
              await retried(2)
              expect(app.child.exitCode, app.output()).toBeNull()
              // The node is back; the database goes away before the claim reaches it.
              databaseProxy.cut()
              nodeProxy.restore()
              // More start-up attempts are logged with the node back: the database claim's.
              const attempts = () =>
                app
                  .output()
                  .split("\n")
                  .filter((l) => l.includes("phase=starting")).length
              const before = attempts()
              await until(() => attempts() >= before + 2, app.output)
              expect(app.child.exitCode, app.output()).toBeNull()
              databaseProxy.restore()
              await until(async () => (await checkpoint(database)) === chain.headNumber || app.child.exitCode !== null, app.output)
              expect(app.child.exitCode, app.output()).toBeNull()
            })
            app.child.kill("SIGTERM")
            expect(yield* Effect.promise(() => app.exited)).toBe(0)
          })
        )
      ),
    240_000
  )
})

/** The indexer's checkpoint block on `database`; -1 before its first commit. */
const checkpoint = (database: string) =>
  Effect.runPromise(query<{ block_number: string }>(database, "select block_number from indexer_checkpoint")).then((r) =>
    r.rows.length === 0 ? -1 : Number(r.rows[0]!.block_number)
  )

const until = async (ready: () => boolean | Promise<boolean>, output: () => string, timeoutMs = 90_000) => {
  const deadline = Date.now() + timeoutMs
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`timed out; output:\n${output()}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}
