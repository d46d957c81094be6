import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Exit, Logger, LogLevel, Redacted, Scope } from "effect"
import { afterAll } from "vitest"
import * as fs from "node:fs/promises"
import * as Path from "node:path"
import { pgClientLayer } from "../../src/db/database.js"
import { MIGRATIONS_DIR, runMigrations } from "../../src/db/migrations.js"
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
