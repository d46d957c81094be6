/**
 * SQL migrations from `migrations/NNNN_name.sql`, applied in id order at start through the
 * `@effect/sql` migrator.
 *
 * Invariants (from the migrator): all pending migrations run in ONE transaction after an
 * exclusive lock on the bookkeeping table, so a failing migration leaves the database exactly as
 * it was and two processes starting at once apply each migration once; a second start applies
 * nothing. A failure surfaces as `MigrationFailed` naming the migration and the database's error.
 */
import { Migrator, SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Data, Effect } from "effect"
import * as fs from "node:fs/promises"
import * as Path from "node:path"
import { PROJECT_ROOT } from "../../schema/io/project-root.js"

/** The folder of this project's migrations. */
export const MIGRATIONS_DIR = Path.join(PROJECT_ROOT, "migrations")

export class MigrationFailed extends Data.TaggedError("MigrationFailed")<{
  readonly migration: string
  readonly message: string
}> {}

/** The migrator without schema dumps (which would need pg_dump on the machine). */
const applyPending = Migrator.make({})

const FILE = /^(\d+)_([A-Za-z0-9_-]+)\.sql$/

/** Loads every `NNNN_name.sql` of `dir`; each becomes one migration running its whole text. */
export const sqlFileLoader = (dir: string, fileNames: Map<number, string> = new Map()): Migrator.Loader =>
  Effect.tryPromise({
    try: () => fs.readdir(dir),
    catch: (cause) => new Migrator.MigrationError({ reason: "import-error", message: `cannot read migrations folder ${dir}`, cause })
  }).pipe(
    Effect.flatMap((files) =>
      Effect.forEach(files.filter((file) => file.endsWith(".sql")).sort(), (file) => {
        const match = FILE.exec(file)
        if (match === null) {
          return Effect.fail(
            new Migrator.MigrationError({
              reason: "import-error",
              message: `migration file ${file} is not named NNNN_name.sql`
            })
          )
        }
        const load = Effect.promise(() => fs.readFile(Path.join(dir, file), "utf8")).pipe(
          Effect.map((text) => Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text).raw))
        )
        fileNames.set(Number(match[1]), file)
        return Effect.succeed([Number(match[1]), match[2]!, load] as const)
      })
    )
  )

/** Database error text, with Postgres's position/detail when it gives them. */
const databaseMessage = (cause: unknown): string => {
  const inner = (cause as { cause?: unknown } | undefined)?.cause ?? cause
  if (inner instanceof Error) {
    const pg = inner as Error & { detail?: string; hint?: string; position?: string }
    return [pg.message, pg.detail && `detail: ${pg.detail}`, pg.hint && `hint: ${pg.hint}`, pg.position && `at character ${pg.position}`]
      .filter(Boolean)
      .join("; ")
  }
  return String(inner)
}

/**
 * Applies pending migrations; returns the `[id, name]` pairs applied (empty when up to date).
 * The migrator turns a failing migration into a defect; it is caught here and made typed.
 * `dirs` are read together, in id order: the service passes only `migrations/`; tests add a
 * folder of their own (an upgrade's migration, say).
 */
export const runMigrations = (dirs: string | ReadonlyArray<string> = MIGRATIONS_DIR) => {
  const fileNames = new Map<number, string>()
  const loader: Migrator.Loader = Effect.map(
    Effect.forEach(typeof dirs === "string" ? [dirs] : dirs, (dir) => sqlFileLoader(dir, fileNames)),
    (all) => all.flat().sort((a, b) => a[0] - b[0])
  )
  return applyPending({ loader, table: "schema_migrations" }).pipe(
    Effect.catchAllDefect((defect) => (defect instanceof Migrator.MigrationError ? Effect.fail(defect) : Effect.die(defect))),
    Effect.mapError((error: Migrator.MigrationError | SqlError) => {
      if (error._tag === "MigrationError" && error.reason === "failed") {
        const id = Number(/"(\d+)_/.exec(error.message)?.[1])
        const name = fileNames.get(id) ?? /"(.+)"/.exec(error.message)?.[1] ?? "unknown"
        return new MigrationFailed({ migration: name, message: `migration ${name} failed: ${databaseMessage(error.cause)}` })
      }
      return new MigrationFailed({
        migration: "(migrator)",
        message: `${error.message}${error.cause === undefined ? "" : `: ${databaseMessage(error.cause)}`}`
      })
    }),
    Effect.tap((applied) =>
      applied.length === 0
        ? Effect.logInfo("migrations up to date")
        : Effect.logInfo("migrations applied").pipe(
            Effect.annotateLogs("migrations", applied.map(([id]) => fileNames.get(id) ?? String(id)).join(","))
          )
    )
  )
}

/** The highest migration id among the `NNNN_name.sql` files of `dir` (0 for none). */
const latestMigration = (dir: string) =>
  Effect.promise(() => fs.readdir(dir)).pipe(Effect.map((files) => Math.max(0, ...files.map((file) => Number(FILE.exec(file)?.[1] ?? 0)))))

/**
 * Waits until the database holds every migration of `dir` (or a newer one), polling every
 * `every` ms: what `start`'s indexer child does first, so that it can be spawned while its parent
 * migrates (a process's start-up, reading and compiling its code, then overlaps the migrations
 * instead of following them). A database without the migrator's table yet, or not answering yet,
 * counts as not migrated. The parent applies all pending migrations in one transaction, so the
 * child sees none or all of them.
 */
export const awaitMigrations = (dir: string = MIGRATIONS_DIR, every = 50) =>
  Effect.gen(function* () {
    const latest = yield* latestMigration(dir)
    const sql = yield* SqlClient.SqlClient
    const applied = sql<{ id: string | null }>`select max(migration_id) as id from schema_migrations`.pipe(
      Effect.map((rows) => Number(rows[0]?.id ?? 0)),
      Effect.orElseSucceed(() => 0)
    )
    while ((yield* applied) < latest) yield* Effect.sleep(every)
  })
