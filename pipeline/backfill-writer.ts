/**
 * The backfill writer: indexes finalized blocks in bulk, from the checkpoint on, no undo images.
 *
 * Exactly once: each batch commits its rows, the checkpoint and its NOTIFY in one transaction,
 * so a (re)start continues at checkpoint + 1. From an empty database every row is this process's
 * own: the cache starts complete (nothing is loaded) and the secondary indexes are built once at
 * the end (`deferred-indexes.ts`).
 */
import type { SqlError } from "@effect/sql"
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Exit, Fiber, Stream } from "effect"
import { readCheckpoint } from "../schema/io/indexer-checkpoint.js"
import { applyBatch } from "./batch.js"
import { coalesceDecoded, type DecodedBatch, GENESIS_DIGEST } from "./decode-batch.js"
import { deferIndexes, restoreIndexes } from "./deferred-indexes.js"
import { committing, type IndexingContext, watchIndexedTokens } from "./indexing-context.js"
import { recordBatch, recordPosition } from "./metrics.js"
import { reduceAll } from "./reduce/all.js"
import type { State } from "./reduce/state.js"
import { type CheckpointMoved, commit, lockCheckpointAt, mutableTablesEmpty, planInPlace } from "./sink.js"
import { threadBackfill, threadReplay } from "./source/backfill-thread.js"
import { decodedBackfill, watchlistOf } from "./source/decoded-backfill.js"
import type { ChainError } from "./source/errors.js"
import type { Rpc } from "./source/rpc.js"
import { replayStored, storedRows } from "./log-store/replay.js"
import { deleteStoredAbove, nextStoredFrom, type StoredRange, storeRanges } from "./log-store/store-sql.js"

/**
 * Decoded ranges are joined into batches of up to this many events, or of what arrives within
 * COALESCE_WAIT. Measured on the 1M-event bench: joining only what was ready whenever the writer
 * was free made 67-79 small batches once the writer got fast (44.7-45.2k events/s, Postgres
 * 6.3 s); batches of up to a second made 20 (46.3-47.6k events/s, Postgres 4.8-4.9 s); half a
 * second 36-37 (45.0-45.5k); two seconds 12, the writer then idle (44.7k).
 */
export const COALESCE_EVENTS = 100_000
const COALESCE_WAIT_MS = 1000
const COALESCE_WAIT = Duration.millis(COALESCE_WAIT_MS)

export interface BackfillOptions {
  readonly rpc: Rpc
  readonly concurrency?: number | undefined
  /** False: fetch and decode on this thread through `rpc` (see IndexerOptions.backfillThread). */
  readonly backfillThread?: boolean | undefined
  /** Events per batch, at most; a batch also closes after COALESCE_WAIT. */
  readonly batchEvents: number
}

/** Seconds since `started` (a `performance.now()`). */
const since = (started: number) => (performance.now() - started) / 1000

