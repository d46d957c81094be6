import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Exit, Fiber, Logger, LogLevel, Option, Redacted, Scope } from "effect"
import { afterAll } from "vitest"
import * as fs from "node:fs/promises"
import * as Path from "node:path"
import { pgClientLayer } from "../../src/db/database.js"
import { awaitMigrations, MIGRATIONS_DIR, runMigrations } from "../../src/db/migrations.js"
import { embeddedUrl, query, scratchDatabaseOn, scratchDatabaseUrl, tempDir } from "../support/postgres.js"

const migrate = (url: string, dir?: string) =>
  runMigrations(dir).pipe(Effect.provide(pgClientLayer(Redacted.make(url))), Logger.withMinimumLogLevel(LogLevel.Warning))

const tables = (url: string) =>
  query<{ table_name: string }>(
    url,
    "select table_name from information_schema.tables where table_schema = 'public' order by table_name"
  ).pipe(Effect.map((result) => result.rows.map((row) => row.table_name)))

const shippedMigrations = async () => (await fs.readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith(".sql")).sort()

/** The same behaviour on both kinds of Postgres the service runs on. */
const suite = (name: string, database: Effect.Effect<string, unknown, Scope.Scope>) =>
  describe(`migrations on ${name}`, () => {
    it.scopedLive("applies every migration once, in order; a second run applies nothing", () =>
      Effect.gen(function* () {
        const url = yield* database
        const files = yield* Effect.promise(shippedMigrations)
        const first = yield* migrate(url)
        expect(first.map(([id, name]) => `${String(id).padStart(4, "0")}_${name}.sql`)).toEqual(files)
        expect(yield* tables(url)).toContain("indexer_checkpoint")
        const second = yield* migrate(url)
        expect(second).toEqual([])
        const recorded = yield* query<{ migration_id: number }>(url, "select migration_id from schema_migrations order by 1")
        expect(recorded.rows.map((r) => r.migration_id)).toEqual(first.map(([id]) => id))
      })
    )

    it.scopedLive("a failing migration leaves the database as it was and names itself and the error", () =>
      Effect.gen(function* () {
        const url = yield* database
        const dir = yield* tempDir("predix-migrations")
        yield* Effect.promise(async () => {
          await fs.writeFile(Path.join(dir, "0001_good.sql"), "create table good_table (id int primary key);")
          await fs.writeFile(Path.join(dir, "0002_broken.sql"), "create table half_done (id int);\ninsert into no_such_table values (1);")
        })
        const exit = yield* Effect.exit(migrate(url, dir))
        expect(Exit.isFailure(exit)).toBe(true)
        if (Exit.isFailure(exit)) {
          const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
          expect(failure?._tag).toBe("MigrationFailed")
          const error = failure?._tag === "MigrationFailed" ? failure : undefined
          expect(error?.migration).toBe("0002_broken.sql")
          expect(error?.message).toMatch(/migration 0002_broken.sql failed/)
          expect(error?.message).toMatch(/relation "no_such_table" does not exist/)
        }
        // Nothing of the batch stays: not the good migration, not the half of the broken one.
        const after = yield* tables(url)
        expect(after).not.toContain("good_table")
        expect(after).not.toContain("half_done")
        const recorded = yield* query(url, "select count(*)::int as n from schema_migrations")
        expect(recorded.rows[0]?.["n"]).toBe(0)
      })
    )

    it.scopedLive("the checkpoint table rejects malformed hashes (constraints are part of the schema)", () =>
      Effect.gen(function* () {
        const url = yield* database
        yield* migrate(url)
        const bad = yield* Effect.exit(
          Effect.flatMap(
            SqlClient.SqlClient,
            (sql) => sql`insert into indexer_checkpoint (chain_id, block_number, block_hash, digest) values (130, 1, '0xABC', '0x00')`
          ).pipe(Effect.provide(pgClientLayer(Redacted.make(url))))
        )
        expect(Exit.isFailure(bad)).toBe(true)
      })
    )
  })

