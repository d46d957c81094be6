/**
 * The log store's table (`log_store`, migration 0025): the raw logs and block stamps the indexer
 * fetched for the watched contracts, one row per fetched range in `codec.ts`'s binary form.
 *
 * Invariants:
 * - rows are written in the commit that writes the rows derived from them (`also` of
 *   `sink.commit`), so the store is exactly as durable as the index: it holds what the index
 *   was built from, never less;
 * - a reorg's revert deletes the rows above the common ancestor in its transaction (tip rows are
 *   one block each, so no row straddles an unfinalized ancestor);
 * - the store is not derived data a migration re-indexes: it is what a re-index reads
 *   (`replay.ts`). It is emptied only with a chain reset (the chain it recorded is gone).
 *   Rows above the checkpoint (left by an index that was emptied) are replayed by the next
 *   backfill up to its target and deleted past it; it fetches only the blocks no row holds (the
 *   store starts where the index stood when migration 0025 came, and may have holes), so a
 *   fetched range never meets an older row.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { copyInBinary } from "../copy-in.js"

/** One fetched range as stored. */
export interface StoredRange {
  readonly from: number
  readonly to: number
  readonly bytes: Uint8Array
}

const COPY_SIGNATURE = Buffer.from("PGCOPY\n\xff\r\n\0", "latin1")

/**
 * `ranges` as a binary COPY payload of (chain_id int4, from_block int8, to_block int8, logs bytea):
 * the bytes go as they are (COPY's text form would send bytea as hex, twice the size).
 */
const copyPayload = (chainId: number, ranges: ReadonlyArray<StoredRange>) => {
  let size = COPY_SIGNATURE.length + 8 + 2
  for (const r of ranges) size += 2 + 8 + 12 + 12 + 4 + r.bytes.byteLength
  const out = Buffer.allocUnsafe(size)
  let at = COPY_SIGNATURE.copy(out, 0)
  out.writeUInt32BE(0, at) // flags
  out.writeUInt32BE(0, at + 4) // header extension length
  at += 8
  for (const r of ranges) {
    out.writeInt16BE(4, at)
    out.writeInt32BE(4, at + 2)
    out.writeInt32BE(chainId, at + 6)
    out.writeInt32BE(8, at + 10)
    out.writeBigInt64BE(BigInt(r.from), at + 14)
    out.writeInt32BE(8, at + 22)
    out.writeBigInt64BE(BigInt(r.to), at + 26)
    out.writeInt32BE(r.bytes.byteLength, at + 34)
    at += 38
    at += Buffer.from(r.bytes.buffer, r.bytes.byteOffset, r.bytes.byteLength).copy(out, at)
  }
  out.writeInt16BE(-1, at)
  return out
}

/** Writes `ranges` (one COPY), in the transaction in progress. */
export const storeRanges = (chainId: number, ranges: ReadonlyArray<StoredRange>) =>
  ranges.length === 0
    ? Effect.void
    : copyInBinary("log_store", ["chain_id", "from_block", "to_block", "logs"], copyPayload(chainId, ranges))

/** Deletes the rows of blocks above `block`: a reorg's orphans, or rows a backfill will fetch again. */
export const deleteStoredAbove = (chainId: number, block: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`delete from log_store where chain_id = $1 and to_block > $2`, [chainId, block]))

// Orders name `log_store.to_block`: a bare `to_block` would be the output column `to_block::text`
// where one is selected, and sort as text ("10" before "2").

/** The first block of the first row that ends past `block` (undefined when none does). */
export const nextStoredFrom = (chainId: number, block: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe<{ from_block: string }>(
      `select from_block::text from log_store where chain_id = $1 and to_block > $2 order by log_store.to_block limit 1`,
      [chainId, block]
    )
  ).pipe(Effect.map((rows) => (rows[0] === undefined ? undefined : Number(rows[0].from_block))))

interface StoredRow {
  readonly from_block: string
  readonly to_block: string
  readonly logs: Uint8Array
}

/** Up to `limit` rows that end at or after `from`, in block order. */
export const readStored = (chainId: number, from: number, limit: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe<StoredRow>(
      `select from_block::text, to_block::text, logs from log_store where chain_id = $1 and to_block >= $2 order by log_store.to_block limit $3`,
      [chainId, from, limit]
    )
  ).pipe(Effect.map((rows) => rows.map((r): StoredRange => ({ from: Number(r.from_block), to: Number(r.to_block), bytes: r.logs }))))
