/**
 * A re-index from the log store: the stored ranges from `from` on, decoded as the backfill decodes
 * fetched ones (`decodeBatch`, so the events and the digest chain are the same byte for byte), with
 * no call to the node.
 *
 * - `storedRows` reads the rows held contiguously from `from`: it stops before the first block no
 *   row holds, or before a row that ends past `to` (a row is replayed whole or not at all; its
 *   first part may be below `from`, when the checkpoint fell inside it, and is skipped).
 * - `decodeStoredRange` turns one row into a DecodedBatch. Tokens announced by MarketCreated are
 *   watched as the replay reaches them, before the range that announces them is decoded (the
 *   store holds their logs from the announcing block on, as fetched).
 *
 * The backfill thread decodes the rows the indexing thread reads (`backfill-thread.ts`,
 * `threadReplay`); `replayStored` is the same on one thread.
 */
import type { SqlClient, SqlError } from "@effect/sql"
import { Chunk, Effect, Option, Stream } from "effect"
import { type DecodedBatch, decodeBatch } from "../decode-batch.js"
import { type AddressBook, announcedTokens } from "../decode.js"
import { decodeRange } from "./codec.js"
import { readStored, type StoredRange } from "./store-sql.js"

/** Stored rows read per query: ranges hold up to about 5,000 logs each. */
const ROWS_PER_READ = 8

export interface StoredRowsOptions {
  readonly chainId: number
  readonly from: number
  readonly to: number
  /** Called once with the last block the rows reach (`from - 1` when none) when they end. */
  readonly ended: (block: number) => void
}

export const storedRows = (o: StoredRowsOptions): Stream.Stream<StoredRange, SqlError.SqlError, SqlClient.SqlClient> =>
  Stream.paginateChunkEffect(o.from, (cursor) =>
    Effect.gen(function* () {
      const rows = cursor > o.to ? [] : yield* readStored(o.chainId, cursor, ROWS_PER_READ)
      const out: Array<StoredRange> = []
      let stopped = rows.length < ROWS_PER_READ
      for (const row of rows) {
        if (row.from > cursor || row.to > o.to) {
          stopped = true
          break
        }
        out.push(row)
        cursor = row.to + 1
      }
      if (stopped) o.ended(cursor - 1)
      return [Chunk.unsafeFromArray(out), stopped ? Option.none() : Option.some(cursor)] as const
    })
  )

/**
 * Row `row` decoded from block `from` on (the blocks of it below are skipped), digests chained on
 * from `digest`; `onWatch` hears each token it starts watching.
 */
export const decodeStoredRange = (
  book: AddressBook,
  row: StoredRange,
  from: number,
  digest: string,
  onWatch?: (token: string) => void
): DecodedBatch => {
  const stored = decodeRange(row.bytes)
  const logs = row.from < from ? stored.logs.filter((l) => l.blockNumber >= from) : stored.logs
  for (const log of logs) {
    for (const token of announcedTokens(log)) {
      if (book.kindsOf(token) !== undefined) continue
      book.watchToken(token)
      onWatch?.(token)
    }
  }
  return decodeBatch(book, { from, to: stored.to, logs, blocks: stored.blocks }, digest)
}

export interface ReplayOptions extends StoredRowsOptions {
  readonly book: AddressBook
  /** The chained digest after block `from - 1`. */
  readonly digest: string
  readonly timings: { decodeMs: number }
}

/** The stored ranges from `from` on (`storedRows`), decoded on this thread. */
export const replayStored = (o: ReplayOptions): Stream.Stream<DecodedBatch, SqlError.SqlError, SqlClient.SqlClient> =>
  storedRows(o).pipe(
    Stream.mapAccum({ cursor: o.from, digest: o.digest }, (state, row) => {
      const started = performance.now()
      const decoded = decodeStoredRange(o.book, row, state.cursor, state.digest)
      o.timings.decodeMs += performance.now() - started
      return [{ cursor: decoded.to + 1, digest: decoded.digest }, decoded] as const
    })
  )
