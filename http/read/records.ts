/**
 * Row parts several reads share: where a log sits on the chain (every append-only record carries
 * it) and the display metadata kept beside the index (markets and events). Addresses and hashes
 * are stored lowercase by the pipeline and read as they are.
 */
import type { TxHash } from "../../schema/primitives.js"
import { bool, int, json, nullable, text, type RowOf } from "../core/rows.js"

/** Where a log sits on the chain. */
export interface ChainPositionRecord {
  readonly txHash: TxHash
  readonly blockNumber: number
  readonly logIndex: number
  readonly timestamp: number
}

/** Database columns of a chain position, for a `rowDecoder`. */
export const chainPositionColumns = { tx_hash: text<TxHash>(), block_number: int, log_index: int, timestamp: int }
export type ChainPositionRow = RowOf<typeof chainPositionColumns>

export const chainPosition = (row: ChainPositionRow): ChainPositionRecord => ({
  txHash: row.tx_hash,
  blockNumber: row.block_number,
  logIndex: row.log_index,
  timestamp: row.timestamp
})

/** Display metadata (not on-chain) of a market or event; `title` per locale, en always present. */
export interface DisplayMetadataRecord {
  readonly slug: string
  readonly category: string
  readonly featured: boolean
  readonly title: { readonly [locale: string]: string }
  readonly icon: string | null
}

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

export const displayMetadata = (row: DisplayMetadataRow): DisplayMetadataRecord | null =>
  row.d_slug === null || row.d_category === null || row.d_title === null
    ? null
    : { slug: row.d_slug, category: row.d_category, featured: row.d_featured === true, title: row.d_title, icon: row.d_icon }
