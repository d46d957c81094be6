/**
 * The export and the generations of the index (blue-green re-index, `src/db/generations.ts`), on
 * the indexed fixture in a real Postgres and real DuckDB files:
 * - before a switch the snapshot is public's, after it the new generation's: every exported table
 *   equals the active generation's rows, and the manifest names the generation;
 * - a refresh of a file whose manifest names another generation is a full export, and says why;
 * - a snapshot opened before a switch stays on its generation to the end, even when the retired
 *   generation's drop is asked for meanwhile (it waits for the export: the drop lock);
 * - what is exported is the allow-list, never a table of the backend's sign-in secrets.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Fiber, Layer, Redacted } from "effect"
import * as Path from "node:path"
import { readCatalog } from "../../src/analytics/catalog.js"
import { exportSnapshot } from "../../src/analytics/export.js"
import { EXPORTED_DERIVED, EXPORTED_SHARED, SECRET_TABLES } from "../../src/analytics/exported-tables.js"
import { readPoint } from "../../src/analytics/point.js"
import { openSnapshot } from "../../src/analytics/snapshot.js"
import { GENERATION_TABLES } from "../../src/db/chain-data.js"
import { pgClientLayer } from "../../src/db/database.js"
import { dropRetired, requestBuild, switchGeneration } from "../../src/db/generations.js"
import { fixtureDatabaseUrl } from "../support/fixture-db.js"
import { tempDir } from "../support/postgres.js"
import { duckRows, duckTable, exportedTables, pgTable, withDuck, withPg } from "./support.js"

/** Every exported table of the file equals the same table of `schema` (as the generation's connections see it). */
const expectFileEquals = (url: string, out: string, schema: string) =>
  Effect.gen(function* () {
    const tables = yield* withDuck(out, exportedTables)
    const expected = yield* withPg(url, async (client) => {
      await client.query(`set search_path = ${schema === "public" ? "public" : `${schema}, public`}`)
      const rows: Record<string, unknown> = {}
      for (const t of tables) rows[t] = await pgTable(client, t)
      return rows
    })
    yield* withDuck(out, async (db) => {
      for (const table of tables) expect({ table, rows: await duckTable(db, table) }).toEqual({ table, rows: expected[table] })
    })
    return tables
  })

const manifestOf = (out: string) =>
  withDuck(out, async (db) => (await duckRows(db, `select generation, export_format, block_number from manifest`))[0])

/** Whether a session waits for the drop lock (the drop of a retired public, held up by an export). */
const dropWaits = (url: string) =>
  withPg(url, async (client) => {
    const rows = await client.query(
      `select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query ilike '%pg_advisory_xact_lock%'`
    )
    return rows.rows.length > 0
  })

