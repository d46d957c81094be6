/**
 * The generation of the index an export reads (blue-green re-index, `src/db/generations.ts`), on
 * the snapshot's own connections (`snapshot.ts` runs the steps in order):
 *
 * 1. `peekGeneration`, outside any transaction: the schema the pointer names as active now, and
 *    which of its tables exist;
 * 2. `lockGeneration` on every connection, as the first statement of its REPEATABLE READ
 *    transaction: ACCESS SHARE (what any reader takes, no writer waits for it) on those tables
 *    and on the shared ones the export reads. LOCK takes no snapshot, so the locks are held
 *    before the snapshot is: a drop or TRUNCATE of the generation either committed before (and
 *    step 3 sees the pointer moved) or waits until the export ends. Every connection holds them
 *    before any reads, so no connection ever queues for a lock behind a waiting drop that waits
 *    for another of the export's own connections (a wait Postgres cannot see as a deadlock);
 * 3. `activeGeneration` in the snapshot: when it is not the peeked one (a switch between steps 1
 *    and 2), the attempt is abandoned and begun again;
 * 4. `useGeneration`: the generation's search path, as its pools have (`generationSearchPath`).
 *
 * Schemas and tables are named by the pointer and the catalog (`public`, `index_<n>`, our own
 * table names) and quoted as identifiers.
 */
import type pg from "pg"
import { FIRST_GENERATION, schemaIdent } from "../../schema/io/indexer-checkpoint.js"
import { GENERATION_TABLES } from "../db/chain-data.js"
import { generationSearchPath } from "../db/generations.js"
import { EXPORTED_SHARED } from "./exported-tables.js"

/** The tables a snapshot of a generation locks: the generation's own and the shared ones it reads. */
export interface PeekedGeneration {
  readonly schema: string
  /** Qualified, quoted names of the existing tables to lock. */
  readonly tables: ReadonlyArray<string>
}

/** How long a connection waits for its locks before the attempt is begun again (`isRetryable`). */
const LOCK_TIMEOUT = "5s"

/** The schema the pointer names as active (public before migration 0026, or with none active). */
export const activeGeneration = async (client: pg.Client): Promise<string> => {
  const pointer = await client.query<{ t: string | null }>(`select to_regclass('public.index_generation')::text as t`)
  if (pointer.rows[0]?.t == null) return FIRST_GENERATION
  const rows = await client.query<{ schema: string }>(`select schema_name as schema from public.index_generation where state = 'active'`)
  return rows.rows[0]?.schema ?? FIRST_GENERATION
}

export const peekGeneration = async (client: pg.Client): Promise<PeekedGeneration> => {
  const schema = await activeGeneration(client)
  const shared = [...EXPORTED_SHARED, "schema_migrations", "index_generation"]
  const rows = await client.query<{ schema: string; name: string }>(
    `select n.nspname as schema, c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where c.relkind in ('r', 'p') and ((n.nspname = $1 and c.relname = any($2)) or (n.nspname = 'public' and c.relname = any($3)))
      order by 1, 2`,
    [schema, GENERATION_TABLES, shared]
  )
  return { schema, tables: rows.rows.map((r) => `${schemaIdent(r.schema)}.${schemaIdent(r.name)}`) }
}

/** Begins the connection's snapshot transaction with the locks of `peeked` (no snapshot taken yet). */
export const lockGeneration = async (client: pg.Client, peeked: PeekedGeneration) => {
  await client.query("begin isolation level repeatable read read only")
  await client.query(`set local lock_timeout = '${LOCK_TIMEOUT}'`)
  if (peeked.tables.length > 0) await client.query(`lock table ${peeked.tables.join(", ")} in access share mode`)
  await client.query(`set local lock_timeout = default`)
}

/** Statements of the connection read `schema`'s tables first, then public's (as its pools do). */
export const useGeneration = async (client: pg.Client, schema: string) => {
  await client.query(`set local search_path = ${generationSearchPath(schema).map(schemaIdent).join(", ")}`)
}

/**
 * Failures of an attempt that a new attempt may not meet: a table or schema of the peeked
 * generation dropped before it was locked (42P01, 3F000), a lock not granted in time (55P03) or a
 * deadlock with a drop (40P01).
 */
export const isRetryable = (error: unknown) => {
  const code = (error as { code?: unknown } | undefined)?.code
  return code === "42P01" || code === "3F000" || code === "55P03" || code === "40P01"
}
