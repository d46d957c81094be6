/**
 * An interrupted first start does not break the embedded cluster: a process group killed while
 * initdb runs, or a cluster an earlier version left half made (PG_VERSION without the `postgres`
 * database), is created again by the next start, which then comes up at once.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Logger, Redacted } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs/promises"
import * as Path from "node:path"
import pg from "pg"
import { embeddedPostgres } from "../../src/db/embedded-postgres.js"
import { tempDir } from "../support/postgres.js"
import { MAIN, ROOT } from "../support/process.js"

const exists = (path: string) =>
  fs.access(path).then(
    () => true,
    () => false
  )

/** Starts the cluster in `dir`, runs one query on its database, stops it; the log messages on the way. */
const startOnce = (dir: string) =>
  Effect.gen(function* () {
    const messages: Array<string> = []
    const logger = Logger.make(({ message }) => messages.push(Array.isArray(message) ? message.join(" ") : String(message)))
    const server = yield* embeddedPostgres({ dir, port: 0, database: "predix_check" }).pipe(
      Effect.provide(Logger.replace(Logger.defaultLogger, logger))
    )
    const rows = yield* Effect.promise(async () => {
      const client = new pg.Client({ connectionString: Redacted.value(server.url) })
      await client.connect()
      try {
        return (await client.query<{ datname: string }>("select datname from pg_database order by datname")).rows.map((r) => r.datname)
      } finally {
        await client.end()
      }
    })
    return { messages, databases: rows }
  }).pipe(Effect.scoped)

describe("embedded Postgres creation", () => {
  it.live(
    "a process group killed during the first initdb leaves a directory the next start creates again",
    () =>
      Effect.gen(function* () {
        const root = yield* tempDir("predix-initdb-kill")
        const dataDir = Path.join(root, "data")
        const dir = Path.join(dataDir, "postgres")
        // `predix migrate` creates the cluster; its whole process group (initdb included) is killed
        // as soon as initdb has written PG_VERSION.
        const { DATABASE_URL: _external, ...env } = process.env
        const child = spawn(process.execPath, [MAIN, "migrate"], {
          cwd: ROOT,
          env: { ...env, DATA_DIR: dataDir, PG_PORT: "0" },
          detached: true,
          stdio: "ignore"
        })
        const exited = new Promise((resolve) => child.once("exit", resolve))
        const written = yield* Effect.promise(async () => {
          const deadline = Date.now() + 60_000
          while (Date.now() < deadline) {
            for (const name of ["cluster", "cluster.creating"]) if (await exists(Path.join(dir, name, "PG_VERSION"))) return name
            await new Promise((r) => setTimeout(r, 2))
          }
          return undefined
        })
        process.kill(-child.pid!, "SIGKILL")
        yield* Effect.promise(() => exited)
        expect(written).toBeDefined()
        // Killed mid-creation: no `postgres` database in whatever it left.
        expect(yield* Effect.promise(() => exists(Path.join(dir, written!, "base", "5")))).toBe(false)

        const { databases } = yield* startOnce(dir)
        expect(databases).toEqual(expect.arrayContaining(["postgres", "predix_check"]))
        expect(yield* Effect.promise(() => exists(Path.join(dir, "cluster.creating")))).toBe(false)
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "a cluster left without its postgres database is created again, with a log line",
    () =>
      Effect.gen(function* () {
        const root = yield* tempDir("predix-initdb-partial")
        const dir = Path.join(root, "postgres")
        yield* startOnce(dir)
        // What an earlier version left when killed after PG_VERSION: template1 only.
        for (const db of ["4", "5"]) yield* Effect.promise(() => fs.rm(Path.join(dir, "cluster", "base", db), { recursive: true }))
        const { messages, databases } = yield* startOnce(dir)
        expect(
          messages.some((m) => /cluster is incomplete .*creating it again/.test(m)),
          messages.join("\n")
        ).toBe(true)
        expect(databases).toEqual(expect.arrayContaining(["postgres", "predix_check"]))
      }).pipe(Effect.scoped),
    120_000
  )
})
