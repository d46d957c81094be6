/**
 * A DuckDB snapshot of the index (and optionally Parquet files), full or incremental.
 *
 * Invariants:
 * - consistent: everything is read under ONE Postgres snapshot (repeatable-read, read-only
 *   transactions sharing it, `snapshot.ts`) of ONE generation of the index (the one the pointer
 *   names as active in that snapshot; an export running across a switch stays on it to the end),
 *   at one block (`point.ts`): the finalized block unless the tip is asked for;
 * - atomic: the snapshot is written to `<out>.tmp-<pid>` and renamed over `<out>` only once it is
 *   complete and checkpointed, so a reader (or a crash) never sees a partial file. The CSV files
 *   the tables pass through are `<out>.tmp-<pid>.<n>.csv`, removed as each table is loaded; the
 *   temporary files a killed export leaves (DuckDB's and CSVs) are removed by the next one;
 * - an incremental refresh gives the same tables as a full export of the same block: append-only
 *   rows at or below the previous snapshot's finalized block never change, so only the rows
 *   above it are deleted (tip rows of a snapshot that included the tip) and re-read; mutable and
 *   static tables are rewritten whole. Anything that makes this unsafe (another chain or
 *   deployment, another generation, another schema or layout) turns the refresh into a full
 *   export (`manifest.ts`).
 */
import type { DuckDBConnection } from "@duckdb/node-api"
import { Effect } from "effect"
import * as fs from "node:fs/promises"
import * as Path from "node:path"
import { readCatalog, type TablePlan } from "./catalog.js"
import { copyTable, createTables, type CopyContext } from "./copy-table.js"
import { closeDuckFile } from "./duckdb-writer.js"
import { exportErrorOf, UnknownUndoTable } from "./errors.js"
import { writeManifest, type TableCount } from "./manifest.js"
import { writeParquet } from "./parquet.js"
import { readPoint, tablesChangedAbove, type SnapshotPoint } from "./point.js"
import { noProgress, type Progress } from "./progress.js"
import { openSnapshot, type SnapshotConnection } from "./snapshot.js"
import { csvPathOf, prepareTarget, removeDuckFile, removeStaleTemps, tempPathOf } from "./target-file.js"
import { UNDO_RULES } from "./undo.js"

/**
 * Tables copied at once, each on its own Postgres connection (sharing the snapshot) and DuckDB
 * connection. One lane would leave the process idle whenever Postgres sorts a table or DuckDB
 * commits one; two fill those gaps without competing for more than the two cores we assume.
 */
export const LANES = 2

export interface ExportOptions {
  /** The DuckDB file to write (replaced atomically). */
  readonly out: string
  /** Also write one Parquet file per table here. */
  readonly parquetDir?: string | undefined
  /** Snapshot the indexed tip instead of the finalized block. */
  readonly includeUnfinalized?: boolean
  /** Write a full export even when `out` could be refreshed incrementally. */
  readonly full?: boolean
  readonly progress?: Progress
}

export interface ExportResult {
  readonly mode: "full" | "incremental"
  /** Why an existing file was not refreshed in place (full exports over an existing file). */
  readonly fullBecause: string | undefined
  readonly point: SnapshotPoint
  readonly tables: ReadonlyArray<TableCount>
  /** Rows read from Postgres and written by this run. */
  readonly rowsWritten: number
  readonly seconds: number
  readonly parquet: ReadonlyArray<string>
}

const attempt = <A>(path: string, what: string, f: () => Promise<A>) => Effect.tryPromise({ try: f, catch: exportErrorOf(path, what) })

/**
 * The plans by estimated row count, largest first, so the longest copies start first. The
 * estimate is the statistics system's live-row count: kept current by every commit, and read
 * without taking a lock on the table (pg_relation_size would wait behind an exclusive lock).
 */
const bySize = async (db: SnapshotConnection, plans: ReadonlyArray<TablePlan>) => {
  const estimates = await db.query<{ schema: string; name: string; rows: string }>(
    `select schemaname as schema, relname as name, n_live_tup as rows from pg_stat_user_tables`
  )
  const rows = new Map(estimates.map((e) => [`${e.schema}.${e.name}`, Number(e.rows)]))
  const size = (plan: TablePlan) => rows.get(`${plan.schema}.${plan.name}`) ?? 0
  return [...plans].sort((a, b) => size(b) - size(a))
}

/**
 * Writes the snapshot of the database at `url` to `options.out`. The snapshot transactions hold
 * the ACCESS SHARE locks of any reader until they end: the pipeline's writes go on, a migration
 * waits for the export to finish.
 */
