/**
 * The generation of the index an export reads (blue-green re-index, `src/db/generations.ts`), on
 * the snapshot's own connections (`snapshot.ts` runs the steps in order):
 *
 * 1. `holdGeneration`, on the lead connection before its transaction begins: the drop lock
 *    (`GENERATION_DROP_LOCK`) taken shared for the session, so it is held before the snapshot
 *    is taken and until the export's connections close. A drop of a retired generation, or the
 *    devnet's reset, takes it exclusive before touching a table: either it committed before the
 *    snapshot (which then sees the pointer and tables after it) or it waits for the export. It
 *    waits before holding any table lock, so none of the export's connections ever queues behind
 *    it (a wait on the export's own other connection that Postgres could not see as a deadlock).
 * 2. `activeGeneration` in the snapshot: the generation the pointer names then. Only a retired
 *    generation is dropped, so the active one stays whole to the export's end; a switch after
 *    the snapshot is not seen (the export stays on the generation it started with).
 * 3. `useGeneration`: the generation's search path, as its pools have (`generationSearchPath`).
 *
 * Schemas are named by the pointer (`public`, `index_<n>`) and quoted as identifiers.
 */
import type pg from "pg"
import { FIRST_GENERATION, schemaIdent } from "../../schema/io/indexer-checkpoint.js"
import { GENERATION_DROP_LOCK } from "../db/chain-data.js"
import { generationSearchPath } from "../db/generations.js"

/** Holds the drop lock shared for the connection's session (released when it closes). */
export const holdGeneration = async (client: pg.Client) => {
  await client.query(`select pg_advisory_lock_shared(${GENERATION_DROP_LOCK})`)
}

/** The schema the pointer names as active (public before migration 0026, or with none active). */
export const activeGeneration = async (client: pg.Client): Promise<string> => {
  const pointer = await client.query<{ t: string | null }>(`select to_regclass('public.index_generation')::text as t`)
  if (pointer.rows[0]?.t == null) return FIRST_GENERATION
  const rows = await client.query<{ schema: string }>(`select schema_name as schema from public.index_generation where state = 'active'`)
  return rows.rows[0]?.schema ?? FIRST_GENERATION
}

/** Statements of the connection read `schema`'s tables first, then public's (as its pools do). */
export const useGeneration = async (client: pg.Client, schema: string) => {
  await client.query(`set local search_path = ${generationSearchPath(schema).map(schemaIdent).join(", ")}`)
}
