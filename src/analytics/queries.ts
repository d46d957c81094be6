/**
 * The SELECT that reads one table of a snapshot, in primary-key order.
 *
 * - append-only tables: the rows with block_number in (after, upTo];
 * - mutable tables with undo images above the snapshot block: the current rows the unfinalized
 *   blocks did not touch, plus, for the rows they did touch, the image from the first undo entry
 *   above the block (rows whose first image is null did not exist yet). This is the same rule
 *   the pipeline's revert uses (pipeline/sink.ts `revertTo`), evaluated read-only;
 * - everything else: the current rows.
 *
 * Block numbers are inlined as integers (checked), schema, table and column names come from the
 * catalog and are quoted: no text from outside reaches the SQL. Tables are named with their schema
 * (the undo log with the table's: a generation's mutable tables and its undo log live together),
 * so the query reads the same rows whatever the connection's search path.
 */
import type { TablePlan } from "./catalog.js"
import { quoteIdent } from "./columns.js"

export interface ReadRange {
  /** Append-only tables: only rows above this block (an incremental refresh). */
  readonly after?: number | undefined
  /** Append-only tables: rows at or below this block. */
  readonly upTo: number
  /** Mutable tables: reconstruct them as of this block through the undo log. */
  readonly undoAbove?: number | undefined
}

const block = (n: number) => {
  if (!Number.isSafeInteger(n) || n < -1) throw new Error(`not a block number: ${n}`)
  return String(n)
}

/**
 * Primary-key order, text compared bytewise (COLLATE "C"): the order DuckDB itself sorts VARCHAR
 * in, and a sort Postgres does with memcmp rather than the locale's rules.
 */
const orderBy = (plan: TablePlan) => {
  if (plan.primaryKey.length === 0) return ""
  const isText = (name: string) => plan.columns.find((c) => c.name === name)?.pgType === "text"
  return ` order by ${plan.primaryKey.map((c) => `s.${quoteIdent(c)}${isText(c) ? ` collate "C"` : ""}`).join(", ")}`
}

/** `select <columns> from <source> s ...`: the columns as `ColumnPlan.select` reads them. */
const selectFrom = (plan: TablePlan, source: string, where = "") =>
  `select ${plan.columns.map((c) => c.select).join(", ")} from ${source} s${where}${orderBy(plan)}`

export const readQuery = (plan: TablePlan, range: ReadRange): string => {
  const table = `${quoteIdent(plan.schema)}.${quoteIdent(plan.name)}`
  if (plan.kind === "append") {
    const conditions = [`s.block_number <= ${block(range.upTo)}`]
    if (range.after !== undefined) conditions.unshift(`s.block_number > ${block(range.after)}`)
    return selectFrom(plan, table, ` where ${conditions.join(" and ")}`)
  }
  if (plan.undo === undefined || range.undoAbove === undefined) return selectFrom(plan, table)
  const undo = plan.undo
  const typeOf = (column: string) => plan.columns.find((c) => c.name === column)?.pgType ?? "text"
  const names = plan.columns.map((c) => quoteIdent(c.name))
  const firsts = `select distinct on (row_key) row_key, image from ${quoteIdent(plan.schema)}.undo_log
                   where table_name = '${plan.name}' and block_number > ${block(range.undoAbove)}
                   order by row_key, block_number`
  const untouched = `select ${names.map((n) => `t.${n}`).join(", ")} from ${table} t
                      where not exists (select 1 from firsts f where (${undo.undoKey(typeOf).join(", ")}) = (${undo.rowKey.join(", ")}))`
  const restored = `select ${plan.columns.map((c) => `${undo.imageColumn(c.name, c.pgType)} as ${quoteIdent(c.name)}`).join(", ")}
                      from firsts f where f.image is not null`
  return `with firsts as (${firsts}) ${selectFrom(plan, `(${untouched} union all ${restored})`)}`
}
