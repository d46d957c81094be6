/**
 * A DuckDB snapshot of the index (and optionally Parquet files), full or incremental.
 *
 * Invariants:
 * - consistent: everything is read in ONE repeatable-read, read-only transaction
 *   (`snapshot.ts`), at one block (`point.ts`): the finalized block unless the tip is asked for;
 * - atomic: the snapshot is written to `<out>.tmp-<pid>` and renamed over `<out>` only once it is
 *   complete and checkpointed, so a reader (or a crash) never sees a partial file; a temporary
 *   file left by a killed export is removed by the next one;
 * - an incremental refresh gives the same tables as a full export of the same block: append-only
 *   rows at or below the previous snapshot's finalized block never change, so only the rows
 *   above it are deleted (tip rows of a snapshot that included the tip) and re-read; mutable and
 *   static tables are rewritten whole. Anything that makes this unsafe (another chain or
 *   deployment, another schema or layout) turns the refresh into a full export (`manifest.ts`).
 */
import { Effect } from "effect"
import * as fs from "node:fs/promises"
import * as Path from "node:path"
import { readCatalog, type TablePlan } from "./catalog.js"
import { quoteIdent } from "./columns.js"
import { appendCopy, closeDuckFile, createTableSql, openDuckFile, type DuckFile } from "./duckdb-writer.js"
import { SnapshotSourceError, SnapshotWriteError, UnknownUndoTable, ValueOutOfRange, type ExportError } from "./errors.js"
import { readManifest, refreshBlocker, writeManifest, type Manifest, type TableCount } from "./manifest.js"
import { writeParquet } from "./parquet.js"
import { readPoint, tablesChangedAbove, type SnapshotPoint } from "./point.js"
import { noProgress, type Progress } from "./progress.js"
import { readQuery } from "./queries.js"
import { openSnapshot, type SnapshotConnection } from "./snapshot.js"
import { UNDO_RULES } from "./undo.js"

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

const isExportError = (error: unknown): error is ExportError =>
  error instanceof SnapshotSourceError || error instanceof SnapshotWriteError || error instanceof UnknownUndoTable || error instanceof ValueOutOfRange

/** node-postgres errors carry the server's severity; anything else failed on the writing side. */
const fromPostgres = (error: unknown) => typeof (error as { severity?: unknown })?.severity === "string"

const messageOf = (error: unknown) => String((error as Error)?.message ?? error)

const attempt = <A>(path: string, what: string, f: () => Promise<A>) =>
  Effect.tryPromise({
    try: f,
    catch: (error): ExportError =>
      isExportError(error)
        ? error
        : fromPostgres(error)
          ? new SnapshotSourceError({ message: `${what}: ${messageOf(error)}`, cause: error })
          : new SnapshotWriteError({ path, message: `${what}: ${messageOf(error)}`, cause: error })
  })

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const removeFile = (path: string) => Promise.all([fs.rm(path, { force: true }), fs.rm(`${path}.wal`, { force: true })])

/** Temporary files of earlier exports to `out` whose process is gone (killed mid-export). */
const removeStaleTemps = (out: string) =>
  Effect.promise(async () => {
    const dir = Path.dirname(out)
    const prefix = `${Path.basename(out)}.tmp-`
    const names = await fs.readdir(dir).catch(() => [] as Array<string>)
    for (const name of names) {
      const pid = Number(/^(\d+)(\.wal)?$/.exec(name.slice(prefix.length))?.[1])
      if (name.startsWith(prefix) && Number.isSafeInteger(pid) && pid !== process.pid && !isAlive(pid)) await fs.rm(Path.join(dir, name), { force: true })
    }
  })

const fileExists = (path: string) =>
  fs.stat(path).then(
    (s) => s.isFile(),
    () => false
  )

/**
 * Opens the file to write: a copy of `out` to refresh when its manifest allows it, otherwise a
 * new file. Returns the previous manifest when refreshing, or why not.
 */
const prepareTarget = (out: string, temp: string, point: SnapshotPoint, plans: ReadonlyArray<TablePlan>, full: boolean) =>
  attempt(temp, `cannot prepare ${temp}`, async () => {
    await removeFile(temp)
    let fullBecause: string | undefined
    if (!full && (await fileExists(out))) {
      await fs.copyFile(out, temp)
      const file = await openDuckFile(temp).catch((error: unknown) => {
        fullBecause = `${out} is not a readable DuckDB file (${messageOf(error)})`
        return undefined
      })
      if (file !== undefined) {
        const previous = await readManifest(file.connection).catch((error: unknown) => `its manifest is unreadable (${messageOf(error)})`)
        const blocker = typeof previous === "string" ? previous : refreshBlocker(previous, point, plans)
        if (blocker === undefined) return { file, previous: previous as Manifest, fullBecause: undefined }
        fullBecause = `${out} cannot be refreshed in place: ${blocker}`
        await closeDuckFile(file, false)
      }
      await removeFile(temp)
    }
    return { file: await openDuckFile(temp), previous: undefined, fullBecause }
  })

