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
