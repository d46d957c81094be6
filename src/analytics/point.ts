/**
 * The block a snapshot stands at, read inside the snapshot transaction.
 *
 * Where finality comes from (pipeline/run.ts): `indexed_block` holds the unfinalized window, the
 * blocks above the finalized head that were indexed with undo images. So the finalized block is
 * the parent of the window's lowest block (its hash and digest are that row's parent_hash and
 * parent_digest); with an empty window it is the checkpoint itself. The tip is the checkpoint.
 *
 * All of it is read in the snapshot's generation (`db.generation`: its checkpoint, window and
 * deployment), named with its schema; the migrations' record is public's.
 *
 * Invariant: `block` is the finalized block unless the export asked for the tip, and every row a
 * snapshot holds was committed at or below `block` (append-only rows by their block_number,
 * mutable rows through the undo log).
 */
import { quoteIdent } from "./columns.js"
import { SnapshotSourceError } from "./errors.js"
import type { SnapshotConnection } from "./snapshot.js"

export interface SnapshotPoint {
  /** The generation of the index the snapshot reads (`public`, `index_<n>`). */
  readonly generation: string
  readonly chainId: number
  /** The block the snapshot stands at (finalized, or the tip with `includeUnfinalized`). */
  readonly block: number
  readonly hash: string
  readonly digest: string
  readonly finalizedBlock: number
  readonly finalizedHash: string
  /** The pipeline's checkpoint (its tip) when the snapshot was taken. */
  readonly indexedBlock: number
  readonly includesUnfinalized: boolean
  /** Highest migration applied to the source database. */
  readonly schemaVersion: number
  /** The indexed deployment's diamond (lowercase), when the database records it. */
  readonly diamond: string | null
}

const safeInt = (text: string | null | undefined, what: string): number => {
  const n = Number(text)
  if (text === null || text === undefined || !Number.isSafeInteger(n))
    throw new SnapshotSourceError({ message: `unexpected ${what}: ${String(text)}` })
  return n
}

export const readPoint = async (db: SnapshotConnection, includeUnfinalized: boolean): Promise<SnapshotPoint> => {
  const g = quoteIdent(db.generation)
  const tables = await db.query<{ name: string }>(
    `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where (n.nspname = '${db.generation.replace(/'/g, "''")}' and c.relname in ('indexer_checkpoint', 'indexed_block', 'indexed_deployment'))
         or (n.nspname = 'public' and c.relname = 'schema_migrations')`
  )
  const has = new Set(tables.map((t) => t.name))
  if (!has.has("indexer_checkpoint") || !has.has("schema_migrations")) {
    throw new SnapshotSourceError({
      message: "the database has no index yet (no migrations applied): run `npm start` or `npm run migrate` first"
    })
  }
  const checkpoints = await db.query<{ chain_id: string; block_number: string; block_hash: string; digest: string }>(
    `select chain_id, block_number, block_hash, digest from ${g}.indexer_checkpoint order by chain_id`
  )
  const checkpoint = checkpoints[0]
  if (checkpoint === undefined)
    throw new SnapshotSourceError({ message: "the database has indexed nothing yet (no checkpoint): nothing to export" })
  if (checkpoints.length > 1) {
    throw new SnapshotSourceError({
      message: `the database holds checkpoints of ${checkpoints.length} chains; one database indexes one deployment`
    })
  }
  const chainId = safeInt(checkpoint.chain_id, "chain id")
  const window = has.has("indexed_block")
    ? await db.query<{ number: string; parent_hash: string; parent_digest: string }>(
        `select number, parent_hash, parent_digest from ${g}.indexed_block where chain_id = ${chainId} order by number limit 1`
      )
    : []
  const lowest = window[0]
  const indexedBlock = safeInt(checkpoint.block_number, "checkpoint block")
  const finalized =
    lowest === undefined
      ? { block: indexedBlock, hash: checkpoint.block_hash, digest: checkpoint.digest }
      : { block: safeInt(lowest.number, "window block") - 1, hash: lowest.parent_hash, digest: lowest.parent_digest }
  const version = await db.query<{ version: string | null }>(`select max(migration_id) as version from public.schema_migrations`)
  const deployment = has.has("indexed_deployment")
    ? await db.query<{ diamond: string }>(`select diamond from ${g}.indexed_deployment where chain_id = ${chainId}`)
    : []
  const at = includeUnfinalized ? { block: indexedBlock, hash: checkpoint.block_hash, digest: checkpoint.digest } : finalized
  return {
    generation: db.generation,
    chainId,
    block: at.block,
    hash: at.hash,
    digest: at.digest,
    finalizedBlock: finalized.block,
    finalizedHash: finalized.hash,
    indexedBlock,
    includesUnfinalized: includeUnfinalized,
    schemaVersion: version[0]?.version === null || version[0] === undefined ? 0 : safeInt(version[0].version, "schema version"),
    diamond: deployment[0]?.diamond ?? null
  }
}

/** Tables of the snapshot's generation with undo images above `block` (whose current rows are not all final). */
export const tablesChangedAbove = async (db: SnapshotConnection, block: number): Promise<ReadonlySet<string>> => {
  const rows = await db.query<{ table_name: string }>(
    `select distinct table_name from ${quoteIdent(db.generation)}.undo_log where block_number > ${block}`
  )
  return new Set(rows.map((r) => r.table_name))
}