export const exportSnapshot = (url: string, options: ExportOptions) =>
  Effect.gen(function* () {
    const started = performance.now()
    const out = Path.resolve(options.out)
    const progress = options.progress ?? noProgress
    const includeUnfinalized = options.includeUnfinalized ?? false
    const connections = yield* openSnapshot(url, LANES)
    const db = connections[0]!
    const point = yield* attempt(out, "reading the snapshot's block", () => readPoint(db, includeUnfinalized))
    const plans = yield* attempt(out, "reading the catalog", () => readCatalog(db))
    // Mutable tables whose current rows include unfinalized changes are read through the undo
    // log; a table with undo rows this exporter cannot read must not be exported as if final.
    const changed = includeUnfinalized
      ? new Set<string>()
      : yield* attempt(out, "reading the undo log", () => tablesChangedAbove(db, point.block))
    for (const name of changed) {
      if (UNDO_RULES[name] === undefined || !plans.some((p) => p.name === name)) {
        return yield* new UnknownUndoTable({
          table: name,
          message: `the undo log holds changes of table ${name} above the finalized block ${point.block}, which this exporter cannot roll back; export with --include-unfinalized, or wait until they are final`
        })
      }
    }
    const order = yield* attempt(out, "reading table sizes", () => bySize(db, plans))

    yield* Effect.promise(() => fs.mkdir(Path.dirname(out), { recursive: true }))
    yield* Effect.promise(() => removeStaleTemps(out))
    const temp = tempPathOf(out)
    // Until the rename, the temporary file is ours to remove on any failure or interruption.
    let renamed = false
    yield* Effect.addFinalizer(() => (renamed ? Effect.void : Effect.promise(() => removeDuckFile(temp))))
    const target = yield* attempt(temp, `cannot prepare ${temp}`, () => prepareTarget(out, temp, point, plans, options.full ?? false))
    const file = target.file
    const lanes: Array<DuckDBConnection> = [file.connection]
    // Copies still running when the export is abandoned (a failure on another lane, an
    // interrupt): their Postgres connections are closed so they fail at once, and DuckDB is
    // closed only after they have, never under an appender in use.
    const running = new Set<Promise<unknown>>()
    let open = true
    yield* Effect.addFinalizer(() =>
      open
        ? Effect.promise(async () => {
            if (running.size > 0) {
              connections.forEach((c) => c.cancel())
              lanes.forEach((lane) => lane.interrupt())
            }
            await Promise.allSettled(running)
            lanes.slice(1).forEach((lane) => lane.closeSync())
            await closeDuckFile(file, false).catch(() => undefined)
          })
        : Effect.void
    )
    for (let i = 1; i < connections.length; i++)
      lanes.push(yield* attempt(temp, "opening a DuckDB connection", () => file.instance.connect()))

    const after = target.previous?.finalizedBlock
    yield* attempt(temp, "creating the tables", () => createTables(file.connection, plans, after))
    const context: CopyContext = { point, changed, after, progress, csvPath: (plan) => csvPathOf(temp, plans.indexOf(plan)) }
    const queue = [...order]
    const counts = new Map<string, TableCount>()
    const lane = (i: number) =>
      Effect.gen(function* () {
        for (let plan = queue.shift(); plan !== undefined; plan = queue.shift()) {
          const tableStarted = performance.now()
          const copy = copyTable(connections[i]!, lanes[i]!, plan, context)
          running.add(copy)
          const count = yield* attempt(temp, `exporting table ${plan.name}`, () => copy.finally(() => running.delete(copy)))
          counts.set(plan.name, count)
          yield* Effect.logDebug("table exported").pipe(
            Effect.annotateLogs({
              table: plan.name,
              rows: count.rows,
              written: count.written,
              ms: Math.round(performance.now() - tableStarted)
            })
          )
        }
      })
    yield* Effect.all(
      lanes.map((_, i) => lane(i)),
      { concurrency: "unbounded", discard: true }
    )
    const tables = plans.map((p) => counts.get(p.name)!)

    yield* attempt(temp, "writing the manifest", () =>
      writeManifest(file.connection, point, plans, tables, new Date(), target.previous?.block ?? null)
    )
    const parquetStarted = performance.now()
    const parquet =
      options.parquetDir === undefined
        ? []
        : yield* attempt(Path.resolve(options.parquetDir), "writing Parquet", () =>
            writeParquet(
              file,
              Path.resolve(options.parquetDir!),
              [...plans.map((p) => p.name), "manifest_tables", "manifest"],
              `tmp-${process.pid}`
            )
          ).pipe(
            Effect.tap((files) =>
              Effect.logDebug("parquet written").pipe(
                Effect.annotateLogs({ files: files.length, ms: Math.round(performance.now() - parquetStarted) })
              )
            )
          )
    open = false
    lanes.slice(1).forEach((l) => l.closeSync())
    yield* attempt(temp, "closing the snapshot", () => closeDuckFile(file, true))
    yield* attempt(out, `renaming ${temp} to ${out}`, () => fs.rename(temp, out))
    renamed = true
    return {
      mode: target.previous === undefined ? "full" : "incremental",
      fullBecause: target.fullBecause,
      point,
      tables,
      rowsWritten: tables.reduce((sum, t) => sum + t.written, 0),
      seconds: (performance.now() - started) / 1000,
      parquet
    } satisfies ExportResult
  }).pipe(
    // The snapshot transactions (and the locks every reader holds) end with the export.
    Effect.scoped
  )
