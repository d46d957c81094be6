/**
 * What the backfill writer and the tip writer share within one indexer: the address book that
 * grows as markets announce tokens, the rows kept across batches, and the counts of this run.
 * One writer runs at a time (the backfill between tip steps), so nothing here is raced.
 */
import type { SqlClient } from "@effect/sql"
import { Effect, Exit } from "effect"
import type { Deployment } from "../schema/deployment.js"
import type { AddressBook } from "./decode.js"
import type { IndexerCounts } from "./metrics.js"
import type { ProgressSql } from "./progress-sql.js"
import type { ProtocolContracts } from "./reduce/model.js"
import type { RowCache } from "./row-cache.js"
import type { UnknownLogTally } from "./unknown-logs.js"

/**
 * This indexer's figures since it was made, for progress lines and benchmarks: the time its
 * stages took, and its counts (changed only through `metrics.ts`, with the Metrics).
 */
export interface IndexerStats extends IndexerCounts {
  /** Milliseconds spent reading RPC answers and decoding logs (the backfill's stages). */
  readMs: number
  decodeMs: number
  /** Milliseconds the indexing thread spent loading rows, folding events and writing batches (spans, Postgres's time included). */
  loadMs: number
  reduceMs: number
  writeMs: number
}

export interface IndexingContext {
  readonly chainId: number
  readonly deployment: Deployment
  readonly sql: SqlClient.SqlClient
  readonly progress: ProgressSql
  readonly book: AddressBook
  readonly protocol: ProtocolContracts
  /** Committed rows kept across batches; trusted only after a commit (see row-cache.ts). */
  readonly cache: RowCache
  readonly unknown: UnknownLogTally
  readonly stats: IndexerStats
  /**
   * Keep the fetched logs in the log store and replay a re-index from it (`log-store/`); off
   * only to measure what the store costs.
   */
  readonly logStore: boolean
  /** Another indexer writes the store above this one's backfill targets: leave its rows (`IndexerOptions.sharedStore`). */
  readonly sharedStore: boolean
  /**
   * Publishes this process's metrics for /metrics (`metrics.ts`): at once when `now`, otherwise
   * only when the last publication is a few seconds old. Never fails: a publication lost to an
   * outage is only older figures.
   */
  readonly publishMetrics: (now: boolean) => Effect.Effect<void>
}

/** Runs a batch's transaction: the rows it staged in `cache` are accepted if it committed, all dropped if not. */
export const committing = <A, E, R>(cache: RowCache, transaction: Effect.Effect<A, E, R>) =>
  transaction.pipe(Effect.onExit((exit) => Effect.sync(() => (Exit.isSuccess(exit) ? cache.accept() : cache.clear()))))

/** Watches the outcome tokens of every market the database holds (whoever indexed them). */
export const watchIndexedTokens = (context: IndexingContext) =>
  Effect.map(context.progress.marketTokens, (tokens) => {
    for (const t of tokens) {
      context.book.watchToken(t.yes_token)
      context.book.watchToken(t.no_token)
    }
  })
