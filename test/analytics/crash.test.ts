/**
 * An export killed midway (a real `predix export` process, SIGKILLed while it is writing)
 * leaves the previous snapshot byte for byte as it was and readable; the next export removes the
 * killed one's temporary file and completes.
 *
 * "Midway" is made certain rather than timed: the test holds an ACCESS EXCLUSIVE lock on
 * `trade`, so the export copies other tables into its temporary file and then waits on the
 * lock; it is killed there, seen waiting in pg_stat_activity.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs/promises"
import * as Path from "node:path"
import pg from "pg"
import { exportSnapshot } from "../../src/analytics/export.js"
import { APPLICATION_NAME } from "../../src/analytics/snapshot.js"
import { fixtureDatabaseUrl } from "../support/fixture-db.js"
import { tempDir } from "../support/postgres.js"
import { runCli } from "../support/process.js"
import { duckSnapshot, withDuck } from "./support.js"

const sha256 = (path: string) =>
  Effect.promise(async () =>
    createHash("sha256")
      .update(await fs.readFile(path))
      .digest("hex")
  )

describe("an export killed midway", () => {
  it.scoped(
    "leaves the previous file untouched and valid",
    () =>
      Effect.gen(function* () {
        const { url } = yield* fixtureDatabaseUrl
        const dir = yield* tempDir("predix-export")
        const out = Path.join(dir, "snapshot.duckdb")
        yield* exportSnapshot(url, { out })
        const before = { hash: yield* sha256(out), snapshot: yield* withDuck(out, duckSnapshot) }

        const locker = yield* Effect.acquireRelease(
          Effect.promise(async () => {
            const client = new pg.Client({ connectionString: url })
            await client.connect()
            await client.query("begin")
            await client.query("lock table trade in access exclusive mode")
            return client
          }),
          (client) => Effect.promise(() => client.query("rollback").finally(() => client.end()))
        )

        const app = runCli(["export", "--out", out], { DATABASE_URL: url, LOG_LEVEL: "debug" })
        yield* Effect.promise(() => app.waitFor(/message="table exported".*table=market\b/, 60_000))
        // Watched from another connection: inside the locker's transaction the statistics views
        // would show the snapshot taken at its first read.
        const waiting = yield* Effect.promise(async () => {
          const watcher = new pg.Client({ connectionString: url })
          await watcher.connect()
          try {
            for (let i = 0; i < 600; i++) {
              const rows = await watcher.query(
                `select pid from pg_stat_activity where application_name = $1 and wait_event_type = 'Lock'`,
                [APPLICATION_NAME]
              )
              if (rows.rowCount === 1) return true
              if (app.child.exitCode !== null) return false
              await new Promise((r) => setTimeout(r, 100))
            }
            return false
          } finally {
            await watcher.end()
          }
        })
        expect(waiting, app.output()).toBe(true)
        const temp = `${out}.tmp-${app.child.pid}`
        // The export is midway: other tables are in its temporary file, `trade` is not.
        expect(app.output()).toMatch(/message="table exported".*table=market\b/)
        expect(app.output()).not.toMatch(/message="table exported".*table=trade\b/)
        expect((yield* Effect.promise(() => fs.stat(temp))).size).toBeGreaterThan(0)

        app.child.kill("SIGKILL")
        expect(yield* Effect.promise(() => app.exited)).toBeNull()
        yield* Effect.promise(() => locker.query("rollback"))

        expect(yield* sha256(out)).toBe(before.hash)
        expect(yield* withDuck(out, duckSnapshot)).toEqual(before.snapshot)
        expect((yield* Effect.promise(() => fs.readdir(dir))).filter((f) => f.includes(".tmp-"))).not.toEqual([])

        // The next export completes and clears what the killed one left.
        const again = yield* exportSnapshot(url, { out })
        expect(again.mode).toBe("incremental")
        expect((yield* Effect.promise(() => fs.readdir(dir))).filter((f) => f.includes(".tmp-"))).toEqual([])
        expect(yield* withDuck(out, duckSnapshot)).toEqual(before.snapshot)
      }),
    120_000
  )
})
