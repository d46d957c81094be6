/**
 * Which tables a snapshot holds and how each is read, from the Postgres catalog as the snapshot
 * transaction sees it (so a migration applied while the service runs is picked up, and the
 * metadata tables other features add are exported without a change here).
 *
 * Kinds:
 * - `append`: keyed by (block_number, log_index, ...) (one row per log, or per log and user as
 *   `position_move`); a row never changes once written, and a reorg
 *   only deletes rows above the common ancestor. Finalized rows are those at or below the
 *   finalized block, and an incremental refresh only adds rows above the last one exported.
 * - `mutable`: rows the pipeline updates in place; their state at the finalized block is read
 *   through the undo log (`undo.ts`). Rewritten by every refresh.
 * - `static`: tables not written per block (the indexed deployment, display metadata): exported
 *   as they are. Rewritten by every refresh.
 *
 * The pipeline's bookkeeping (checkpoint, unfinalized window, undo log, metrics, migrations) is not
 * exported as tables: the manifest says what it needs of it.
 */
import { planColumn, type ColumnPlan } from "./columns.js"
import type { SnapshotConnection } from "./snapshot.js"
import { UNDO_RULES, type UndoRule } from "./undo.js"

export const INTERNAL_TABLES: ReadonlySet<string> = new Set([
  "indexer_checkpoint",
  "indexed_block",
  "undo_log",
  "schema_migrations",
  "indexer_metrics"
])

export type TableKind = "append" | "mutable" | "static"

export interface TablePlan {
  readonly name: string
  readonly kind: TableKind
  readonly columns: ReadonlyArray<ColumnPlan>
  /** Primary-key columns in key order (empty: none). Rows are exported in this order. */
  readonly primaryKey: ReadonlyArray<string>
  readonly undo: UndoRule | undefined
}

interface CatalogRow {
  readonly table: string
  readonly column: string
  readonly type: string
  readonly key_position: string
}

const classify = (name: string, primaryKey: ReadonlyArray<string>): TableKind =>
  UNDO_RULES[name] !== undefined
    ? "mutable"
    : primaryKey.length >= 2 && primaryKey[0] === "block_number" && primaryKey[1] === "log_index"
      ? "append"
      : "static"

/** Every exportable table of the connection's schema, by name. */
export const readCatalog = async (db: SnapshotConnection): Promise<ReadonlyArray<TablePlan>> => {
  const rows = await db.query<CatalogRow>(
    `select c.relname as "table", a.attname as "column", format_type(a.atttypid, a.atttypmod) as "type",
            coalesce((select k.ord from unnest(i.indkey) with ordinality k(attnum, ord) where k.attnum = a.attnum), 0) as key_position
       from pg_class c
       join pg_namespace n on n.oid = c.relnamespace
       join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
       left join pg_index i on i.indrelid = c.oid and i.indisprimary
      where n.nspname = current_schema() and c.relkind in ('r', 'p')
      order by c.relname, a.attnum`
  )
  const byTable = new Map<string, Array<CatalogRow>>()
  for (const row of rows) {
    if (INTERNAL_TABLES.has(row.table)) continue
    const list = byTable.get(row.table) ?? []
    list.push(row)
    byTable.set(row.table, list)
  }
  return [...byTable].map(([name, cols]) => {
    const primaryKey = cols
      .filter((c) => Number(c.key_position) > 0)
      .sort((a, b) => Number(a.key_position) - Number(b.key_position))
      .map((c) => c.column)
    return {
      name,
      kind: classify(name, primaryKey),
      columns: cols.map((c) => planColumn(name, c.column, c.type)),
      primaryKey,
      undo: UNDO_RULES[name]
    }
  })
}
