/**
 * Real Postgres for tests: a throwaway embedded cluster, or a scratch database created on the
 * run's server (chosen by global-setup.ts, see test-database.ts: TEST_DATABASE_URL, else the
 * machine's own on 127.0.0.1:5432, else an embedded cluster the run started) and dropped
 * afterwards.
 */
import type { SqlClient } from "@effect/sql"
import type { PgClient } from "@effect/sql-pg"
import { Effect, Logger, LogLevel, Redacted, type Scope } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import pg from "pg"
import { pgClientLayer } from "../../src/db/database.js"
import { embeddedPostgres } from "../../src/db/embedded-postgres.js"
import { runMigrations } from "../../src/db/migrations.js"
import { copyOfTemplate, databaseUrlOn, scratchName, withClient } from "./template-db.js"
import { MACHINE_URL } from "./test-database.js"

/**
 * The run's server as the global setup chose it. Outside a vitest run (the benches import this
 * file) "vitest" cannot even be imported, hence the dynamic import; there TEST_DATABASE_URL or
 * the machine's server is used.
 */
const vitest = process.env["VITEST"] === undefined ? undefined : await import("vitest")
const injectedUrl = vitest?.inject("databaseUrl")
/** The run's template of a migrated database (global-setup.ts names it; the first file to ask builds it). */
const migratedTemplate = vitest?.inject("migratedTemplate")

/** The server scratch databases are created on (its `postgres` database): shared by the whole run, never stopped by a test. */
export const EXTERNAL_URL = injectedUrl ?? (process.env["TEST_DATABASE_URL"] || MACHINE_URL)

/** A temporary directory removed when the scope closes; world-traversable so the postgres user can use it. */
export const tempDir = (prefix: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const dir = await fs.mkdtemp(Path.join(os.tmpdir(), `${prefix}-`))
      await fs.chmod(dir, 0o755)
      return dir
    }),
    (dir) => Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
  )

/** An embedded cluster in a temporary directory, on a free port; stopped and removed with the scope. */
export const embeddedUrl = Effect.gen(function* () {
  const dir = yield* tempDir("predix-pg")
  const server = yield* embeddedPostgres({ dir: Path.join(dir, "postgres"), port: 0, database: "predix_test" })
  return Redacted.value(server.url)
}).pipe(Logger.withMinimumLogLevel(LogLevel.Warning))

/** A fresh database on the server of `serverUrl`, dropped with the scope. */
export const scratchDatabaseOn = (serverUrl: string) =>
  Effect.acquireRelease(
    Effect.gen(function* () {
      const name = scratchName()
      yield* withClient(serverUrl, (client) => client.query(`create database ${name}`))
      return name
    }),
    (name) => withClient(serverUrl, (client) => client.query(`drop database if exists ${name} with (force)`))
  ).pipe(Effect.map((name) => databaseUrlOn(serverUrl, name)))

/** A fresh database on the run's server, dropped with the scope. */
export const scratchDatabaseUrl = scratchDatabaseOn(EXTERNAL_URL)

/** Runs one query on a fresh connection. */
export const query = <R extends pg.QueryResultRow = pg.QueryResultRow>(url: string, text: string, values: Array<unknown> = []) =>
  withClient(url, (client) => client.query<R>(text, values))

/** The checkpoint block of generation `schema` of the database at `url`; -1 while it has none (or no such schema). */
export const generationCheckpoint = (url: string, schema: string): Promise<number> =>
  Effect.runPromise(query<{ block: string }>(url, `select block_number::text as block from "${schema}".indexer_checkpoint`)).then(
    (r) => (r.rows[0] === undefined ? -1 : Number(r.rows[0].block)),
    () => -1
  )

/** Every generation of the database at `url` and its state, oldest first. */
export const generationStates = (url: string) =>
  Effect.runPromise(
    query<{ schema: string; state: string }>(url, `select schema_name as schema, state from index_generation order by n`)
  ).then((r) => r.rows)

/** Applies every migration to the database at `url` (and closes its connections). */
const migrateDatabase = (url: string) =>
  Effect.provide(runMigrations(), pgClientLayer(Redacted.make(url))).pipe(Effect.scoped, Logger.withMinimumLogLevel(LogLevel.Warning))

/**
 * A fresh database on the run's server with every migration applied, dropped with the scope: a
 * copy of the run's migrated template (built once, by the code under test, see template-db.ts),
 * or outside a vitest run a scratch database migrated here.
 */
export const migratedDatabaseUrl = Effect.gen(function* () {
  if (migratedTemplate === undefined) {
    const url = yield* scratchDatabaseUrl
    yield* migrateDatabase(url)
    return url
  }
  return databaseUrlOn(EXTERNAL_URL, yield* copyOfTemplate(EXTERNAL_URL, migratedTemplate, migrateDatabase))
})

/**
 * Runs `body` against a fresh, migrated scratch database, dropped afterwards; logs at `level` and
 * above. The migrations run again first (finding nothing to apply in a copy of the template).
 */
export const withScratchDb = <A, E>(
  body: Effect.Effect<A, E, SqlClient.SqlClient | PgClient.PgClient | Scope.Scope>,
  level: LogLevel.LogLevel = LogLevel.Warning
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const url = yield* migratedDatabaseUrl
      return yield* Effect.provide(Effect.zipRight(runMigrations(), body), pgClientLayer(Redacted.make(url)))
    })
  ).pipe(Logger.withMinimumLogLevel(level))
