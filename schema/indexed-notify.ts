/**
 * The indexer's commit announcement: the one contract between the single writer and everything
 * downstream of the chain (freshness headers, the backend cache, the WebSocket stream).
 *
 * The pipeline sends it with `pg_notify` inside the commit's transaction, so Postgres delivers it
 * exactly when the batch's rows become visible and never for a rolled-back batch. `reverted`
 * marks a notification that moves the head back to the common ancestor of a reorg.
 *
 * `markets` (optional; added in issue 30, a listener that does not know it ignores it) names the
 * markets, as decimal ids, whose rows the commit changed: a market not named has exactly the rows
 * it had before the commit. Absent means "not known: any market may have changed" (a revert, a
 * backfill batch written in place, a list too long for the payload, an older indexer), never
 * "none"; an empty list means no market changed.
 */
import { Either, Schema } from "effect"

export const INDEXED_CHANNEL = "predix_indexed"

export const IndexedNotification = Schema.Struct({
  chainId: Schema.Int,
  block: Schema.NonNegativeInt,
  hash: Schema.String,
  reverted: Schema.Boolean,
  markets: Schema.optional(Schema.Array(Schema.String)),
  /**
   * The schema of the generation that committed (blue-green re-index, `src/db/generations.ts`):
   * listeners follow the active generation only and read the pointer again on any other. Absent
   * from a sender that predates generations (then it is the one generation there is).
   */
  generation: Schema.optional(Schema.String)
})
export type IndexedNotification = typeof IndexedNotification.Type

/** The NOTIFY payload (JSON text) of a notification. */
export const IndexedPayload = Schema.parseJson(IndexedNotification)

export const encodeIndexedPayload = Schema.encodeSync(IndexedPayload)

/**
 * The most characters the `markets` list may take in a payload. Postgres refuses a payload of
 * 8,000 bytes or more; the rest of the payload is under 200 and room is left for later fields.
 */
export const MARKETS_MAX_CHARS = 6_000

/** `markets` of a commit that changed `changed`: undefined (any market) when the list would not fit. */
export const announcedMarkets = (changed: Iterable<bigint>): ReadonlyArray<string> | undefined => {
  const markets: Array<string> = []
  let chars = 2
  for (const id of changed) {
    const text = id.toString()
    chars += text.length + 3
    if (chars > MARKETS_MAX_CHARS) return undefined
    markets.push(text)
  }
  return markets
}

const decodePayload = Schema.decodeUnknownEither(IndexedPayload)

/** The notification a payload carries for `chainId`; undefined for another chain or a payload that is not one. */
export const decodeIndexedPayload = (chainId: number, payload: string): IndexedNotification | undefined => {
  const decoded = decodePayload(payload)
  return Either.isRight(decoded) && decoded.right.chainId === chainId ? decoded.right : undefined
}
