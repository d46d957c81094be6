/**
 * Copies one table of the snapshot into the DuckDB file, in its own DuckDB transaction: the
 * whole table, or for a refresh of an append-only table only the rows above the previous
 * snapshot's finalized block (after deleting any it held above that block: tip rows).
 *
 * The rows go through a CSV file: Postgres writes the analysis-typed text (`columns.ts`), node
 * streams it to `context.csvPath(plan)` (`csv-file.ts`), DuckDB's CSV reader inserts it
 * (`duckdb-writer.ts`). The file is removed once the table is in, or the copy failed.
 *
 * Tables are created (or, for a refresh, recreated) before any copy starts (`createTables`), so
 * the copies of several tables can run on separate connections at once without two
 * transactions changing DuckDB's catalog concurrently.
 */
import type { DuckDBConnection } from "@duckdb/node-api"
import * as fs from "node:fs/promises"
import type { TablePlan } from "./catalog.js"
import { quoteIdent } from "./columns.js"
import { copyToFile } from "./csv-file.js"
import { createTableSql, insertCsv } from "./duckdb-writer.js"
import type { TableCount } from "./manifest.js"
import type { SnapshotPoint } from "./point.js"
import { valueOutOfRangeOf } from "./out-of-range.js"
import type { Progress } from "./progress.js"
import { readQuery } from "./queries.js"
import type { SnapshotConnection } from "./snapshot.js"

export interface CopyContext {
  readonly point: SnapshotPoint
  /** Mutable tables with undo images above the snapshot block. */
  readonly changed: ReadonlySet<string>
  /** For a refresh: the previous snapshot's finalized block. */
  readonly after: number | undefined
  readonly progress: Progress
  /** Where the CSV of a table is written: a name the export removes if a run leaves it behind. */
  readonly csvPath: (plan: TablePlan) => string
}

const refreshesInPlace = (plan: TablePlan, after: number | undefined) => after !== undefined && plan.kind === "append"

/** (Re)creates, empty, every table a copy will fill whole. */
export const createTables = async (db: DuckDBConnection, plans: ReadonlyArray<TablePlan>, after: number | undefined) => {
  for (const plan of plans) {
    if (refreshesInPlace(plan, after)) continue
    await db.run(`drop table if exists ${quoteIdent(plan.name)}`)
    await db.run(createTableSql(plan))
  }
}

export const copyTable = async (
  pg: SnapshotConnection,
  duck: DuckDBConnection,
  plan: TablePlan,
  context: CopyContext
): Promise<TableCount> => {
  const { point, after } = context
  const incremental = refreshesInPlace(plan, after)
  const shown = context.progress.table(plan.name, incremental ? `rows above block ${after}` : plan.kind)
  const query = readQuery(plan, {
    after: incremental ? after : undefined,
    upTo: point.block,
    undoAbove: context.changed.has(plan.name) ? point.block : undefined
  })
  const csv = context.csvPath(plan)
  let written: number
  try {
    await copyToFile(pg, query, csv, shown.rows).catch((error: unknown) => {
      throw valueOutOfRangeOf(plan, error) ?? error
    })
    await duck.run("begin")
    if (incremental) await duck.run(`delete from ${quoteIdent(plan.name)} where block_number > ${after}`)
    written = await insertCsv(duck, plan, csv)
    await duck.run("commit")
  } finally {
    await fs.rm(csv, { force: true })
  }
  const rows = incremental
    ? Number((await duck.runAndReadAll(`select count(*)::VARCHAR from ${quoteIdent(plan.name)}`)).getRows()[0]![0])
    : written
  shown.done(written)
  return { name: plan.name, rows, written }
}