export const makeBackfillWriter = (context: IndexingContext, options: BackfillOptions) => {
  const { cache, stats, chainId, book } = context

  /**
   * The decoded ranges of [from, to] in block order, digests chained on from `digest`: from the
   * backfill thread, or on this thread. Either way the stage timings land in `stats`.
   */
  const fetchedRanges = (from: number, to: number, digest: string): Stream.Stream<DecodedBatch, ChainError> => {
    const concurrency = options.concurrency ?? 4
    const store = context.logStore
    if (options.backfillThread === false) {
      return Stream.suspend(() => {
        const readBefore = options.rpc.timings.readMs
        return decodedBackfill(options.rpc, book, watchlistOf(book), { from, to, concurrency }, digest, stats, store).pipe(
          Stream.ensuring(Effect.sync(() => (stats.readMs += options.rpc.timings.readMs - readBefore)))
        )
      })
    }
    const job = {
      transport: options.rpc.transport,
      deployment: context.deployment,
      tokens: book.tokens,
      from,
      to,
      digest,
      concurrency,
      store
    }
    return threadBackfill(job).pipe(
      Stream.map((m) => {
        for (const token of m.watched) book.watchToken(token)
        stats.readMs += m.readMs
        stats.decodeMs += m.decodeMs
        return m.batch
      })
    )
  }

  /**
   * The decoded ranges of [from, to]: what the log store holds (`replayStored`, no call to the
   * node), and the blocks it does not hold fetched, in block order. The store may start after
   * `from` (it came with migration 0025, after the index had begun) or have holes; each hole is
   * fetched and its ranges stored in their batch's commit, so the store fills in and stays one
   * tiling of what it holds.
   *
   * Rows past `to` are deleted first: they are left by an index that was emptied, the blocks
   * above the finalized head among them (which a reorg may have orphaned since), and the tip
   * follower fetches those blocks by hash and stores them again one row each. After that no row
   * ends past `to`, so the replay never has to split one. With a shared store (a blue-green
   * build beside the serving indexer) the rows past `to` are the serving indexer's and stay; the
   * build's targets are blocks the serving indexer committed, whose rows end at block bounds
   * (tip rows are one block each), so no row straddles `to` there either.
   */
  const decodedRanges = (from: number, to: number, digest: string) =>
    !context.logStore
      ? fetchedRanges(from, to, digest)
      : context.sharedStore
        ? storedThenFetched(from, to, digest)
        : Stream.unwrap(Effect.as(deleteStoredAbove(chainId, to), storedThenFetched(from, to, digest)))

  /** The stored rows from `from` on while they are contiguous, then the hole after them fetched, then again. */
  const storedThenFetched = (
    from: number,
    to: number,
    digest: string
  ): Stream.Stream<DecodedBatch, ChainError | SqlError.SqlError, SqlClient.SqlClient> => {
    let replayed = from - 1
    let replayedDigest = digest
    const rows = { chainId, from, to, ended: (block: number) => (replayed = block) }
    const decoded =
      options.backfillThread === false
        ? replayStored({ ...rows, book, digest, timings: stats })
        : threadReplay({ deployment: context.deployment, tokens: book.tokens, from, digest }, storedRows(rows)).pipe(
            Stream.map((m) => {
              for (const token of m.watched) book.watchToken(token)
              stats.decodeMs += m.decodeMs
              return m.batch
            })
          )
    const replay = decoded.pipe(Stream.tap((batch) => Effect.sync(() => (replayedDigest = batch.digest))))
    const rest = Stream.unwrap(
      Effect.gen(function* () {
        if (replayed >= from) {
          yield* Effect.logInfo("replayed from the log store").pipe(Effect.annotateLogs({ from, to: replayed }))
        }
        if (replayed >= to) return Stream.empty
        const next = yield* nextStoredFrom(chainId, replayed)
        // The replay stops only before a row that starts past the block after it (no row ends past `to`).
        if (next !== undefined && next <= replayed + 1) {
          return yield* Effect.die(new Error(`log store rows overlap or straddle block ${replayed + 1}`))
        }
        const holeEnd = next === undefined ? to : Math.min(to, next - 1)
        let fetchedDigest = replayedDigest
        const fetched = fetchedRanges(replayed + 1, holeEnd, replayedDigest).pipe(
          Stream.tap((batch) => Effect.sync(() => (fetchedDigest = batch.digest)))
        )
        return holeEnd >= to
          ? fetched
          : Stream.concat(
              fetched,
              Stream.suspend(() => storedThenFetched(holeEnd + 1, to, fetchedDigest))
            )
      })
    )
    return Stream.concat(replay, rest)
  }

  type Committed = (batch: { readonly to: number; readonly events: number }, writeSeconds: number) => Effect.Effect<void>

  /**
   * The backfill on a complete row cache (every row in memory): each decoded range is folded
   * into the cache's own rows as it arrives (`RowCache.foldInPlace`), so its events die young,
   * and the open batch is written once it holds `batchEvents` events or COALESCE_WAIT has
   * passed. A batch's writes are encoded when it closes and run while the next ranges fold;
   * the writes go one at a time, in order, each first checking that the checkpoint is where the
   * batch before left it. Any failure clears the cache (its rows are then ahead of Postgres)
   * and ends the run; a run that finds the cache over its limit between batches clears it and
   * goes on the loaded way (`applyLoaded`).
   */
  const foldedInPlace = (
    ranges: Stream.Stream<DecodedBatch, ChainError | SqlError.SqlError, SqlClient.SqlClient>,
    head: number,
    applyLoaded: (batch: DecodedBatch) => Effect.Effect<void, SqlError.SqlError | CheckpointMoved, SqlClient.SqlClient>,
    committed: Committed
  ) =>
    Effect.gen(function* () {
      interface Open {
        readonly state: State
        readonly openedAt: number
        events: number
        to: number
        hash: string
        digest: string
        /** The batch's ranges for the log store. */
        readonly stored: Array<StoredRange>
      }
      let open: Open | undefined
      /** The checkpoint block the next write must find: the last closed batch's. */
      let guard = cache.guard
      let writing: Fiber.RuntimeFiber<void, SqlError.SqlError | CheckpointMoved> | undefined
      /** Fails with CheckpointMoved unless the stored checkpoint is at `block` (outside a transaction: a check, the lock ends with it). */
      const checkpointStillAt = (block: number | undefined) => (block === undefined ? Effect.void : lockCheckpointAt(chainId, block))
      // The rows held are the database's only if nobody else wrote since our last commit.
      yield* checkpointStillAt(guard)
      const writeDone = Effect.suspend(() => {
        const fiber = writing
        writing = undefined
        return fiber === undefined ? Effect.void : Fiber.join(fiber)
      })
      const close = Effect.gen(function* () {
        if (open === undefined) return
        const batch = open
        open = undefined
        const touched = cache.takeTouched()
        const at = { chainId, block: batch.to, hash: batch.hash, digest: batch.digest, head }
        const { writes, gone } = planInPlace(batch.state, touched)
        const lock = guard
        guard = batch.to
        yield* writeDone
        writing = yield* Effect.forkScoped(
          Effect.gen(function* () {
            const t = performance.now()
            const also = storeRanges(chainId, batch.stored)
            yield* commit({ checkpoint: at, guard: lock, undoBlock: undefined, rows: () => writes, also }).pipe(
              Effect.withSpan("indexer.batch.write", { attributes: { to: batch.to, events: batch.events } })
            )
            cache.inPlaceCommitted(gone, batch.to)
            stats.writeMs += performance.now() - t
            yield* committed(batch, since(t))
          })
        )
      })
      yield* Stream.runForEach(ranges, (range) =>
        Effect.gen(function* () {
          yield* context.unknown.note(range.unknown)
          if (open === undefined && cache.overLimit) {
            // Bounded memory: from here on rows are loaded per batch.
            yield* writeDone
            cache.clear()
          }
          if (!cache.complete) {
            yield* writeDone
            return yield* applyLoaded(range)
          }
          const t = performance.now()
          open ??= { state: cache.foldInPlace(), openedAt: t, events: 0, to: range.from - 1, hash: "", digest: "", stored: [] }
          try {
            for (const { event, at } of range.events) reduceAll(open.state, event, at, context.protocol)
          } catch (error) {
            // Rows another writer changed behind our back can make an event impossible here
            // (the write's own check would come too late): say so when that is the reason.
            yield* writeDone
            yield* checkpointStillAt(guard)
            return yield* Effect.die(error)
          }
          open.events += range.events.length
          for (const r of range.stored) open.stored.push(r)
          open.to = range.to
          open.hash = range.hash
          open.digest = range.digest
          stats.reduceMs += performance.now() - t
          if (open.events >= options.batchEvents || performance.now() - open.openedAt >= COALESCE_WAIT_MS) yield* close
        })
      )
      yield* close
      yield* writeDone
    }).pipe(
      Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : Effect.sync(() => cache.clear()))),
      Effect.scoped
    )

  /** Indexes [checkpoint + 1, target]; returns the new checkpoint block. `head` is the newest head seen, for the checkpoint's lag. */
  const indexTo = (target: number, head: number) =>
    Effect.gen(function* () {
      const checkpoint = yield* readCheckpoint(chainId)
      const from = checkpoint === undefined ? context.deployment.deployBlock : checkpoint.block + 1
      if (from > target) return checkpoint?.block ?? from - 1
      if (checkpoint !== undefined && checkpoint.block !== cache.validAt) yield* watchIndexedTokens(context)
      // Indexing from nothing: every row will be this process's own, so none need loading, and
      // the secondary indexes are built once at the end instead of row by row.
      const fromNothing = checkpoint === undefined && (yield* mutableTablesEmpty)
      if (fromNothing) {
        cache.startEmpty()
        yield* deferIndexes
      }
      const started = Date.now()
      let events = 0
      /** The last block committed, for the blocks each batch adds. */
      let last = from - 1
      /** Counts a committed batch and prints the progress line. */
      const committed: Committed = (batch, writeSeconds) =>
        Effect.suspend(() => {
          events += batch.events
          const blocks = batch.to - last
          last = batch.to
          const seconds = Math.max((Date.now() - started) / 1000, 0.001)
          // The progress line first, as soon as the commit is known; then the figures.
          return Effect.logInfo("indexed").pipe(
            // `from`, `block` and `target` make the progress line self-contained: the start
            // screen (src/screen/) draws its bar from this line alone, in another process.
            Effect.annotateLogs({
              from,
              block: batch.to,
              target,
              events: batch.events,
              events_per_s: Math.round(events / seconds),
              blocks_per_s: Math.round((batch.to - from + 1) / seconds),
              eta_s: Math.round(((target - batch.to) * seconds) / Math.max(batch.to - from + 1, 1)),
              elapsed_s: Math.round(seconds * 10) / 10
            }),
            Effect.zipRight(recordBatch(stats, blocks, batch.events, writeSeconds)),
            Effect.zipRight(recordPosition(batch.to, head)),
            Effect.zipRight(context.publishMetrics(false))
          )
        })
      /** One batch the way every batch can go: rows loaded (from the cache or Postgres), folded on a copy, the changes written. */
      const applyLoaded = (batch: DecodedBatch) =>
        Effect.gen(function* () {
          const at = { chainId, block: batch.to, hash: batch.hash, digest: batch.digest, head }
          const t = performance.now()
          const also = storeRanges(chainId, batch.stored)
          yield* committing(cache, applyBatch(batch.events, at, context.protocol, undefined, cache, stats, also)).pipe(
            Effect.withSpan("indexer.batch.write", { attributes: { to: batch.to, events: batch.events.length } })
          )
          yield* committed({ to: batch.to, events: batch.events.length }, since(t))
        })
      const ranges = decodedRanges(from, target, checkpoint?.digest ?? GENESIS_DIGEST)
      const backfilled = cache.complete
        ? foldedInPlace(ranges, head, applyLoaded, committed)
        : ranges.pipe(
            coalesceDecoded(options.batchEvents, COALESCE_WAIT),
            Stream.runForEach((batch) => Effect.zipRight(context.unknown.note(batch.unknown), applyLoaded(batch)))
          )
      if (!fromNothing) yield* backfilled
      else {
        // Done: built before returning (a failure to build is this call's failure). Failed or
        // interrupted: built anyway, best effort; a process killed leaves them to the next one.
        yield* backfilled.pipe(
          Effect.onExit((exit) =>
            Exit.isSuccess(exit)
              ? Effect.void
              : restoreIndexes.pipe(
                  Effect.catchAll((e) =>
                    Effect.logError("creating the deferred indexes failed").pipe(Effect.annotateLogs({ error: String(e) }))
                  )
                )
          )
        )
        yield* restoreIndexes
      }
      return target
    }).pipe(Effect.withSpan("indexer.backfill", { attributes: { target } }))

  return { indexTo }
}
