/**
 * A re-index from the log store: the stored ranges from `from` on, decoded as the backfill decodes
 * fetched ones (`decodeBatch`, so the events and the digest chain are the same byte for byte), with
 * no call to the node. It stops before the first block the store does not hold contiguously from
 * `from`, or before a row that ends past `to` (a row is replayed whole or not at all; its first
 * part may be below `from`, when the checkpoint fell inside it, and is skipped).
 *
 * Tokens announced by MarketCreated are watched as the replay reaches them, before the range that
 * announces them is decoded (the store holds their logs from the announcing block on, as fetched).
 */
import type { SqlClient, SqlError } from "@effect/sql"
import { Chunk, Effect, Option, Stream } from "effect"
import { type DecodedBatch, decodeBatch } from "../decode-batch.js"
import { type AddressBook, announcedTokens } from "../decode.js"
import { decodeRange } from "./codec.js"
import { readStored } from "./store-sql.js"

/** Stored rows read per query: ranges hold up to about 5,000 logs each. */
const ROWS_PER_READ = 8

export interface ReplayOptions {
  readonly chainId: number
  readonly book: AddressBook
  readonly from: number
  readonly to: number
  /** The chained digest after block `from - 1`. */
  readonly digest: string
  readonly timings: { decodeMs: number }
  /** Called once with the last block replayed (`from - 1` when none) when the replay ends. */
  readonly ended: (block: number) => void
}

export const replayStored = (o: ReplayOptions): Stream.Stream<DecodedBatch, SqlError.SqlError, SqlClient.SqlClient> =>
  Stream.paginateChunkEffect({ cursor: o.from, digest: o.digest }, (state) =>
    Effect.gen(function* () {
      const rows = state.cursor > o.to ? [] : yield* readStored(o.chainId, state.cursor, ROWS_PER_READ)
      const out: Array<DecodedBatch> = []
      let { cursor, digest } = state
      let stopped = rows.length < ROWS_PER_READ
      for (const row of rows) {
        if (row.from > cursor || row.to > o.to) {
          stopped = true
          break
        }
        const started = performance.now()
        const stored = decodeRange(row.bytes)
        const logs = row.from < cursor ? stored.logs.filter((l) => l.blockNumber >= cursor) : stored.logs
        for (const log of logs) for (const token of announcedTokens(log)) if (o.book.kindsOf(token) === undefined) o.book.watchToken(token)
        const decoded = decodeBatch(o.book, { from: cursor, to: stored.to, logs, blocks: stored.blocks }, digest)
        o.timings.decodeMs += performance.now() - started
        out.push(decoded)
        cursor = stored.to + 1
        digest = decoded.digest
      }
      if (stopped) o.ended(cursor - 1)
      return [Chunk.unsafeFromArray(out), stopped ? Option.none() : Option.some({ cursor, digest })] as const
    })
  )
