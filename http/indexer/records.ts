/**
 * Wire building blocks shared by the indexer's records. Wire rules (spec, "Wire primitives"):
 * token amounts are decimal strings with six fraction digits (`Amount6`, a bigint in code), prices
 * decimal strings (`Price`), uint256 values that are not token amounts decimal strings of digits
 * (`Uint256`), timestamps unix seconds and block numbers JSON integers, addresses and hashes
 * lowercase. No uint256 is ever a JSON number.
 */
import { Schema } from "effect"
import { BlockNumber, Timestamp, TxHash } from "../../schema/primitives.js"
import { bool, int, json, nullable, text, type RowOf } from "../core/rows.js"

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

/** Database columns of `chainPositionFields`, for a `rowDecoder`. */
export const chainPositionColumns = { tx_hash: text<TxHash>(), block_number: int, log_index: int, timestamp: int }
export type ChainPositionRow = RowOf<typeof chainPositionColumns>

export const chainPosition = (row: ChainPositionRow) => ({
  txHash: row.tx_hash,
  blockNumber: row.block_number,
  logIndex: row.log_index,
  timestamp: row.timestamp
})

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

/** Columns of `display_metadata` as selected with the `d_` prefix by the queries that join it, for a `rowDecoder`. */
export const displayMetadataColumns = {
  d_slug: nullable(text()),
  d_category: nullable(text()),
  d_featured: nullable(bool),
  d_title: nullable(json<Record<string, string>>()),
  d_icon: nullable(text())
}
export type DisplayMetadataRow = RowOf<typeof displayMetadataColumns>

export const DISPLAY_COLUMNS = "d.slug as d_slug, d.category as d_category, d.featured as d_featured, d.title as d_title, d.icon as d_icon"

export const displayMetadata = (row: DisplayMetadataRow): DisplayMetadata | null =>
  row.d_slug === null || row.d_category === null || row.d_title === null
    ? null
    : { slug: row.d_slug, category: row.d_category, featured: row.d_featured === true, title: row.d_title, icon: row.d_icon }