/** Reads one table of the snapshot into `file`: whole, or only the append-only rows above `after`. */
const copyTable = (db: SnapshotConnection, file: DuckFile, plan: TablePlan, point: SnapshotPoint, changed: ReadonlySet<string>, after: number | undefined, progress: Progress) =>
  attempt(file.path, `exporting table ${plan.name}`, async () => {
    const incremental = after !== undefined && plan.kind === "append"
    const shown = progress.table(plan.name, incremental ? `rows above block ${after}` : plan.kind)
    await file.connection.run("begin")
    if (incremental) {
      await file.connection.run(`delete from ${quoteIdent(plan.name)} where block_number > ${after}`)
    } else {
      await file.connection.run(`drop table if exists ${quoteIdent(plan.name)}`)
      await file.connection.run(createTableSql(plan))
    }
    const query = readQuery(plan, {
      after: incremental ? after : undefined,
      upTo: point.block,
      undoAbove: changed.has(plan.name) ? point.block : undefined
    })
    const written = await appendCopy(file, plan, (onPayload) => db.copyOut(query, onPayload), shown.rows)
    await file.connection.run("commit")
    const rows = incremental
      ? Number((await file.connection.runAndReadAll(`select count(*)::VARCHAR from ${quoteIdent(plan.name)}`)).getRows()[0]![0])
      : written
    shown.done(written)
    return { name: plan.name, rows, written } satisfies TableCount
  })

/**
 * Writes the snapshot of the database at `url` to `options.out`. The snapshot transaction holds
 * the ACCESS SHARE locks of any reader until it ends: the pipeline's writes go on, a migration
 * waits for the export to finish.
 */
export const exportSnapshot = (url: string, options: ExportOptions) =>
  Effect.gen(function* () {
    const started = performance.now()
    const out = Path.resolve(options.out)
    const progress = options.progress ?? noProgress
    const includeUnfinalized = options.includeUnfinalized ?? false
    const db = yield* openSnapshot(url)
    const point = yield* attempt(out, "reading the snapshot's block", () => readPoint(db, includeUnfinalized))
    const plans = yield* attempt(out, "reading the catalog", () => readCatalog(db))
    // Mutable tables whose current rows include unfinalized changes are read through the undo
    // log; a table with undo rows this exporter cannot read must not be exported as if final.
    const changed = includeUnfinalized ? new Set<string>() : yield* attempt(out, "reading the undo log", () => tablesChangedAbove(db, point.block))
    for (const name of changed) {
      if (UNDO_RULES[name] === undefined || !plans.some((p) => p.name === name)) {
        return yield* new UnknownUndoTable({
          table: name,
          message: `the undo log holds changes of table ${name} above the finalized block ${point.block}, which this exporter cannot roll back; export with --include-unfinalized, or wait until they are final`
        })
      }
    }

    yield* Effect.promise(() => fs.mkdir(Path.dirname(out), { recursive: true }))
    yield* removeStaleTemps(out)
    const temp = `${out}.tmp-${process.pid}`
    // Until the rename, the temporary file is ours to remove on any failure or interruption.
    let renamed = false
    yield* Effect.addFinalizer(() => (renamed ? Effect.void : Effect.promise(() => removeFile(temp))))
    const target = yield* prepareTarget(out, temp, point, plans, options.full ?? false)
    const file = target.file
    let open = true
    yield* Effect.addFinalizer(() => (open ? Effect.promise(() => closeDuckFile(file, false).catch(() => undefined)) : Effect.void))

    const after = target.previous?.finalizedBlock
    const tables: Array<TableCount> = []
    for (const plan of plans) {
      const tableStarted = performance.now()
      const count = yield* copyTable(db, file, plan, point, changed, after, progress)
      yield* Effect.logDebug("table exported").pipe(
        Effect.annotateLogs({ table: plan.name, rows: count.rows, written: count.written, ms: Math.round(performance.now() - tableStarted) })
      )
      tables.push(count)
    }
    yield* attempt(temp, "writing the manifest", () =>
      writeManifest(file.connection, point, plans, tables, new Date(), target.previous?.block ?? null)
    )
    const parquet = options.parquetDir === undefined
      ? []
      : yield* attempt(Path.resolve(options.parquetDir), "writing Parquet", () =>
          writeParquet(file, Path.resolve(options.parquetDir!), [...plans.map((p) => p.name), "manifest_tables", "manifest"], `tmp-${process.pid}`)
        )
    open = false
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
    // The snapshot transaction (and the locks every reader holds) ends with the export.
    Effect.scoped
  )