/**
 * One embedded cluster for the file (started by the first test that asks, stopped after the
 * last), each test on a fresh database of it, as each DATABASE_URL test is on a fresh database
 * of the external server.
 */
const clusterScope = Effect.runSync(Scope.make())
let cluster: Promise<string> | undefined
afterAll(() => Effect.runPromise(Scope.close(clusterScope, Exit.void)))
const embeddedDatabase = Effect.promise(() => (cluster ??= Effect.runPromise(Scope.extend(embeddedUrl, clusterScope)))).pipe(
  Effect.flatMap(scratchDatabaseOn)
)

suite("an embedded Postgres", embeddedDatabase)
suite("a DATABASE_URL Postgres", scratchDatabaseUrl)

/** Copies the shipped migrations up to `last` (its id) into a folder of their own. */
const migrationsUpTo = (last: number) =>
  Effect.gen(function* () {
    const dir = yield* tempDir("predix-migrations-upto")
    const files = yield* Effect.promise(shippedMigrations)
    for (const file of files.filter((f) => Number(f.slice(0, 4)) <= last)) {
      yield* Effect.promise(() => fs.copyFile(Path.join(MIGRATIONS_DIR, file), Path.join(dir, file)))
    }
    return dir
  })

const relkind = (url: string, schema: string, name: string) =>
  query<{ relkind: string }>(
    url,
    "select c.relkind from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = $1 and c.relname = $2",
    [schema, name]
  ).pipe(Effect.map((r) => r.rows[0]?.relkind))

const shapes = (url: string) =>
  query<{ template: string; public: string }>(
    url,
    "select index_shape('index_template') as template, (select shape from index_generation where schema_name = 'public') as public"
  ).pipe(Effect.map((r) => r.rows[0]!))

describe("a migration that changes a derived table (0028: position_history from the journal)", () => {
  it.scopedLive("on a database that has indexed: only the template changes, so the next start builds a new generation", () =>
    Effect.gen(function* () {
      const url = yield* scratchDatabaseUrl
      yield* migrate(url, yield* migrationsUpTo(27))
      yield* query(url, `insert into indexer_checkpoint (chain_id, block_number, block_hash, digest) values (130, 5, $1, $1)`, [
        `0x${"ab".repeat(32)}`
      ])
      yield* migrate(url)
      expect(yield* relkind(url, "public", "position_history")).toBe("r")
      expect(yield* relkind(url, "index_template", "position_history")).toBe("v")
      const { template, public: serving } = yield* shapes(url)
      expect(serving).not.toBe(template)
    })
  )

  it.scopedLive("on a new database: public changes with the template and keeps its shape, so nothing is rebuilt", () =>
    Effect.gen(function* () {
      const url = yield* scratchDatabaseUrl
      yield* migrate(url, yield* migrationsUpTo(27))
      yield* migrate(url)
      expect(yield* relkind(url, "public", "position_history")).toBe("v")
      expect(yield* relkind(url, "index_template", "position_history")).toBe("v")
      const { template, public: serving } = yield* shapes(url)
      expect(serving).toBe(template)
    })
  )
})

describe("awaitMigrations (what start's indexer child does first)", () => {
  it.scopedLive("waits on a database without the migrator's table, then on one short of the latest, and ends once all are applied", () =>
    Effect.gen(function* () {
      const url = yield* scratchDatabaseUrl
      const waiting = yield* awaitMigrations(MIGRATIONS_DIR, 20).pipe(Effect.provide(pgClientLayer(Redacted.make(url))), Effect.fork)
      yield* Effect.sleep("300 millis")
      expect(yield* Fiber.poll(waiting)).toEqual(Option.none())
      const files = yield* Effect.promise(shippedMigrations)
      yield* migrate(url, yield* migrationsUpTo(Number(files.at(-1)!.slice(0, 4)) - 1))
      yield* Effect.sleep("300 millis")
      expect(yield* Fiber.poll(waiting)).toEqual(Option.none())
      yield* migrate(url)
      yield* Fiber.join(waiting).pipe(Effect.timeout("10 seconds"))
    })
  )
})
