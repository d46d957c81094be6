/**
 * Which tables hold data derived from the chain, and which hold the backend's own data, decided
 * table by table from `migrations/`. When the live devnet's chain is not the one the database
 * indexed (its state was lost or rewound: `src/live-chain.ts`), only the derived data is dropped
 * and indexed again; the backend's own data stays.
 *
 * Invariants:
 * - every table of the migrated schema is in exactly one of the two lists (test/db/chain-data.test.ts
 *   fails on a table added by a migration and not classified here);
 * - the reset is one transaction: a crash leaves either the old index or none, never half;
 * - no backend row is deleted by the reset. Rows that only record something the chain once did
 *   are marked unverified instead of dropped: a faucet claim whose transfer was confirmed goes
 *   back to 'signed', so the faucet checks it against the new chain at start (`recover`: kept if
 *   the transfer is there, re-sent with its recorded bytes or released if not; never paid twice).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { SINK_TABLES } from "../../pipeline/tables.js"

/**
 * Derived from the chain (emptied by a reset, then indexed again from the deployment block): every
 * table the pipeline's sink writes, and the indexer's own bookkeeping of what it has indexed.
 */
export const DERIVED_TABLES: ReadonlyArray<string> = [
  ...SINK_TABLES,
  // the checkpoint, the unfinalized window and the undo images of the blocks in it
  "indexer_checkpoint",
  "indexed_block",
  "undo_log",
  // which deployment (and from where) the index holds: written again by the next indexer
  "indexed_deployment",
  // the indexer's published metrics (block, head, lag of the old index)
  "indexer_metrics",
  // the notification consumer's position in the old index (notifications: see `resetChainData`)
  "notification_cursor",
  // the log store (migration 0025): what a re-index after a migration replays, so migrations
  // never empty it; a reset does, since the chain it recorded is no longer the devnet's
  "log_store"
]

/**
 * The backend's own data, and bookkeeping that is not chain data: never touched by a reset.
 * `notification` holds both kinds (the chain's rows carry a block_number) and `faucet_claim`
 * is reconciled rather than dropped: see `resetChainData`.
 */
export const KEPT_TABLES: ReadonlyArray<string> = [
  // the migrator's own record
  "schema_migrations",
  // users, roles, settings, sign-in challenges and sessions (0012)
  "app_user",
  "user_settings",
  "auth_nonce",
  "auth_session",
  // faucet claims (reconciled with the chain) and the signer's next nonce (the faucet fills any
  // gap below it on the new chain before it signs again: `http/backend/faucet/service.ts` recover) (0014)
  "faucet_claim",
  "signer_nonce",
  // passkeys, their challenges, sponsorship budgets (0015)
  "passkey_challenge",
  "passkey_credential",
  "sponsorship_budget",
  // comments and their quota; notifications (the chain-derived rows are deleted) (0016)
  "market_comment",
  "comment_quota",
  "notification",
  // who has read which broadcast notification (0022): its rows go with their broadcast (on delete
  // cascade) when the reset deletes the chain's notifications
  "notification_read",
  // WebSocket tickets of sessions (0023)
  "ws_ticket",
  // referral codes and sign-in referrals (0017; the on-chain `referral` table is derived)
  "referral_code",
  "referral_link",
  // display metadata: seeded from the fixture or written by operators, not read from the chain (0008)
  "display_metadata",
  // secondary indexes dropped for a backfill and not yet built again: a schema fact the next
  // indexer must act on, whatever the rows (pipeline/deferred-indexes.ts)
  "deferred_index",
  // which schema's derived tables serve, which is being built, which wait to be dropped (0026):
  // the blue-green re-index's pointer (src/db/generations.ts)
  "index_generation"
]

/**
 * The tables every generation of the index has a copy of (blue-green re-index,
 * `src/db/generations.ts`): the derived tables, less those that stay shared in public: the log
 * store (what every generation is built from) and the notification consumer's cursor (it walks
 * the kept `notification` rows, which every generation derives alike). `deferred_index` is the
 * backfill's list of its own schema's dropped indexes, so each generation keeps its own.
 */
export const GENERATION_TABLES: ReadonlyArray<string> = [
  ...DERIVED_TABLES.filter((t) => t !== "log_store" && t !== "notification_cursor"),
  "deferred_index"
]

/**
 * The advisory lock (its key) between readers that need a generation's tables to stay whole for
 * a whole transaction, and what empties or drops them (`dropRetired`, `resetChainData`). A reader
 * (`predix export`) holds it shared from before its snapshot to its end; the droppers take it
 * exclusive as the first statement of their transaction, so they wait for such readers before
 * they touch a table. Why a lock rather than MVCC: TRUNCATE is not MVCC-safe (a snapshot taken
 * before it sees the tables empty) and a dropped schema's tables are gone for every snapshot.
 */
export const GENERATION_DROP_LOCK = 31_002

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`

/**
 * Drops what the database derived from the chain, keeps the backend's own data, in one transaction:
 * the derived tables are emptied (and the generations of a blue-green re-index dropped, public
 * active again); the notifications derived from chain events (those carrying a
 * block) are deleted with the consumer's cursor, so the consumer derives them again from the new
 * index; confirmed faucet claims go back to 'signed' for the faucet to verify on the new chain.
 * Returns how many claims were marked.
 *
 * With several generations the reset leaves ONE clean state, the one a freshly migrated database
 * has: public, emptied, the only generation and the active one. Every generation was derived
 * from the chain that is gone, so none has rows worth keeping; public is the templates' home
 * (migrations alter only its tables), so the index built again has the current shape; and the
 * next indexer, the APIs and the export all start from the pointer, which names public. It is
 * one transaction with the pointer locked (no build requested or switched meanwhile): a crash
 * leaves the old state or the clean one, never a pointer naming a dropped schema. Every statement
 * names its schema: the caller's connection may have another generation's search path.
 */
export const resetChainData = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.withTransaction(
    Effect.gen(function* () {
      // Exports in progress end first (their snapshot would see truncated tables as empty).
      yield* sql`select pg_advisory_xact_lock(${GENERATION_DROP_LOCK})`
      yield* sql`lock table public.index_generation in exclusive mode`
      const generations = yield* sql<{
        schema: string
      }>`select schema_name as schema from public.index_generation where schema_name <> 'public'`
      for (const g of generations) yield* sql.unsafe(`DROP SCHEMA IF EXISTS ${ident(g.schema)} CASCADE`)
      yield* sql`DELETE FROM public.index_generation WHERE schema_name <> 'public'`
      // Public keeps the shape it was recorded with (its tables are not altered here); a handover
      // asked of a generation that no longer exists is forgotten.
      yield* sql`INSERT INTO public.index_generation (n, schema_name, state, activated_at, shape)
        VALUES (1, 'public', 'active', now(), public.index_shape('public'))
        ON CONFLICT (schema_name) DO UPDATE SET state = 'active', activated_at = now(), drop_after = NULL,
          handover_requested_at = NULL, shape = coalesce(index_generation.shape, excluded.shape)`
      yield* sql.unsafe(`TRUNCATE ${DERIVED_TABLES.map((t) => `public.${ident(t)}`).join(", ")}`)
      yield* sql`DELETE FROM public.notification WHERE block_number IS NOT NULL`
      const marked =
        yield* sql`UPDATE public.faucet_claim SET status = 'signed', confirmed_at = NULL WHERE status = 'confirmed' RETURNING address`
      return { unverifiedClaims: marked.length }
    })
  )
)
