/**
 * The indexing loop: backfill finalized blocks from the checkpoint on (bulk, no undo), then follow
 * the unfinalized tip block by block with undo images, reconciling every new head (duplicate,
 * next, gap, reorg) against the window of unfinalized blocks held (`reorg.ts`).
 *
 * Exactly once: each batch (or tip block) commits its rows, its undo images when unfinalized, the
 * window row and the checkpoint in one transaction, and a (re)start continues at checkpoint + 1
 * with the window read back from `indexed_block`. A reorg reverts to the common ancestor in one
 * transaction (rows from their undo images, appended rows deleted, window cut) before the new
 * branch is indexed. Blocks the node calls finalized leave the window and lose their undo rows.
 * Contracts discovered from events (outcome tokens) are re-watched on restart from the markets
 * already indexed.
 * The digest chained over the events is decode-batch.ts's.
 */
import { SqlClient, SqlError } from "@effect/sql"
import { Duration, Effect, Exit, Fiber, Stream } from "effect"
import type { Deployment } from "../schema/deployment.js"
import { encodeIndexedPayload, INDEXED_CHANNEL } from "../schema/indexed-notify.js"
import { applyBatch, batchTimings } from "./batch.js"
import { reduceAll } from "./reduce/all.js"
import type { State } from "./reduce/state.js"
import { coalesceDecoded, decodeBatch, type DecodedBatch, GENESIS_DIGEST, type UnknownLogs } from "./decode-batch.js"
import { AddressBook, announcedTokens, protocolContracts } from "./decode.js"
import { findAncestor, reconcile, ReorgTooDeep, UNKNOWN_PARENT, Window, type Header } from "./reorg.js"
import { deferIndexes, restoreIndexes } from "./deferred-indexes.js"
import { RowCache } from "./row-cache.js"
import { type CheckpointMoved, lockCheckpointAt, mutableTablesEmpty, planInPlace, pruneUndo, readCheckpoint, revertTo } from "./sink.js"
import { AddressBits } from "./source/bloom.js"
import { InconsistentAnswer } from "./source/errors.js"
import { confirmEmpty, suspectIn } from "./source/withheld.js"
import type { Batch } from "./source/backfill.js"
import { threadBackfill } from "./source/backfill-thread.js"
import { decodedBackfill, watchlistOf } from "./source/decoded-backfill.js"
import type { ChainError } from "./source/errors.js"
import { answerTimings, backoff, type Rpc } from "./source/rpc.js"

export { chainDigest, GENESIS_DIGEST } from "./decode-batch.js"

/** The Postgres NOTIFY channel of committed heads; its payload is `schema/indexed-notify.ts`. */
export { INDEXED_CHANNEL }

/**
 * Decoded ranges are joined into batches of up to this many events, or of what arrives within
 * COALESCE_WAIT. Measured on the 1M-event bench: joining only what was ready whenever the writer
 * was free made 67-79 small batches once the writer got fast (44.7-45.2k events/s, Postgres
 * 6.3 s); batches of up to a second made 20 (46.3-47.6k events/s, Postgres 4.8-4.9 s); half a
 * second 36-37 (45.0-45.5k); two seconds 12, the writer then idle (44.7k).
 */
const COALESCE_EVENTS = 100_000
const COALESCE_WAIT_MS = 1000
const COALESCE_WAIT = Duration.millis(COALESCE_WAIT_MS)

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
  /** Events per backfill batch, at most (default COALESCE_EVENTS); a batch also closes after COALESCE_WAIT. */
  readonly batchEvents?: number
}

/**
 * Runs `effect` until it succeeds, however long that takes: each failure but a `fatal` one is
 * logged (`message="indexing failed; retrying" phase attempt error`) and retried after the next
 * pause of `backoff` (from 100 ms, doubling, at most 5 s). For steps whose failures are outages
 * (database, node) and whose retry is exact (every write a transaction).
 */
