/**
 * Where the rows of a table are put in primary-key order (the order a snapshot keeps them in).
 *
 * Sorting in DuckDB (an ORDER BY in the INSERT, `duckdb-writer.ts`) is several times cheaper than
 * in Postgres, and it sorts the analysis values: that is the key order when every key column's
 * DuckDB value orders as its Postgres value does, i.e. for text (DuckDB compares VARCHAR
 * bytewise, as Postgres's COLLATE "C"), numbers (numeric -> DECIMAL, integers) , unix seconds
 * (-> TIMESTAMP) and booleans. A key with any other column (a type exported as its text, whose
 * text order may differ from its own) is sorted by Postgres instead (`queries.ts`), text
 * compared with COLLATE "C", and DuckDB inserts the rows in file order.
 */
import type { TablePlan } from "./catalog.js"
import type { ColumnPlan } from "./columns.js"

const ordersAlike = (c: ColumnPlan) =>
  c.pgType === "text" || c.meaning === "integer" || c.meaning === "raw" || c.meaning === "units" || c.meaning === "boolean" || (c.meaning === "time" && c.csvType === "BIGINT")

/** The plan's key columns (indexes into `plan.columns`, in key order). */
export const keyColumns = (plan: TablePlan) => plan.primaryKey.map((name) => plan.columns.findIndex((c) => c.name === name))

/** True when DuckDB sorts the table's rows (Postgres sends them unordered). */
export const sortedInDuckDb = (plan: TablePlan) => keyColumns(plan).every((i) => i >= 0 && ordersAlike(plan.columns[i]!))
