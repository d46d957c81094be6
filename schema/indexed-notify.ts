/**
 * The indexer's commit announcement: the one contract between the single writer and everything
 * downstream of the chain (freshness headers, the backend cache, the WebSocket stream).
 *
 * The pipeline sends it with `pg_notify` inside the commit's transaction, so Postgres delivers it
 * exactly when the batch's rows become visible and never for a rolled-back batch. `reverted`
 * marks a notification that moves the head back to the common ancestor of a reorg.
 */
import { Either, Schema } from "effect"

export const INDEXED_CHANNEL = "predix_indexed"

export const IndexedNotification = Schema.Struct({
  chainId: Schema.Int,
  block: Schema.NonNegativeInt,
  hash: Schema.String,
  reverted: Schema.Boolean,
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

const decodePayload = Schema.decodeUnknownEither(IndexedPayload)

/** The notification a payload carries for `chainId`; undefined for another chain or a payload that is not one. */
export const decodeIndexedPayload = (chainId: number, payload: string): IndexedNotification | undefined => {
  const decoded = decodePayload(payload)
  return Either.isRight(decoded) && decoded.right.chainId === chainId ? decoded.right : undefined
}
