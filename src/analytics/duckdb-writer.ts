/**
 * Writes tables into a DuckDB file through the appender, one data chunk (up to DuckDB's vector
 * size, 2048 rows) at a time: values are placed column by column into the chunk's vectors and
 * handed to DuckDB in one call, rather than one native call per value.
 *
 * Invariants:
 * - memory is bounded by one chunk here plus DuckDB's own buffer pool, which `memory_limit`
 *   caps (DuckDB spills to the file beyond it), so it does not grow with table size;
 * - rows are appended in the order they arrive (the primary-key order of the reads), and DuckDB
 *   keeps insertion order for scans and for COPY ... TO parquet.
 */
import { DuckDBDataChunk, DuckDBInstance, type DuckDBConnection, type DuckDBType, type DuckDBValue } from "@duckdb/node-api"
import type { TablePlan } from "./catalog.js"
import { quoteIdent } from "./columns.js"
import { CopyFormatError, CopyTuples } from "./copy-tuples.js"
import { SnapshotWriteError, ValueOutOfRange } from "./errors.js"
import { OutOfRange } from "./pg-binary.js"

/**
 * DuckDB settings of an export: a bounded buffer pool (appending spills finished row groups to
 * the file, so 128 MB suffices whatever the table size; measured, a 4M-row table peaks within
 * 10% of a 1M-row one), at most two threads (the machine is shared).
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

/** DuckDB's vector size: the most rows one data chunk holds. */
const CHUNK_ROWS = 2048

/**
 * Appends the rows of a binary COPY stream to the table `plan.name` (columns in the plan's
 * order). `copy` runs the COPY, handing each payload to the callback it is given; rows are
 * decoded as they arrive and appended 2048 at a time. Returns the number of rows appended.
 */
export const appendCopy = async (
  connection: DuckDBConnection,
  plan: TablePlan,
  copy: (onPayload: (payload: Buffer) => void) => Promise<void>,
  onRows: (appended: number) => void
): Promise<number> => {
  const appender = await connection.createAppender(plan.name)
  const types: Array<DuckDBType> = plan.columns.map((_, i) => appender.columnType(i))
  const decoders = plan.columns.map((c) => c.decode)
  const width = decoders.length
  // Decoded values of the rows not yet appended, column by column (reused for every chunk).
  const pending: Array<Array<DuckDBValue>> = decoders.map(() => new Array<DuckDBValue>(CHUNK_ROWS))
  let rows = 0
  let total = 0

  const appendPending = () => {
    if (rows === 0) return
    const chunk = DuckDBDataChunk.create(types, rows)
    for (let c = 0; c < width; c++) {
      const vector = chunk.getColumnVector(c)
      const values = pending[c]!
      for (let r = 0; r < rows; r++) vector.setItem(r, values[r]!)
      vector.flush()
    }
    appender.appendDataChunk(chunk)
    total += rows
    rows = 0
    onRows(total)
  }

  const onTuple = (buf: Buffer, fields: Int32Array) => {
    for (let c = 0; c < width; c++) {
      const length = fields[2 * c + 1]!
      if (length < 0) {
        pending[c]![rows] = null
        continue
      }
      try {
        pending[c]![rows] = decoders[c]!(buf, fields[2 * c]!, length)
      } catch (error) {
        throw outOfRange(plan, c, error)
      }
    }
    if (++rows === CHUNK_ROWS) appendPending()
  }

  const tuples = new CopyTuples(width, onTuple)
  let closed = false
  try {
    await copy((payload) => tuples.feed(payload))
    if (!tuples.complete) throw new CopyFormatError(`the COPY of ${plan.name} ended without its trailer`)
    appendPending()
    appender.closeSync()
    closed = true
    return total
  } finally {
    if (!closed) {
      try {
        appender.closeSync()
      } catch {
        // The append already failed; its error is the one to report.
      }
    }
  }
}

const outOfRange = (plan: TablePlan, c: number, error: unknown) => {
  const column = plan.columns[c]!
  const value = error instanceof OutOfRange ? error.value : "(undecodable)"
  const why = error instanceof OutOfRange ? error.why : String((error as Error)?.message ?? error)
  return new ValueOutOfRange({
    table: plan.name,
    column: column.name,
    value,
    message: `${plan.name}.${column.name} = ${value} does not fit ${column.duckType} (${why})`
  })
}
