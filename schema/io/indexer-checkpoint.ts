/**
 * Where the indexer stands: the one reader of its `indexer_checkpoint` row, for the pipeline
 * (where to continue) and for everything that reports or follows the index (freshness headers,
 * the WebSocket stream, notifications, /metrics).
 *
 * The pipeline writes the row in the transaction of each batch, so `block` is always the last
 * block whose changes are committed and `digest` chains the changes up to it. `head` is the
 * newest chain head the pipeline has seen (null until its first poll). `commit` is the commit
 * position: a new number from one sequence with every transaction that moves the row (a commit
 * or a revert), so it names the derived state the tables hold (migration 0024).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"

/** A bigint column as Postgres sends it (text), as a number: block numbers fit easily. */
const BlockNumber = Schema.compose(Schema.NumberFromString, Schema.NonNegativeInt)

export const CheckpointRow = Schema.Struct({
  block: BlockNumber,
  hash: Schema.String,
  digest: Schema.String,
  head: Schema.NullOr(BlockNumber),
  commit: BlockNumber
})
export type Checkpoint = typeof CheckpointRow.Type

const decodeRow = Schema.decodeUnknown(CheckpointRow)

/**
 * The checkpoint of `chainId`, undefined before its first batch. A row that does not decode is
 * a defect: the migrations' checks make it impossible.
 */
export const readCheckpoint = (chainId: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql`
      select block_number::text as block, block_hash as hash, digest, head_block::text as head, commit_seq::text as commit
      from indexer_checkpoint where chain_id = ${chainId}`
    return rows[0] === undefined ? undefined : yield* Effect.orDie(decodeRow(rows[0]))
  })

/** Blocks the index is behind the newest head it has seen; null before it has seen one. */
export const lagOf = (checkpoint: Checkpoint | undefined): number | null =>
  checkpoint === undefined || checkpoint.head === null ? null : Math.max(0, checkpoint.head - checkpoint.block)

/** The schema of the first generation of the index, and of every database before migration 0026. */
export const FIRST_GENERATION = "public"

/**
 * The schema of the generation that serves (blue-green re-index, migration 0026's
 * `index_generation`): what API processes read. `public` when none is marked active.
 */
export const readActiveGeneration = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ schema: string }>`select schema_name as schema from index_generation where state = 'active'`.pipe(
    Effect.map((rows) => rows[0]?.schema ?? FIRST_GENERATION)
  )
)

/** A schema name as an SQL identifier (the generations' names are our own: `public`, `index_<n>`). */
export const schemaIdent = (schema: string) => `"${schema.replace(/"/g, '""')}"`

/**
 * The checkpoint of `chainId` in the active generation, read on any connection whatever its
 * search path: the pointer, then that schema's row. A switch between the two reads gives the
 * generation before and its checkpoint, which still holds (a retired generation stays until its
 * grace period ends), so the pair is always one generation's.
 */
export const readActiveCheckpoint = (chainId: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const generation = yield* readActiveGeneration
    const rows = yield* sql.unsafe(
      `select block_number::text as block, block_hash as hash, digest, head_block::text as head, commit_seq::text as commit
       from ${schemaIdent(generation)}.indexer_checkpoint where chain_id = $1`,
      [chainId]
    )
    const checkpoint = rows[0] === undefined ? undefined : yield* Effect.orDie(decodeRow(rows[0]))
    return { generation, checkpoint }
  })