export const healing = <A, E, R>(phase: string, effect: Effect.Effect<A, E, R>, fatal: (error: E | SqlError.SqlError) => boolean = () => false) =>
  Effect.suspend(() => {
    let attempt = 0
    return effect.pipe(
      // @effect/sql makes a failed COMMIT or ROLLBACK a defect; with the database gone, that is
      // an outage like any other (a commit's outcome is then read back from the checkpoint).
      Effect.catchAllDefect((defect) => (defect instanceof SqlError.SqlError ? Effect.fail(defect) : Effect.die(defect))),
      Effect.tapError((error) =>
        fatal(error)
          ? Effect.void
          : Effect.logError("indexing failed; retrying").pipe(Effect.annotateLogs({ phase, attempt: ++attempt, error: describe(error) }))
      ),
      Effect.retry({ schedule: backoff, while: (error) => !fatal(error) })
    )
  })

/** An error's tag and message, on one line. */
const describe = (error: unknown): string => {
  const e = error as { _tag?: unknown; message?: unknown; cause?: unknown }
  const cause = e.cause instanceof Error ? `: ${e.cause.message}` : ""
  const text = `${typeof e._tag === "string" ? `${e._tag}: ` : ""}${typeof e.message === "string" ? e.message : String(error)}${cause}`
  return text.replace(/\s+/g, " ")
}

/**
 * "following the tip" is logged when the indexer first reaches the tip, after a reorg moved the
 * tip back, and then once per this many blocks (about a minute on the live devnet's block a
 * second): a line per block would be a line a second for as long as the chain runs.
 */
export const TIP_LOG_EVERY = 60

