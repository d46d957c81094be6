/**
 * The indexer's own bookkeeping in Postgres, beside the rows the sink writes: the window of
 * unfinalized blocks (`indexed_block`), the newest head seen, the commit announcement, and the
 * metrics this process publishes for /metrics (`indexer_metrics`). The checkpoint itself is written by the sink with each batch and read
 * through `schema/io/indexer-checkpoint.ts`.
 *
 * Invariant: `indexed_block` holds exactly the window's blocks above the finalized one, each with
 * the digest after it and before it; it changes only inside the transaction that commits, reverts
 * or finalizes those blocks, so a restart reads back the window the last commit left.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { announcedMarkets, encodeIndexedPayload, INDEXED_CHANNEL } from "../schema/indexed-notify.js"
import type { Header } from "./reorg.js"

/** An indexed_block row: a held block's header with the digests around it. */
export interface HeldRow {
  readonly number: number
  readonly hash: string
  readonly parentHash: string
  readonly timestamp: number
  readonly digest: string
  readonly parentDigest: string
}

/**
 * Tells listeners (freshness headers, caches, the stream) where the index of `chainId` now
 * stands. Sent inside the transaction that commits (or reverts) the rows, so Postgres delivers
 * it exactly when the changes become visible, never for a rolled-back batch. `reverted` marks
 * the ancestor a reorg went back to. `changed`: the markets whose rows the commit changed
 * (`pipeline/changed-markets.ts`), announced when they fit; undefined when not known (any may have).
 * The payload also names the generation that commits: the schema its connection writes to
 * (`current_schema()`, the first of its search path: blue-green re-index).
 */
export const notifyIndexed = (chainId: number, block: number, hash: string, reverted: boolean, changed?: ReadonlySet<bigint>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const markets = changed === undefined ? undefined : announcedMarkets(changed)
    const payload = encodeIndexedPayload({ chainId, block, hash, reverted, ...(markets === undefined ? {} : { markets }) })
    return sql`select pg_notify(${INDEXED_CHANNEL}, (${payload}::jsonb || jsonb_build_object('generation', current_schema()))::text)`
  })

export const progressSql = (chainId: number) =>
  Effect.map(SqlClient.SqlClient, (sql) => ({
    /** `notifyIndexed` for this chain: a reorg's revert announces its ancestor (commits announce through `sink.commit`). */
    notifyHead: (block: number, hash: string, reverted: boolean) =>
      notifyIndexed(chainId, block, hash, reverted).pipe(Effect.provideService(SqlClient.SqlClient, sql)),

    /** The outcome tokens of every market indexed, to be watched again. */
    marketTokens: sql<{ yes_token: string; no_token: string }>`select yes_token, no_token from market`,

    /** The held window, oldest first. */
    heldBlocks: sql<{ number: string; hash: string; parentHash: string; timestamp: string; digest: string; parentDigest: string }>`
      select number, hash, parent_hash as "parentHash", timestamp, digest, parent_digest as "parentDigest"
      from indexed_block where chain_id = ${chainId} order by number`.pipe(
      Effect.map((rows): ReadonlyArray<HeldRow> => rows.map((r) => ({ ...r, number: Number(r.number), timestamp: Number(r.timestamp) })))
    ),

    /** Adds a block to the held window (in the transaction that commits its rows). */
    holdBlock: (header: Header, digest: string, parentDigest: string) =>
      sql`insert into indexed_block (chain_id, number, hash, parent_hash, timestamp, digest, parent_digest)
        values (${chainId}, ${header.number}, ${header.hash}, ${header.parentHash}, ${header.timestamp}, ${digest}, ${parentDigest})`,

    /** Drops the held blocks above `ancestor` (in the transaction that reverts them). */
    dropBlocksAbove: (ancestor: number) => sql`delete from indexed_block where chain_id = ${chainId} and number > ${ancestor}`,

    /** Drops the held blocks up to `finalized` (in the transaction that prunes their undo rows). */
    dropBlocksThrough: (finalized: number) => sql`delete from indexed_block where chain_id = ${chainId} and number <= ${finalized}`,

    /** Records the newest chain head seen, for the lag that health and /metrics report. */
    recordHead: (head: number) => sql`update indexer_checkpoint set head_block = ${head} where chain_id = ${chainId}`,

    /** Replaces the published metrics (Prometheus text) that API processes serve at /metrics. */
    publishMetrics: (body: string) =>
      sql`insert into indexer_metrics (chain_id, body, updated_at) values (${chainId}, ${body}, now())
        on conflict (chain_id) do update set body = excluded.body, updated_at = excluded.updated_at`
  }))

export type ProgressSql = Effect.Effect.Success<ReturnType<typeof progressSql>>
