/**
 * Which tables a snapshot may hold: an allow-list, never "every table of the schema".
 *
 * - The derived tables of the generation that serves (`GENERATION_TABLES` of
 *   `src/db/chain-data.ts`, read in that generation's schema) less the pipeline's bookkeeping:
 *   the checkpoint, the unfinalized window and its undo images, the metrics and the backfill's
 *   list of dropped indexes. The manifest says what a reader needs of the bookkeeping.
 * - Of the tables shared in public, only `display_metadata` (titles, slugs, categories, icons:
 *   what the public API serves beside the chain's rows).
 *
 * Invariant: nothing else of public is exported. The backend's own tables hold per-user state and
 * secrets (sign-in nonces and sessions, WebSocket tickets, passkey challenges and credentials:
 * `SECRET_TABLES`); a table a later migration adds stays out of every snapshot until it is put
 * on a list here (test/analytics/generations.test.ts lists what is exported and fails on a secret).
 */
import { GENERATION_TABLES } from "../db/chain-data.js"

/** The pipeline's bookkeeping of a generation: not exported as tables. */
export const INTERNAL_TABLES: ReadonlySet<string> = new Set([
  "indexer_checkpoint",
  "indexed_block",
  "undo_log",
  "indexer_metrics",
  "deferred_index"
])

/** Tables exported from the active generation's schema. */
export const EXPORTED_DERIVED: ReadonlySet<string> = new Set(GENERATION_TABLES.filter((t) => !INTERNAL_TABLES.has(t)))

/** Tables exported from public (shared by every generation). */
export const EXPORTED_SHARED: ReadonlySet<string> = new Set(["display_metadata"])

/**
 * Tables that carry a credential or a secret of a sign-in (migrations 0012, 0015, 0023): never
 * exported, whatever the lists above say (`isExported` checks this list last).
 */
export const SECRET_TABLES: ReadonlySet<string> = new Set([
  "auth_nonce",
  "auth_session",
  "ws_ticket",
  "passkey_challenge",
  "passkey_credential"
])

/** Whether table `name` of schema `schema` goes into a snapshot of generation `generation`. */
export const isExported = (generation: string, schema: string, name: string) =>
  !SECRET_TABLES.has(name) && ((schema === generation && EXPORTED_DERIVED.has(name)) || (schema === "public" && EXPORTED_SHARED.has(name)))
