/**
 * The read behind `GET /api/health` and the freshness headers' judgement (`health-watch.ts`):
 * where the index stands and how long ago the indexer last showed signs of life, as the database
 * holds them (the indexer may run in another process, or another machine).
 *
 * Ages are measured by the database's clock against its own timestamps, so no two clocks are
 * compared.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export interface Progress {
  /** Last block whose changes are committed; null before the first batch. */
  readonly block: number | null
  /** Newest chain head the indexer recorded; null until its first poll. */
  readonly recordedHead: number | null
  /** Seconds since the checkpoint last moved (the last indexed block's commit). */
  readonly indexedAgeSeconds: number | null
  /** Seconds since the indexer last published its metrics: after every poll of the tip, every few seconds of a backfill. */
  readonly indexerAgeSeconds: number | null
}

const toNumber = (value: string | null | undefined): number | null => (value === null || value === undefined ? null : Number(value))

/** One round trip; fails only when the database does not answer. */
export const readProgress = (chainId: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ block: string | null; head: string | null; indexedAge: string | null; indexerAge: string | null }>`
      select c.block_number::text as block, c.head_block::text as head,
        extract(epoch from now() - c.updated_at)::text as "indexedAge",
        (select extract(epoch from now() - m.updated_at)::text from indexer_metrics m where m.chain_id = ${chainId}) as "indexerAge"
      from (select 1) as one left join indexer_checkpoint c on c.chain_id = ${chainId}`
    const row = rows[0]
    return {
      block: toNumber(row?.block),
      recordedHead: toNumber(row?.head),
      indexedAgeSeconds: toNumber(row?.indexedAge),
      indexerAgeSeconds: toNumber(row?.indexerAge)
    } satisfies Progress
  })
