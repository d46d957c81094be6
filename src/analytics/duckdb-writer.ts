/**
 * Writes tables into a DuckDB file: each table is loaded by DuckDB's own (native, parallel) CSV
 * reader from the CSV file of its Postgres COPY (`csv-file.ts`), so no value passes through
 * JavaScript.
 *
 * Invariants:
 * - memory is bounded by DuckDB's buffer pool, which `memory_limit` caps (DuckDB spills to the
 *   file beyond it), and the CSV reader's buffers, so it does not grow with table size;
 * - rows are inserted in the order of the file, the primary-key order Postgres sorted them in
 *   (`queries.ts`): with `preserve_insertion_order` DuckDB keeps the order of a parallel CSV scan
 *   for an INSERT, and keeps insertion order for scans and for COPY ... TO parquet. (Sorting in
 *   DuckDB instead, an ORDER BY in the INSERT, ran out of the 128 MB `memory_limit` on a
 *   500,000-row table rather than spilling; Postgres sorts within its work_mem and spills.);
 * - the CSV text of every column is what DuckDB parses exactly into `ColumnPlan.csvType`
 *   (`columns.ts`): the reader is told the dialect Postgres writes, nothing is sniffed.
 */
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api"
import type { TablePlan } from "./catalog.js"
import { quoteIdent } from "./columns.js"
import { SnapshotWriteError } from "./errors.js"

/**
 * DuckDB settings of an export: a bounded buffer pool (inserting spills finished row groups to
 * the file, so 128 MB suffices whatever the table size), at most two threads (the machine is
 * shared), and insertion order kept (the rows' key order).
 */
export const DUCKDB_OPTIONS = { memory_limit: "128MB", threads: "2", preserve_insertion_order: "true" } as const

export interface DuckFile {
  readonly path: string
  readonly instance: DuckDBInstance
  readonly connection: DuckDBConnection
}

export const openDuckFile = async (path: string): Promise<DuckFile> => {
  try {
    const instance = await DuckDBInstance.create(path, { ...DUCKDB_OPTIONS })
    const connection = await instance.connect()
    return { path, instance, connection }
  } catch (cause) {
    throw new SnapshotWriteError({ path, message: `cannot open ${path} with DuckDB: ${String((cause as Error)?.message ?? cause)}`, cause })
  }
}

/** Checkpoints (so the file holds everything and no WAL is left) and closes. */
export const closeDuckFile = async (file: DuckFile, checkpoint: boolean) => {
  try {
    if (checkpoint) await file.connection.run("checkpoint")
  } finally {
    file.connection.closeSync()
    file.instance.closeSync()
  }
}

/**
 * The table with Postgres's column names and analysis types. The primary key is kept as data
 * (the key columns, one row per key, rows in key order) and named in `manifest_tables`, but not
 * declared: DuckDB backs a PRIMARY KEY with an ART index that must fit in memory while it is
 * built, which would make the export's memory grow with the table.
 */
export const createTableSql = (plan: TablePlan) =>
  `create table ${quoteIdent(plan.name)} (${plan.columns.map((c) => `${quoteIdent(c.name)} ${c.duckType}`).join(", ")})`

const literal = (text: string) => `'${text.replace(/'/g, "''")}'`

/**
 * Postgres's CSV dialect (`COPY ... (FORMAT csv)` defaults), stated so DuckDB sniffs nothing: a
 * NULL is an empty unquoted field and an empty text the quoted `""` (so quoted empties are not
 * NULLs). A row may be up to 4 MB of CSV (DuckDB's default is 2 MB; a longer one fails the
 * export, it is never cut). The reader's buffers are 8 MB rather than its default 32 MB: about
 * 25 MB less peak RSS, no measurable change in speed.
 */
const POSTGRES_CSV = `header = false, auto_detect = false, delim = ',', quote = '"', escape = '"', nullstr = '',
  allow_quoted_nulls = false, strict_mode = true, max_line_size = 4194304, buffer_size = 8388608`

/**
 * Inserts the rows of the CSV file at `path` (columns in the plan's order, as `ColumnPlan.select`
 * wrote them) into the table `plan.name`, in file order. Returns the number of rows inserted.
 */
export const insertCsv = async (connection: DuckDBConnection, plan: TablePlan, path: string): Promise<number> => {
  const field = (i: number) => `c${i}`
  const columns = plan.columns.map((c, i) => `${literal(field(i))}: ${literal(c.csvType)}`).join(", ")
  const values = plan.columns.map((c, i) => c.load(quoteIdent(field(i)))).join(", ")
  const result = await connection.run(
    `insert into ${quoteIdent(plan.name)} select ${values} from read_csv(${literal(path)}, columns = {${columns}}, ${POSTGRES_CSV})`
  )
  return Number(result.rowsChanged)
}
