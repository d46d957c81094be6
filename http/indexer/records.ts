/**
 * Wire building blocks shared by the indexer's records. Wire rules (spec, "Wire primitives"):
 * token amounts are decimal strings with six fraction digits (`Amount6`, a bigint in code), prices
 * decimal strings (`Price`), uint256 values that are not token amounts decimal strings of digits
 * (`Uint256`), timestamps unix seconds and block numbers JSON integers, addresses and hashes
 * lowercase. No uint256 is ever a JSON number.
 */
import { Schema } from "effect"
import { BlockNumber, Timestamp, TxHash } from "../../schema/primitives.js"

/** A count of rows or events, a JSON integer. */
export const Count = Schema.Int.pipe(Schema.nonNegative()).annotations({
  identifier: "Count",
  title: "Count",
  description: "number of rows or events (non-negative integer)"
})

/** Where a log sits on the chain: every append-only record (trades, matches, admin history) carries it. */
export const chainPositionFields = {
  txHash: TxHash,
  blockNumber: BlockNumber,
  logIndex: Schema.Int.pipe(Schema.nonNegative()).annotations({ description: "index of the log in its block" }),
  timestamp: Timestamp
}

/** Display metadata (not on-chain) of a market or event, from `display_metadata`. */
export const DisplayMetadata = Schema.Struct({
  slug: Schema.String.annotations({ description: "URL slug, unique among markets (or among events)" }),
  category: Schema.String.annotations({ description: "category, the value the `category` filter matches" }),
  featured: Schema.Boolean.annotations({ description: "curated as featured; the value the `featured` filter matches" }),
  title: Schema.Record({ key: Schema.String, value: Schema.String }).annotations({
    description: "title per locale (en, vi, ja, ko, ...); en is always present and is the fallback"
  }),
  icon: Schema.NullOr(Schema.String).annotations({ description: "icon path or URL" })
}).annotations({
  identifier: "DisplayMetadata",
  title: "Display metadata",
  description: "display metadata kept beside the index (not on-chain); null when none was written"
})
export type DisplayMetadata = typeof DisplayMetadata.Type
