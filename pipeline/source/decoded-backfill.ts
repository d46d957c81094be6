/**
 * The backfill, decoded range by range: each completed range leaves as a DecodedBatch (its
 * events, the digest chained on from `digest`, its unknown logs), so the range's raw logs die
 * young instead of waiting for a whole coalesced batch. With `store`, each range also carries its
 * logs in the log store's form (`log-store/codec.ts`), for the commit to keep. The backfill thread and the in-thread
 * path both run this, so they agree byte for byte.
 */
import { Stream } from "effect"
import { type DecodedBatch, decodeBatch } from "../decode-batch.js"
import { type AddressBook, announcedTokens } from "../decode.js"
import { backfill, type BackfillOptions, type Watchlist } from "./backfill.js"
import type { ChainError } from "./errors.js"
import type { Rpc } from "./rpc.js"
import { encodeRange } from "../log-store/codec.js"

/** The watch list of `book`: its addresses, growing as MarketCreated events announce tokens. */
export const watchlistOf = (book: AddressBook, onWatch?: (address: string) => void): Watchlist => ({
  addresses: () => book.addresses,
  watching: (address) => book.kindsOf(address) !== undefined,
  announced: announcedTokens,
  watch: (address) => {
    book.watchToken(address)
    onWatch?.(address)
  }
})

export const decodedBackfill = (
  rpc: Rpc,
  book: AddressBook,
  watchlist: Watchlist,
  options: BackfillOptions,
  digest: string,
  timings: { decodeMs: number },
  store = false
): Stream.Stream<DecodedBatch, ChainError> =>
  backfill(rpc, watchlist, options).pipe(
    Stream.mapAccum(digest, (before, batch) => {
      const started = performance.now()
      const decoded = decodeBatch(book, batch, before)
      const kept: DecodedBatch = store ? { ...decoded, stored: [{ from: batch.from, to: batch.to, bytes: encodeRange(batch) }] } : decoded
      timings.decodeMs += performance.now() - started
      return [decoded.digest, kept] as const
    })
  )