describe("the export follows the active generation", () => {
  // Live clock: the test polls with Effect.sleep, which under `it.scoped`'s TestClock never ends.
  // (It hung whenever the drop had not reached its lock wait at the first look: under load.)
  it.scopedLive(
    "public before the switch, index_2 after: rows equal the active generation's, the manifest names it, a refresh across the switch is a full export",
    () =>
      Effect.gen(function* () {
        const { url } = yield* fixtureDatabaseUrl
        const dir = yield* tempDir("predix-export-generations")
        const out = Path.join(dir, "snapshot.duckdb")
        const db = yield* Layer.build(pgClientLayer(Redacted.make(url)))
        const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.provide(effect, db)

        // Before any re-index: public's tables.
        const first = yield* exportSnapshot(url, { out })
        expect(first.point.generation).toBe("public")
        expect(yield* manifestOf(out)).toEqual(["public", 2, String(first.point.block)])
        const tables = yield* expectFileEquals(url, out, "public")

        // What is exported: the allow-list only, never a table of the sign-in secrets (and the
        // secret tables do exist in the migrated schema, so the check is not vacuous).
        expect(tables.length).toBeGreaterThan(20)
        expect(tables.filter((t) => !EXPORTED_DERIVED.has(t) && !EXPORTED_SHARED.has(t))).toEqual([])
        expect(tables.filter((t) => SECRET_TABLES.has(t) || /auth|session|nonce|ticket|passkey|credential|challenge/.test(t))).toEqual([])
        const present = yield* withPg(url, async (client) =>
          (await client.query<{ n: string }>(`select tablename as n from pg_tables where schemaname = 'public'`)).rows.map((r) => r.n)
        )
        expect([...SECRET_TABLES].filter((t) => !present.includes(t))).toEqual([])
        expect(tables).toContain("display_metadata")
        expect(tables).not.toContain("log_store")

        // A second generation, built here as a copy of public's rows with one visible difference
        // (every market's question), so a file of it cannot pass for public's.
        yield* run(requestBuild(Duration.seconds(600)))
        yield* withPg(url, async (client) => {
          for (const t of GENERATION_TABLES) await client.query(`insert into index_2."${t}" select * from public."${t}"`)
          await client.query(`update index_2.market set question = 'rebuilt: ' || question`)
        })

        // A snapshot opened before the switch stays on public to the end: the switch passes it by,
        // the drop of the retired public (a TRUNCATE of its derived tables) waits for it.
        const before = yield* withPg(url, async (client) =>
          Number((await client.query(`select count(*) from public.market`)).rows[0].count)
        )
        expect(before).toBeGreaterThan(0)
        yield* Effect.scoped(
          Effect.gen(function* () {
            const [snapshot] = yield* openSnapshot(url, 2)
            yield* run(switchGeneration(130, "index_2"))
            const drop = yield* Effect.fork(run(dropRetired(true)))
            // Until the drop waits for the export's drop lock (or, were it not held, has finished).
            while (drop.unsafePoll() === null && !(yield* dropWaits(url))) yield* Effect.sleep(Duration.millis(20))
            expect(drop.unsafePoll()).toBeNull()
            expect(snapshot!.generation).toBe("public")
            const point = yield* Effect.promise(() => readPoint(snapshot!, false))
            expect(point.generation).toBe("public")
            const plan = (yield* Effect.promise(() => readCatalog(snapshot!))).find((p) => p.name === "market")!
            expect(plan.schema).toBe("public")
            const rows = yield* Effect.promise(() => snapshot!.query<{ n: string }>(`select count(*) as n from public.market`))
            expect(Number(rows[0]!.n)).toBe(before)
            const questions = yield* Effect.promise(() => snapshot!.query<{ q: string }>(`select question as q from market limit 1`))
            expect(questions[0]!.q.startsWith("rebuilt: ")).toBe(false)
            // The drop is still waiting for the export's drop lock.
            expect(drop.unsafePoll()).toBeNull()
            return drop
          })
        ).pipe(Effect.flatMap((drop) => Fiber.join(drop)))
        // The snapshot closed, the drop went through.
        expect(yield* withPg(url, async (client) => Number((await client.query(`select count(*) from public.market`)).rows[0].count))).toBe(
          0
        )

        // After the switch: a refresh of public's file is a full export of index_2, and says why.
        const second = yield* exportSnapshot(url, { out })
        expect(second.point.generation).toBe("index_2")
        expect(second.mode).toBe("full")
        expect(second.fullBecause).toContain("generation public")
        expect(second.fullBecause).toContain("index_2")
        expect((yield* manifestOf(out))![0]).toBe("index_2")
        expect(yield* expectFileEquals(url, out, "index_2")).toEqual(tables)
        const question = yield* withDuck(out, async (duck) => (await duckRows(duck, `select question from market limit 1`))[0]![0])
        expect(String(question).startsWith("rebuilt: ")).toBe(true)

        // The same generation again: refreshed in place.
        const third = yield* exportSnapshot(url, { out })
        expect(third.mode).toBe("incremental")
        expect(third.fullBecause).toBeUndefined()
        yield* expectFileEquals(url, out, "index_2")
      }),
    180_000
  )

  it.scoped(
    "a file written by export format 1 (no generation column) is read, and refreshed by a full export",
    () =>
      Effect.gen(function* () {
        const { url } = yield* fixtureDatabaseUrl
        const dir = yield* tempDir("predix-export-format1")
        const out = Path.join(dir, "snapshot.duckdb")
        yield* exportSnapshot(url, { out })
        // What format 1 wrote: the same manifest without the generation column.
        yield* Effect.promise(async () => {
          const { DuckDBInstance } = await import("@duckdb/node-api")
          const instance = await DuckDBInstance.create(out)
          const duck = await instance.connect()
          await duck.run(`alter table manifest drop column generation`)
          await duck.run(`update manifest set export_format = 1`)
          duck.closeSync()
          instance.closeSync()
        })
        const again = yield* exportSnapshot(url, { out })
        expect(again.mode).toBe("full")
        expect(again.fullBecause).toContain("export format 1, this is 2")
        expect((yield* manifestOf(out))![0]).toBe("public")
      }),
    300_000
  )
})
