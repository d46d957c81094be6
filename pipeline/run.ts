/**
 * The indexing loop: backfill finalized blocks from the checkpoint on (bulk, no undo;
 * `backfill-writer.ts`), then follow the unfinalized tip: the tip source (`tip-source.ts`) turns
 * each poll's heads into `Block | Reorg | Finalized` events, reconciled against the window of
 * unfinalized blocks held (`reorg.ts`), and the tip writer (`tip-writer.ts`) commits them one
 * transaction each.
 *
 * Exactly once: every commit (a backfill batch, a tip block, a revert) writes its rows, its undo
 * images when unfinalized, the window row and the checkpoint in one transaction, and a (re)start
 * continues at checkpoint + 1 with the window read back from `indexed_block`. Contracts
 * discovered from events (outcome tokens) are re-watched on restart from the markets already
 * indexed. The digest chained over the events is decode-batch.ts's.
 */
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Schedule } from "effect"
import type { Deployment } from "../schema/deployment.js"
import { INDEXED_CHANNEL } from "../schema/indexed-notify.js"
import { readCheckpoint } from "../schema/io/indexer-checkpoint.js"
import { COALESCE_EVENTS, makeBackfillWriter } from "./backfill-writer.js"
import { GENESIS_DIGEST } from "./decode-batch.js"
import { AddressBook, protocolContracts } from "./decode.js"
import { restoreIndexes } from "./deferred-indexes.js"
import { healing } from "./healing.js"
import { prometheusText, recordPosition, registerMetrics } from "./metrics.js"
import { type IndexerStats, type IndexingContext, watchIndexedTokens } from "./indexing-context.js"
import { progressSql } from "./progress-sql.js"
import { ReorgTooDeep, UNKNOWN_PARENT, Window } from "./reorg.js"
import { RowCache } from "./row-cache.js"
import type { Rpc } from "./source/rpc.js"
import { type Held, makeTipSource } from "./tip-source.js"
import { makeTipWriter } from "./tip-writer.js"
import { UnknownLogTally } from "./unknown-logs.js"

export { chainDigest, GENESIS_DIGEST } from "./decode-batch.js"
export { healing, HealingPauseCap } from "./healing.js"

/** The Postgres NOTIFY channel of committed heads; its payload is `schema/indexed-notify.ts`. */
export { INDEXED_CHANNEL }

export interface IndexerOptions {
  readonly rpc: Rpc
  readonly deployment: Deployment
  readonly chainId: number
  /** Blocks behind the latest that count as final when the node has no `finalized` tag. */
  readonly confirmations?: number
  readonly pollInterval?: number
  readonly concurrency?: number
  /**
   * Backfill (fetch and decode) on a worker thread, against the rpc's node (default). False runs
   * it on the indexing thread through `rpc` itself: for an rpc that wraps a node's answers,
   * which the worker's own client would not see.
   */
  readonly backfillThread?: boolean
  /** Rows kept in memory across batches, at most (default 2M); beyond, they are dropped and loaded again as needed. */
  readonly cacheLimit?: number
  /** Events per backfill batch, at most (default COALESCE_EVENTS); a batch also closes after a second. */
  readonly batchEvents?: number
  /** Keep fetched logs in the log store and re-index from it (default true; `LOG_STORE=off` measures without). */
  readonly logStore?: boolean
  /**
   * Another indexer (the serving generation's, during a blue-green build) writes the log store
   * above this one's backfill target: its rows there are left alone (not deleted as an emptied
   * index's leftovers would be). The backfill then only ever targets blocks that indexer holds.
   */
  readonly sharedStore?: boolean
}

/**
 * "following the tip" is logged when the indexer first reaches the tip, after a reorg moved the
 * tip back, and then once per this many blocks (about a minute on the live devnet's block a
 * second): a line per block would be a line a second for as long as the chain runs.
 */
export const TIP_LOG_EVERY = 60

/** The metrics the indexer publishes (`metrics.ts`), and how often at most during a backfill. */
const METRICS_PREFIX = "predix_indexer_"
const PUBLISH_EVERY_MS = 5_000