export const makeIndexer = (options: IndexerOptions) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const book = new AddressBook(options.deployment)
    /** Watches the outcome tokens of every market the database holds (whoever indexed them). */
    const watchIndexedTokens = Effect.gen(function* () {
      const tokens = yield* sql.unsafe<{ yes_token: string; no_token: string }>(`select yes_token, no_token from market`)
      for (const t of tokens) {
        book.watchToken(t.yes_token)
        book.watchToken(t.no_token)
      }
    })
    // Indexes a killed backfill left deferred come back before anything else.
    yield* healing("starting", Effect.zipRight(watchIndexedTokens, restoreIndexes))
    const protocol = protocolContracts(options.deployment, book)
    const unknown = new Set<string>()
    let unknownCount = 0
    /** The tip the last "following the tip" line named (see TIP_LOG_EVERY). */
    let lastTipLogged: number | undefined
    let reorgsLogged = 0
    /** Committed rows kept across batches; trusted only after a commit (see row-cache.ts). */
    const cache = new RowCache(options.cacheLimit)
    const batchEvents = options.batchEvents ?? COALESCE_EVENTS
    /** Runs a batch's transaction: the rows it staged are accepted if it committed, all dropped if not. */
    const committing = <A, E, R>(transaction: Effect.Effect<A, E, R>) =>
      transaction.pipe(Effect.onExit((exit) => Effect.sync(() => (Exit.isSuccess(exit) ? cache.accept() : cache.clear()))))
    /** Milliseconds spent per stage and events applied, for progress lines and benchmarks. */
    const stats = { readMs: 0, decodeMs: 0, events: 0, batches: 0, reorgs: 0 }

    /**
     * Tells listeners (the stream, caches) where the index now stands. Sent inside the commit's
     * transaction, so Postgres delivers it exactly when the changes become visible, never for a
     * rolled-back batch. `reverted` marks the ancestor a reorg went back to.
     */
    const notifyHead = (block: number, hash: string, reverted: boolean) =>
      sql`select pg_notify(${INDEXED_CHANNEL}, ${encodeIndexedPayload({ chainId: options.chainId, block, hash, reverted })})`

    const finalizedHead = options.rpc.header("finalized").pipe(
      Effect.map((h) => h.number),
      Effect.catchAll(() =>
        options.rpc.header("latest").pipe(Effect.map((h) => Math.max(0, h.number - (options.confirmations ?? 64))))
      )
    )

    /** Counts the logs no ABI knows, with one warning per (address, topic0). */
    const noteUnknown = (logs: ReadonlyArray<UnknownLogs>) => {
      for (const u of logs) {
        unknownCount += u.count
        const key = `${u.address}/${u.topic0}`
        if (unknown.has(key)) continue
        unknown.add(key)
        Effect.runFork(Effect.logWarning("unknown log").pipe(Effect.annotateLogs({ address: u.address, topic0: u.topic0, block: u.block })))
      }
    }

    /** Decodes a fetched batch on top of `digest`, and notes its unknown logs. */
    const decodeAndNote = (batch: Batch, digest: string) => {
      const decoded = decodeBatch(book, batch, digest)
      noteUnknown(decoded.unknown)
      return decoded
    }

    /**
     * The decoded ranges of [from, to] in block order, digests chained on from `digest`: from the
     * backfill thread, or on this thread. Either way the stage timings land in `stats`.
     */
    const decodedRanges = (from: number, to: number, digest: string): Stream.Stream<DecodedBatch, ChainError> => {
      const concurrency = options.concurrency ?? 4
      if (options.backfillThread === false) {
        return Stream.suspend(() => {
          const readBefore = answerTimings.readMs
          return decodedBackfill(options.rpc, book, watchlistOf(book), { from, to, concurrency }, digest, stats).pipe(
            Stream.ensuring(Effect.sync(() => (stats.readMs += answerTimings.readMs - readBefore)))
          )
        })
      }
      const job = { transport: options.rpc.transport, deployment: options.deployment, tokens: book.tokens, from, to, digest, concurrency }
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
      ranges: Stream.Stream<DecodedBatch, ChainError>,
      head: number,
      applyLoaded: (batch: DecodedBatch) => Effect.Effect<void, SqlError.SqlError | CheckpointMoved, SqlClient.SqlClient>,
      committed: (batch: { readonly to: number; readonly events: number }) => Effect.Effect<void>
    ) =>
      Effect.gen(function* () {
        interface Open {
          readonly state: State
          readonly openedAt: number
          events: number
          to: number
          hash: string
          digest: string
        }
        let open: Open | undefined
        /** The checkpoint block the next write must find: the last closed batch's. */
        let guard = cache.guard
        let writing: Fiber.RuntimeFiber<void, SqlError.SqlError | CheckpointMoved> | undefined
        /** Fails with CheckpointMoved unless the stored checkpoint is at `block` (outside a transaction: a check, the lock ends with it). */
        const checkpointStillAt = (block: number | undefined) => (block === undefined ? Effect.void : lockCheckpointAt(options.chainId, block))
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
          const at = { chainId: options.chainId, block: batch.to, hash: batch.hash, digest: batch.digest, head }
          const writes = planInPlace(batch.state, touched, at)
          const lock = guard
          guard = batch.to
          yield* writeDone
          writing = yield* Effect.forkScoped(
            Effect.gen(function* () {
              const t = performance.now()
              yield* sql.withTransaction(
                Effect.gen(function* () {
                  if (lock !== undefined) yield* lockCheckpointAt(options.chainId, lock)
                  yield* writes
                  yield* notifyHead(batch.to, batch.hash, false)
                })
              )
              cache.inPlaceCommitted(touched, batch.to)
              batchTimings.write += performance.now() - t
              yield* committed(batch)
            })
          )
        })
        yield* Stream.runForEach(ranges, (range) =>
          Effect.gen(function* () {
            noteUnknown(range.unknown)
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
            open ??= { state: cache.foldInPlace(), openedAt: t, events: 0, to: range.from - 1, hash: "", digest: "" }
            try {
              for (const { event, at } of range.events) reduceAll(open.state, event, at, protocol)
            } catch (error) {
              // Rows another writer changed behind our back can make an event impossible here
              // (the write's own check would come too late): say so when that is the reason.
              yield* writeDone
              yield* checkpointStillAt(guard)
              return yield* Effect.die(error)
            }
            open.events += range.events.length
            open.to = range.to
            open.hash = range.hash
            open.digest = range.digest
            batchTimings.reduce += performance.now() - t
            if (open.events >= batchEvents || performance.now() - open.openedAt >= COALESCE_WAIT_MS) yield* close
          })
        )
        yield* close
        yield* writeDone
      }).pipe(
        Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : Effect.sync(() => cache.clear()))),
        Effect.scoped
      )

    /** Indexes [checkpoint + 1, target]; returns the new checkpoint block. */
    const indexTo = (target: number, head: number) =>
      Effect.gen(function* () {
        const checkpoint = yield* readCheckpoint(options.chainId)
        const from = checkpoint === undefined ? options.deployment.deployBlock : checkpoint.block + 1
        if (from > target) return checkpoint?.block ?? from - 1
        if (checkpoint !== undefined && checkpoint.block !== cache.validAt) yield* watchIndexedTokens
        // Indexing from nothing: every row will be this process's own, so none need loading, and
        // the secondary indexes are built once at the end instead of row by row.
        const fromNothing = checkpoint === undefined && (yield* mutableTablesEmpty)
        if (fromNothing) {
          cache.startEmpty()
          yield* deferIndexes
        }
        const started = Date.now()
        let events = 0
        /** Counts a committed batch and prints the progress line. */
        const committed = (batch: { readonly to: number; readonly events: number }) =>
          Effect.suspend(() => {
            stats.events += batch.events
            stats.batches++
            events += batch.events
            const seconds = Math.max((Date.now() - started) / 1000, 0.001)
            return Effect.logInfo("indexed").pipe(
              Effect.annotateLogs({
                block: batch.to,
                target,
                events: batch.events,
                events_per_s: Math.round(events / seconds),
                blocks_per_s: Math.round((batch.to - from + 1) / seconds),
                eta_s: Math.round(((target - batch.to) * seconds) / Math.max(batch.to - from + 1, 1))
              })
            )
          })
        /** One batch the way every batch can go: rows loaded (from the cache or Postgres), folded on a copy, the changes written. */
        const applyLoaded = (batch: DecodedBatch) =>
          Effect.gen(function* () {
            const at = { chainId: options.chainId, block: batch.to, hash: batch.hash, digest: batch.digest, head }
            yield* committing(sql.withTransaction(applyBatch(batch.events, at, protocol, undefined, cache).pipe(Effect.zipRight(notifyHead(batch.to, batch.hash, false)))))
            yield* committed({ to: batch.to, events: batch.events.length })
          })
        const ranges = decodedRanges(from, target, checkpoint?.digest ?? GENESIS_DIGEST)
        const backfilled = cache.complete
          ? foldedInPlace(ranges, head, applyLoaded, committed)
          : ranges.pipe(
              coalesceDecoded(batchEvents, COALESCE_WAIT),
              Stream.runForEach((batch) => Effect.zipRight(Effect.sync(() => noteUnknown(batch.unknown)), applyLoaded(batch)))
            )
        if (!fromNothing) yield* backfilled
        else {
          // Done: built before returning (a failure to build is this call's failure). Failed or
          // interrupted: built anyway, best effort; a process killed leaves them to the next one.
          yield* backfilled.pipe(
            Effect.onExit((exit) =>
              Exit.isSuccess(exit) ? Effect.void : restoreIndexes.pipe(Effect.catchAll((e) => Effect.logError("creating the deferred indexes failed").pipe(Effect.annotateLogs({ error: String(e) }))))
            )
          )
          yield* restoreIndexes
        }
        return target
      })

    // ---- the unfinalized tip ------------------------------------------------------------------

    /** A window entry: the header and the chained digest after the block. */
    interface Held extends Header {
      readonly digest: string
    }

    /** The window as the database holds it: the checkpoint's block when nothing is unfinalized. */
    const loadWindow = Effect.gen(function* () {
      const checkpoint = yield* readCheckpoint(options.chainId)
      const rows = yield* sql<{ number: string; hash: string; parentHash: string; timestamp: string; digest: string; parentDigest: string }>`
        select number, hash, parent_hash as "parentHash", timestamp, digest, parent_digest as "parentDigest"
        from indexed_block where chain_id = ${options.chainId} order by number`
      const first = rows[0]
      const finalized: Held = first !== undefined
        ? { number: Number(first.number) - 1, hash: first.parentHash, parentHash: "", timestamp: 0, digest: first.parentDigest }
        : checkpoint !== undefined
          ? { number: checkpoint.block, hash: checkpoint.hash, parentHash: "", timestamp: 0, digest: checkpoint.digest }
          : { number: options.deployment.deployBlock - 1, hash: UNKNOWN_PARENT, parentHash: "", timestamp: 0, digest: GENESIS_DIGEST }
      const held: Array<Held> = rows.map((r) => ({ number: Number(r.number), hash: r.hash, parentHash: r.parentHash, timestamp: Number(r.timestamp), digest: r.digest }))
      return new Window(finalized, held)
    })

    const digestAt = (window: Window, number: number) => (window.at(number) as Held).digest

    /** Bloom bits of the watched addresses, computed once each. */
    const bloomBits = new AddressBits()

    /**
     * Logs of one block by hash, the logs of contracts it announces included. An empty answer
     * for a block whose bloom may hold logs of ours is confirmed first (`withheld.ts`).
     */
    const blockLogs = (header: Header) =>
      Effect.gen(function* () {
        let logs = yield* options.rpc.logsAtHash([...book.addresses], header.hash)
        const suspect = logs.length === 0 ? suspectIn(bloomBits, header, book.addresses) : undefined
        if (suspect !== undefined) logs = [...(yield* confirmEmpty(options.rpc, [...book.addresses], header, suspect))]
        const fresh = [...new Set(logs.flatMap(announcedTokens))].filter((t) => book.kindsOf(t) === undefined)
        if (fresh.length > 0) {
          for (const token of fresh) book.watchToken(token)
          const more = yield* options.rpc.logsAtHash(fresh, header.hash)
          logs = [...logs, ...more].sort((a, b) => a.logIndex - b.logIndex)
        }
        for (const log of logs) {
          if (log.blockHash !== header.hash || log.blockNumber !== header.number) {
            return yield* new InconsistentAnswer({ message: `a log of block ${header.number} names block ${log.blockNumber} ${log.blockHash}` })
          }
        }
        return logs
      })

    /** Indexes one block on top of the window's tip, with undo images; returns the new window. */
    const indexTipBlock = (window: Window, header: Header, head: number) =>
      Effect.gen(function* () {
        const logs = yield* blockLogs(header)
        const parentDigest = digestAt(window, window.tip.number)
        const { events, digest } = decodeAndNote({ from: header.number, to: header.number, logs, blocks: new Map([[header.number, header]]) }, parentDigest)
        yield* committing(
          sql.withTransaction(
            applyBatch(events, { chainId: options.chainId, block: header.number, hash: header.hash, digest, head }, protocol, header.number, cache).pipe(
              Effect.zipRight(sql`insert into indexed_block (chain_id, number, hash, parent_hash, timestamp, digest, parent_digest)
                values (${options.chainId}, ${header.number}, ${header.hash}, ${header.parentHash}, ${header.timestamp}, ${digest}, ${parentDigest})`),
              Effect.zipRight(notifyHead(header.number, header.hash, false))
            )
          )
        )
        stats.events += events.length
        return window.push({ ...header, digest } as Held)
      })

    /** Undoes every block above `ancestor` (which the window holds). */
    const revertWindow = (window: Window, ancestor: number) =>
      Effect.gen(function* () {
        const held = window.at(ancestor)!
        // Rows held in memory are those of the blocks being undone.
        cache.clear()
        yield* sql.withTransaction(
          revertTo({ chainId: options.chainId, block: ancestor, hash: held.hash, digest: digestAt(window, ancestor) }).pipe(
            Effect.zipRight(sql`delete from indexed_block where chain_id = ${options.chainId} and number > ${ancestor}`),
            Effect.zipRight(notifyHead(ancestor, held.hash, true))
          )
        )
        return window.rewindTo(ancestor)
      })

    /** Walks back from `head` to the block we hold that it descends from, and reverts to it. */
    const rewindFor = (window: Window, head: Header) =>
      Effect.gen(function* () {
        const found = yield* Effect.tryPromise({
          try: () => findAncestor(window, head, (h) => Effect.runPromise(options.rpc.headerByHash(h.parentHash))),
          catch: (error) => (error instanceof ReorgTooDeep ? error : new InconsistentAnswer({ message: `while looking for the common ancestor: ${String(error)}` }))
        })
        const depth = window.tip.number - found.ancestor.number
        yield* Effect.logWarning("reorg").pipe(
          Effect.annotateLogs({ ancestor: found.ancestor.number, depth, old_tip: window.tip.number, new_head: head.number })
        )
        stats.reorgs++
        return { window: yield* revertWindow(window, found.ancestor.number), branch: found.branch }
      })

    /** Brings the window up to `head`: next, gap (fetched in order), reorg (revert, then the branch). */
    const followTo = (start: Window, head: Header) =>
      Effect.gen(function* () {
        let window = start
        const pending: Array<Header> = [head]
        while (pending.length > 0) {
          const next = pending.shift()!
          const decision = reconcile(window, next)
          switch (decision._tag) {
            case "Duplicate":
            case "Behind":
              break
            case "Next":
              window = yield* indexTipBlock(window, next, head.number)
              break
            case "Gap": {
              const gap = yield* options.rpc.headers(decision.from, decision.to)
              pending.unshift(...gap, next)
              break
            }
            case "Reorg": {
              const rewound = yield* rewindFor(window, next)
              window = rewound.window
              for (const block of rewound.branch) window = yield* indexTipBlock(window, block, head.number)
              break
            }
          }
        }
        return window
      })

    /** Blocks the node calls final leave the window, with their undo rows. */
    const finalizeWindow = (window: Window, finalized: number) =>
      Effect.gen(function* () {
        const next = window.finalize(finalized)
        if (next.finalized.number === window.finalized.number) return window
        yield* sql.withTransaction(
          pruneUndo(next.finalized.number).pipe(
            Effect.zipRight(sql`delete from indexed_block where chain_id = ${options.chainId} and number <= ${next.finalized.number}`)
          )
        )
        return next
      })

    /**
     * One poll: make sure our tip is still canonical (a reorg while we were away), move the
     * finalized mark, backfill in bulk while the finalized head is ahead of the tip, then follow
     * the unfinalized blocks up to the latest head.
     */
    const step = (start: Window) =>
      Effect.gen(function* () {
        let window = start
        const latest = yield* options.rpc.header("latest")
        const finalized = Math.min(yield* finalizedHead, latest.number)
        if (window.headers.length > 0 && window.tip.number <= latest.number) {
          const canonical = yield* options.rpc.header(window.tip.number)
          if (canonical.hash !== window.tip.hash) window = (yield* rewindFor(window, canonical)).window
        }
        window = yield* finalizeWindow(window, finalized)
        if (window.headers.length === 0 && window.tip.number < finalized) {
          yield* indexTo(finalized, latest.number)
          const header = yield* options.rpc.header(finalized)
          const checkpoint = yield* readCheckpoint(options.chainId)
          window = new Window({ ...header, digest: checkpoint?.digest ?? GENESIS_DIGEST } as Held)
        }
        const before = window.tip.number
        window = yield* followTo(window, latest)
        yield* sql`update indexer_checkpoint set head_block = ${latest.number} where chain_id = ${options.chainId}`
        const tip = window.tip.number
        const due = lastTipLogged === undefined || tip < lastTipLogged || tip - lastTipLogged >= TIP_LOG_EVERY || stats.reorgs !== reorgsLogged
        if (tip !== before && due) {
          yield* Effect.logInfo("following the tip").pipe(
            Effect.annotateLogs({
              block: tip,
              finalized: window.finalized.number,
              head: latest.number,
              unfinalized: window.headers.length,
              ...(lastTipLogged === undefined ? {} : { blocks_since_last: tip - lastTipLogged }),
              reorgs: stats.reorgs
            })
          )
          lastTipLogged = tip
          reorgsLogged = stats.reorgs
        }
        return window
      })

    /**
     * Follows the chain forever: one step per poll. A failed step (the database or the node gone
     * for a moment or an hour) is logged and tried again with backoff, from the window and
     * checkpoint the database holds: every step's writes are transactions, so that is exact.
     * Only a reorg deeper than the window stops it, since no retry can undo it.
     */
    const follow = Effect.gen(function* () {
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
      for (;;) {
        yield* healing("indexing", poll, (error) => error instanceof ReorgTooDeep)
        yield* Effect.sleep(options.pollInterval ?? 1000)
      }
    })

    return { indexTo, follow, step, loadWindow, unknownLogs: () => unknownCount, stats: () => ({ ...stats }) }
  })
