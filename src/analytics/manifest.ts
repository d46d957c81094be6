/**
 * The manifest a snapshot carries: `manifest` (one row: which chain, block and hash the
 * snapshot stands at, of which generation of the index, when it was written, from which schema) and `manifest_tables` (one row per
 * exported table: kind, primary key, row count and the column layout).
 *
 * An incremental refresh trusts an existing file only through its manifest: it refreshes in
 * place only when the chain, deployment, generation, schema version, export format and every
 * table's layout are the same as a full export would write now, and the recorded finalized block
 * is not above the one being exported; otherwise it writes a full export. Another generation is
 * another build of the derived tables (a re-index, after which rows may differ, and whose commit
 * positions are new numbers): rows at or below the recorded block cannot be kept.
 *
 * Format 2 added `manifest.generation`. A format-1 file (written before generations existed, so
 * of public) is still read: its generation is reported as public, and it is refreshed by a full
 * export (the format differs).
 */
import type { DuckDBConnection } from "@duckdb/node-api"
import type { TablePlan } from "./catalog.js"
import { quoteIdent } from "./columns.js"
import type { SnapshotPoint } from "./point.js"

/** Bumped whenever the mapping of `columns.ts` or the manifest's layout changes (2: `generation`). */
export const EXPORT_FORMAT = 2

export interface TableCount {
  readonly name: string
  readonly rows: number
  /** Rows this run wrote (all of them for a full export; the new ones for a refresh). */
  readonly written: number
}

export interface Manifest {
  /** The generation the snapshot was read from (`public` for a format-1 file). */
  readonly generation: string
  readonly chainId: number
  readonly block: number
  readonly hash: string
  readonly finalizedBlock: number
  readonly includesUnfinalized: boolean
  readonly schemaVersion: number
  readonly exportFormat: number
  readonly diamond: string | null
  /** table name -> column layout, as `layoutOf` writes it. */
  readonly layouts: ReadonlyMap<string, string>
}

/** A table's columns and key as one comparable string. */
export const layoutOf = (plan: TablePlan) =>
  `${plan.columns.map((c) => `${c.name} ${c.duckType}`).join(", ")}; key (${plan.primaryKey.join(", ")})`

const text = (value: string | null) => (value === null ? "null" : `'${value.replace(/'/g, "''")}'`)
const int = (value: number | null) => {
  if (value !== null && !Number.isSafeInteger(value)) throw new Error(`not an integer: ${value}`)
  return value === null ? "null" : String(value)
}

export const writeManifest = async (
  db: DuckDBConnection,
  point: SnapshotPoint,
  plans: ReadonlyArray<TablePlan>,
  counts: ReadonlyArray<TableCount>,
  exportedAt: Date,
  refreshedFrom: number | null
) => {
  await db.run(`drop table if exists manifest`)
  await db.run(`drop table if exists manifest_tables`)
  await db.run(
    `create table manifest (
       chain_id BIGINT, block_number BIGINT, block_hash VARCHAR, digest VARCHAR, includes_unfinalized BOOLEAN,
       finalized_block BIGINT, finalized_block_hash VARCHAR, indexed_block BIGINT, diamond VARCHAR,
       schema_version INTEGER, export_format INTEGER, exported_at TIMESTAMPTZ, refreshed_from_block BIGINT, generation VARCHAR)`
  )
  await db.run(
    `insert into manifest values (${int(point.chainId)}, ${int(point.block)}, ${text(point.hash)}, ${text(point.digest)},
       ${point.includesUnfinalized}, ${int(point.finalizedBlock)}, ${text(point.finalizedHash)}, ${int(point.indexedBlock)},
       ${text(point.diamond)}, ${int(point.schemaVersion)}, ${EXPORT_FORMAT}, ${text(exportedAt.toISOString())}::TIMESTAMPTZ,
       ${int(refreshedFrom)}, ${text(point.generation)})`
  )
  await db.run(
    `create table manifest_tables (table_name VARCHAR PRIMARY KEY, kind VARCHAR, primary_key VARCHAR[], row_count BIGINT,
       rows_written BIGINT, layout VARCHAR)`
  )
  const byName = new Map(counts.map((c) => [c.name, c]))
  for (const plan of plans) {
    const count = byName.get(plan.name)
    const key = `[${plan.primaryKey.map(text).join(", ")}]::VARCHAR[]`
    await db.run(
      `insert into manifest_tables values (${text(plan.name)}, ${text(plan.kind)}, ${key}, ${int(count?.rows ?? 0)},
         ${int(count?.written ?? 0)}, ${text(layoutOf(plan))})`
    )
  }
}

/** The manifest of an existing snapshot, or a reason it cannot be refreshed in place. */
export const readManifest = async (db: DuckDBConnection): Promise<Manifest | string> => {
  const tables = await db.runAndReadAll(
    `select table_name from information_schema.tables where table_name in ('manifest', 'manifest_tables')`
  )
  if (tables.getRows().length < 2) return "it has no manifest"
  // Format 1 has no generation column: its snapshots are of public, the only generation then.
  const hasGeneration =
    (
      await db.runAndReadAll(`select 1 from information_schema.columns where table_name = 'manifest' and column_name = 'generation'`)
    ).getRows().length > 0
  const rows = (
    await db.runAndReadAll(
      `select chain_id::VARCHAR, block_number::VARCHAR, block_hash, finalized_block::VARCHAR, includes_unfinalized,
              schema_version::VARCHAR, export_format::VARCHAR, diamond, ${hasGeneration ? "generation" : "'public'"} from manifest`
    )
  ).getRows()
  const row = rows[0]
  if (rows.length !== 1 || row === undefined) return "its manifest does not have exactly one row"
  const layouts = (await db.runAndReadAll(`select table_name, layout from manifest_tables`)).getRows()
  return {
    generation: String(row[8] ?? "public"),
    chainId: Number(row[0]),
    block: Number(row[1]),
    hash: String(row[2]),
    finalizedBlock: Number(row[3]),
    includesUnfinalized: row[4] === true,
    schemaVersion: Number(row[5]),
    exportFormat: Number(row[6]),
    diamond: row[7] === null ? null : String(row[7]),
    layouts: new Map(layouts.map(([name, layout]) => [String(name), String(layout)]))
  }
}

/** Why `previous` cannot be refreshed to `point` with `plans`, or undefined when it can. */
export const refreshBlocker = (previous: Manifest, point: SnapshotPoint, plans: ReadonlyArray<TablePlan>): string | undefined => {
  if (previous.exportFormat !== EXPORT_FORMAT) return `it was written by export format ${previous.exportFormat}, this is ${EXPORT_FORMAT}`
  if (previous.chainId !== point.chainId)
    return `it is a snapshot of chain ${previous.chainId}, the database indexes chain ${point.chainId}`
  if (previous.diamond !== point.diamond) return `it is a snapshot of deployment ${previous.diamond}, the database indexes ${point.diamond}`
  if (previous.generation !== point.generation)
    return `it is a snapshot of generation ${previous.generation}, the database serves generation ${point.generation} (another build of the derived tables: a full export)`
  if (previous.schemaVersion !== point.schemaVersion)
    return `it was taken at schema version ${previous.schemaVersion}, the database is at ${point.schemaVersion}`
  if (previous.finalizedBlock > point.block)
    return `its finalized block ${previous.finalizedBlock} is above the block being exported (${point.block})`
  if (previous.layouts.size !== plans.length) return "its set of tables differs from the database's"
  for (const plan of plans) {
    if (previous.layouts.get(plan.name) !== layoutOf(plan)) return `the layout of table ${quoteIdent(plan.name)} changed`
  }
  return undefined
}
