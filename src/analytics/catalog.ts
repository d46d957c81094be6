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
 * Which tables: the allow-list of `exported-tables.ts` (the active generation's derived tables,
 * less the pipeline's bookkeeping, which the manifest summarizes; `display_metadata` of public;
 * never the backend's own tables), each read from the schema it lives in.
 */
import { planColumn, type ColumnPlan } from "./columns.js"
import { isExported } from "./exported-tables.js"
import type { SnapshotConnection } from "./snapshot.js"
import { UNDO_RULES, type UndoRule } from "./undo.js"

export type TableKind = "append" | "mutable" | "static"

export interface TablePlan {
  readonly name: string
  /** The schema it is read from: the snapshot's generation, or public for a shared table. */
  readonly schema: string
  readonly kind: TableKind
  readonly columns: ReadonlyArray<ColumnPlan>
  /** Primary-key columns in key order (empty: none). Rows are exported in this order. */
  readonly primaryKey: ReadonlyArray<string>
  readonly undo: UndoRule | undefined
}

interface CatalogRow {
  readonly schema: string
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

/**
 * Every exported table of the snapshot's generation and of public, by name. `exported` decides
 * (the allow-list; a test of the column mapping passes its own, for tables made for it).
 */
export const readCatalog = async (
  db: SnapshotConnection,
  exported: (generation: string, schema: string, table: string) => boolean = isExported
): Promise<ReadonlyArray<TablePlan>> => {
  const generation = db.generation.replace(/'/g, "''")
  const rows = await db.query<CatalogRow>(
    `select n.nspname as "schema", c.relname as "table", a.attname as "column", format_type(a.atttypid, a.atttypmod) as "type",
            coalesce((select k.ord from unnest(i.indkey) with ordinality k(attnum, ord) where k.attnum = a.attnum), 0) as key_position
       from pg_class c
       join pg_namespace n on n.oid = c.relnamespace
       join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
       left join pg_index i on i.indrelid = c.oid and i.indisprimary
      where n.nspname in ('${generation}', 'public') and c.relkind in ('r', 'p')
      order by c.relname, a.attnum`
  )
  const byTable = new Map<string, Array<CatalogRow>>()
  for (const row of rows) {
    if (!exported(db.generation, row.schema, row.table)) continue
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
      schema: cols[0]!.schema,
      kind: classify(name, primaryKey),
      columns: cols.map((c) => planColumn(name, c.column, c.type)),
      primaryKey,
      undo: UNDO_RULES[name]
    }
  })
}