export const makeIndexer = (options: IndexerOptions) =>
  Effect.gen(function* () {
    const { rpc, chainId } = options
    const book = new AddressBook(options.deployment)
    const stats: IndexerStats = { readMs: 0, decodeMs: 0, loadMs: 0, reduceMs: 0, writeMs: 0, events: 0, batches: 0, reorgs: 0 }
    const progress = yield* progressSql(chainId)
    let publishedAt = Number.NEGATIVE_INFINITY
    const publishMetrics = (now: boolean) =>
      Effect.suspend(() => {
        if (!now && performance.now() - publishedAt < PUBLISH_EVERY_MS) return Effect.void
        publishedAt = performance.now()
        return prometheusText(METRICS_PREFIX).pipe(
          Effect.flatMap(progress.publishMetrics),
          Effect.catchAll((error) => Effect.logDebug("metrics not published").pipe(Effect.annotateLogs({ error: String(error) })))
        )
      })
    const context: IndexingContext = {
      chainId,
      deployment: options.deployment,
      sql: yield* SqlClient.SqlClient,
      progress,
      book,
      protocol: protocolContracts(options.deployment, book),
      cache: new RowCache(options.cacheLimit),
      unknown: new UnknownLogTally(),
      stats,
      logStore: options.logStore ?? true,
      sharedStore: options.sharedStore ?? false,
      publishMetrics
    }
    yield* registerMetrics
    // Indexes a killed backfill left deferred come back before anything else.
    yield* healing("starting", Effect.zipRight(watchIndexedTokens(context), restoreIndexes))
    const backfill = makeBackfillWriter(context, {
      rpc,
      concurrency: options.concurrency,
      backfillThread: options.backfillThread,
      batchEvents: options.batchEvents ?? COALESCE_EVENTS
    })
    const tip = makeTipSource(rpc, book)
    const writer = makeTipWriter(context)

    /** The window as the database holds it: the checkpoint's block when nothing is unfinalized. */
    const loadWindow = Effect.gen(function* () {
      const checkpoint = yield* readCheckpoint(chainId)
      const rows = yield* progress.heldBlocks
      const first = rows[0]
      const finalized: Held =
        first !== undefined
          ? { number: first.number - 1, hash: first.parentHash, parentHash: "", timestamp: 0, digest: first.parentDigest }
          : checkpoint !== undefined
            ? { number: checkpoint.block, hash: checkpoint.hash, parentHash: "", timestamp: 0, digest: checkpoint.digest }
            : { number: options.deployment.deployBlock - 1, hash: UNKNOWN_PARENT, parentHash: "", timestamp: 0, digest: GENESIS_DIGEST }
      const held: Array<Held> = rows.map((r) => ({
        number: r.number,
        hash: r.hash,
        parentHash: r.parentHash,
        timestamp: r.timestamp,
        digest: r.digest
      }))
      return new Window(finalized, held)
    })

    const finalizedHead = rpc.header("finalized").pipe(
      Effect.map((h) => h.number),
      Effect.catchAll(() => rpc.header("latest").pipe(Effect.map((h) => Math.max(0, h.number - (options.confirmations ?? 64)))))
    )

    /** The tip the last "following the tip" line named (see TIP_LOG_EVERY), and the reorgs it counted. */
    let lastTipLogged: number | undefined
    let reorgsLogged = 0

    /**
     * One poll: make sure our tip is still canonical (a reorg while we were away), move the
     * finalized mark, backfill in bulk while the finalized head is ahead of the tip, then follow
     * the unfinalized blocks up to the latest head.
     */
    const step = (start: Window) =>
      Effect.gen(function* () {
        const latest = yield* rpc.header("latest")
        const finalized = Math.min(yield* finalizedHead, latest.number)
        let window = yield* writer.run(start, tip.settle(start, latest, finalized))
        if (window.headers.length === 0 && window.tip.number < finalized) {
          yield* backfill.indexTo(finalized, latest.number)
          const header = yield* rpc.header(finalized)
          const checkpoint = yield* readCheckpoint(chainId)
          window = new Window({ ...header, digest: checkpoint?.digest ?? GENESIS_DIGEST } as Held)
        }
        const before = window.tip.number
        window = yield* writer.run(window, tip.follow(window, latest))
        yield* progress.recordHead(latest.number)
        yield* recordPosition(window.tip.number, latest.number)
        yield* publishMetrics(true)
        const at = window.tip.number
        const due =
          lastTipLogged === undefined || at < lastTipLogged || at - lastTipLogged >= TIP_LOG_EVERY || stats.reorgs !== reorgsLogged
        if (at !== before && due) {
          yield* Effect.logInfo("following the tip").pipe(
            Effect.annotateLogs({
              block: at,
              finalized: window.finalized.number,
              head: latest.number,
              unfinalized: window.headers.length,
              ...(lastTipLogged === undefined ? {} : { blocks_since_last: at - lastTipLogged }),
              reorgs: stats.reorgs
            })
          )
          lastTipLogged = at
          reorgsLogged = stats.reorgs
        }
        return window
      }).pipe(Effect.withSpan("indexer.poll"))

    /**
     * Follows the chain forever: one step per poll. A failed step (the database or the node gone
     * for a moment or an hour) is logged and tried again with backoff, from the window and
     * checkpoint the database holds: every step's writes are transactions, so that is exact.
     * Only a reorg deeper than the window stops it, since no retry can undo it.
     */
    const follow = Effect.suspend(() => {
      /** The window the last step left; undefined after a failure, to be read again from the database. */
      let window: Window | undefined
      const poll = Effect.gen(function* () {
        if (window === undefined) {
          // A backfill from nothing that failed may have left its indexes deferred.
          yield* restoreIndexes
          window = yield* loadWindow
        }
        // Any failure, a defect included (a lost COMMIT), may leave the database ahead of `window`.
        window = yield* step(window).pipe(Effect.onError(() => Effect.sync(() => (window = undefined))))
      })
      return healing("indexing", poll, (error) => error instanceof ReorgTooDeep).pipe(
        Effect.repeat(Schedule.spaced(Duration.millis(options.pollInterval ?? 1000)))
      )
    })

    return {
      indexTo: backfill.indexTo,
      follow,
      step,
      loadWindow,
      finalizedHead,
      unknownLogs: () => context.unknown.count,
      stats: () => ({ ...stats })
    }
  })
