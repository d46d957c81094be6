/**
 * Backfill: the logs of every watched contract over [from, to], as an ordered stream of batches.
 *
 * - Ranges are sized adaptively (ranges.ts) and several are in flight at once; batches come out
 *   in block order whatever order their answers arrive in.
 * - A range the provider refuses as too large is split there and then, so the batch still
 *   covers exactly its planned blocks; the next ranges start at the smaller size.
 * - Contracts announced by events (outcome tokens from MarketCreated) are watched from the
 *   block that announces them. A batch fetched before an announcement it follows is completed
 *   with the logs of the newly watched addresses before it leaves, so no log is missed whatever
 *   the concurrency.
 * - Logs are checked against their block's header (same hash) where a provider could still
 *   serve another fork: the last `verifyDepth` blocks below the target (the finalized head) and
 *   the batch's last block (the checkpoint's hash). Deeper blocks are final everywhere, so a log
 *   that carries `blockTimestamp` (current nodes add it) needs no header there: headers cost a
 *   request each and would otherwise dominate the backfill. A log without it gets its header.
 *   Logs of one block must name one hash in any case. All of it is fetched with the logs,
 *   several ranges at once.
 * - Blocks the answers hold no logs of are checked against their header's logsBloom
 *   (withheld.ts): a "maybe" for a watched address is asked again by hash; logs found then mean
 *   the range answer left them out, and the range is fetched again (LogsWithheld after five
 *   tries). Their headers are fetched with the range's, 100 per batched request.
 * - Up to `concurrency` finished batches wait in a buffer, so fetching overlaps writing.
 *
 * Invariant: the batches tile [from, to] without gap or overlap, and each holds every watched
 * log of its blocks exactly once, ordered by (block, logIndex).
 */
import { Chunk, Effect, Option, Ref, Stream } from "effect"
import { AddressBits } from "./bloom.js"
import { type ChainError, InconsistentAnswer, LogsWithheld, RangeTooLarge, RequestRejected } from "./errors.js"
import { defaultRangePolicy, grow, initialRange, type RangePolicy, type RangeState, shrink } from "./ranges.js"
import type { ChainLog } from "./chain-log.js"
import type { BlockHeader, Rpc } from "./rpc.js"
import { confirmEmpty, suspectIn } from "./withheld.js"

/** What a batch knows of a block: its hash and time (from its header, or from its logs). */
export interface BlockStamp {
  readonly number: number
  readonly hash: string
  readonly timestamp: number
}

export interface Batch {
  readonly from: number
  readonly to: number
  readonly logs: ReadonlyArray<ChainLog>
  /** `to` (from its header), and every block that has logs. */
  readonly blocks: ReadonlyMap<number, BlockStamp>
}

/** The set of watched addresses, growing as announcements arrive. */
export interface Watchlist {
  /**
   * Every watched address in the order first watched. It only ever grows at the end, so a
   * range remembers how far into it its fetch reached instead of copying it into a set (with
   * thousands of outcome tokens, that copy per range was most of the backfill's own work).
   */
  readonly addresses: () => ReadonlyArray<string>
  readonly watching: (address: string) => boolean
  /** Addresses a log announces (new contracts to watch from its block on); usually none. */
  readonly announced: (log: ChainLog) => ReadonlyArray<string>
  readonly watch: (address: string) => void
}

export interface BackfillOptions {
  readonly from: number
  readonly to: number
  readonly concurrency?: number
  readonly policy?: RangePolicy
  /** Blocks below `to` whose logs are checked against headers (default 256). */
  readonly verifyDepth?: number
}

const byPosition = (a: ChainLog, b: ChainLog) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex

/**
 * Logs of `addresses` over [from, to], splitting on range errors (which always shrink the shared
 * range size). Only answers for the whole watch list (`whole`) grow it: the few logs of a token
 * announced mid-range say nothing about the density of the next range.
 */
const fetchLogs = (
  rpc: Rpc,
  sizing: Ref.Ref<RangeState>,
  policy: RangePolicy,
  addresses: ReadonlyArray<string>,
  from: number,
  to: number,
  whole: boolean
): Effect.Effect<Array<ChainLog>, ChainError> =>
  rpc.logs(addresses, from, to).pipe(
    Effect.tap((logs) => (whole ? Ref.update(sizing, (s) => grow(s, policy, logs.length, to - from + 1)) : Effect.void)),
    Effect.catchTag("RangeTooLarge", (error: RangeTooLarge) =>
      Effect.gen(function* () {
        const attempted = to - from + 1
        const next = shrink(yield* Ref.get(sizing), attempted, error)
        if (next === undefined) {
          return yield* new RequestRejected({ message: `provider refuses even a one-block range at block ${from}: ${error.message}` })
        }
        yield* Ref.set(sizing, next)
        const parts: Array<Array<ChainLog>> = []
        for (let start = from; start <= to; start += next.size) {
          parts.push(yield* fetchLogs(rpc, sizing, policy, addresses, start, Math.min(to, start + next.size - 1), whole))
        }
        return parts.flat()
      })
    )
  )

export const backfill = (rpc: Rpc, watchlist: Watchlist, options: BackfillOptions): Stream.Stream<Batch, ChainError> => {
  const policy = options.policy ?? defaultRangePolicy
  return Stream.unwrap(
    Effect.gen(function* () {
      const sizing = yield* Ref.make(initialRange(policy))
      const cursor = yield* Ref.make(options.from)

      // Plans the next range at the current size; ends after `to`.
      const ranges = Stream.repeatEffectOption(
        Effect.gen(function* () {
          const start = yield* Ref.get(cursor)
          if (start > options.to) return yield* Effect.fail(Option.none())
          const { size } = yield* Ref.get(sizing)
          const end = Math.min(options.to, start + size - 1)
          yield* Ref.set(cursor, end + 1)
          return { from: start, to: end }
        })
      )

      const verifyFrom = options.to - (options.verifyDepth ?? 256)
      /**
       * Headers of `to`, of the blocks with logs that need one (see above), and of every block
       * without logs (its bloom is checked), added to `into`.
       */
      const fetchHeaders = (logs: ReadonlyArray<ChainLog>, from: number, to: number, into: Map<number, BlockHeader>) =>
        Effect.gen(function* () {
          const wanted = new Set([to])
          for (const l of logs) if (l.blockNumber > verifyFrom || l.blockTimestamp === undefined) wanted.add(l.blockNumber)
          const withLogs = new Set<number>()
          for (const l of logs) withLogs.add(l.blockNumber)
          for (let n = from; n <= to; n++) if (!withLogs.has(n)) wanted.add(n)
          const missing = [...wanted].filter((n) => !into.has(n))
          if (missing.length === 0) return into
          for (const h of yield* rpc.headersAt(missing)) into.set(h.number, h)
          return into
        })

      /**
       * Each log's block stamp and `to`'s, or the first log that disagrees with its header or its
       * block's other logs. (Headers of blocks without logs, fetched for their blooms, stay out.)
       */
      const stamp = (logs: ReadonlyArray<ChainLog>, headers: ReadonlyMap<number, BlockHeader>, to: number) => {
        const blocks = new Map<number, BlockStamp>()
        const toHeader = headers.get(to)
        if (toHeader !== undefined) blocks.set(to, { number: to, hash: toHeader.hash, timestamp: toHeader.timestamp })
        for (const log of logs) {
          let known = blocks.get(log.blockNumber)
          if (known === undefined) {
            const h = headers.get(log.blockNumber)
            known =
              h === undefined
                ? { number: log.blockNumber, hash: log.blockHash, timestamp: log.blockTimestamp! }
                : { number: h.number, hash: h.hash, timestamp: h.timestamp }
            blocks.set(log.blockNumber, known)
          }
          if (known.hash !== log.blockHash) return { bad: log, expected: known.hash }
        }
        return { blocks }
      }

      const bits = new AddressBits()
      /**
       * The first block without logs whose bloom may hold logs of the first `covered` watched
       * addresses and that has logs when asked by hash (the range answer left them out);
       * undefined when there is none. Fails with LogsWithheld when neither answer has them but
       * the block's receipts do (`withheld.ts`).
       */
      const droppedBlocks = (logs: ReadonlyArray<ChainLog>, headers: ReadonlyMap<number, BlockHeader>, covered: number) =>
        Effect.gen(function* () {
          const withLogs = new Set<number>()
          for (const l of logs) withLogs.add(l.blockNumber)
          const watched = watchlist.addresses()
          for (const header of headers.values()) {
            if (withLogs.has(header.number)) continue
            const suspect = suspectIn(bits, header, watched, covered)
            if (suspect === undefined) continue
            const found = yield* confirmEmpty(rpc, watched.slice(0, covered), header, suspect)
            if (found.length > 0) return header.number
          }
          return undefined
        })

      // Logs and their headers are fetched here, several ranges at once; `complete` then only
      // fetches what announcements in earlier ranges add.
      const fetchRange = (range: { readonly from: number; readonly to: number }) =>
        Effect.gen(function* () {
          // A snapshot: a retry must ask for the same addresses, whatever was watched meanwhile.
          const addresses = watchlist.addresses().slice()
          const logs = yield* fetchLogs(rpc, sizing, policy, addresses, range.from, range.to, true)
          const headers = yield* fetchHeaders(logs, range.from, range.to, new Map())
          return { ...range, covered: addresses.length, logs, headers }
        })

      /** In block order: add the logs of addresses watched since the fetch, and announced within it. */
      // Ranges complete one at a time, in block order: only here does the watch list grow (and
      // at the start), so once a range has the logs of every address watched so far, an
      // announced address it has not covered is exactly one not watched yet.
      const complete = (fetched: { from: number; to: number; covered: number; logs: Array<ChainLog>; headers: Map<number, BlockHeader> }) =>
        Effect.gen(function* () {
          for (let attempt = 0; ; attempt++) {
            // A range whose logs and headers disagreed (replicas out of step) is fetched again whole.
            let logs =
              attempt === 0
                ? fetched.logs
                : yield* fetchLogs(rpc, sizing, policy, watchlist.addresses().slice(0, fetched.covered), fetched.from, fetched.to, true)
            const watched = watchlist.addresses()
            if (watched.length > fetched.covered) {
              const missing = watched.slice(fetched.covered)
              fetched.covered = watched.length
              logs = logs.concat(yield* fetchLogs(rpc, sizing, policy, missing, fetched.from, fetched.to, false))
            }
            // Announcements inside this range: watch from the announcing block, fetch the rest of the range.
            for (;;) {
              const fresh = new Map<string, number>()
              for (const log of logs) {
                for (const address of watchlist.announced(log)) {
                  if (!watchlist.watching(address) && !fresh.has(address)) fresh.set(address, log.blockNumber)
                }
              }
              if (fresh.size === 0) break
              for (const address of fresh.keys()) watchlist.watch(address)
              fetched.covered = watchlist.addresses().length
              logs = logs.concat(yield* fetchLogs(rpc, sizing, policy, [...fresh.keys()], Math.min(...fresh.values()), fetched.to, false))
            }
            logs.sort(byPosition)
            // A refetch after a disagreement takes fresh headers too: either side may be stale.
            const headers = yield* fetchHeaders(logs, fetched.from, fetched.to, attempt === 0 ? fetched.headers : new Map())
            const checked = stamp(logs, headers, fetched.to)
            if (checked.blocks !== undefined) {
              // Blocks answered empty whose bloom may hold our logs: confirmed empty, or the
              // range answer left logs out (asked by hash they come back) and is fetched again.
              const dropped = yield* droppedBlocks(logs, headers, fetched.covered)
              if (dropped === undefined) return { from: fetched.from, to: fetched.to, logs, blocks: checked.blocks } satisfies Batch
              if (attempt >= 5) {
                return yield* new LogsWithheld({
                  message: `the answers for blocks ${fetched.from}-${fetched.to} keep leaving out the logs of block ${dropped}`
                })
              }
              continue
            }
            if (attempt >= 5) {
              const { bad, expected } = checked
              return yield* new InconsistentAnswer({
                message: `log ${bad.logIndex} of block ${bad.blockNumber} keeps naming block hash ${bad.blockHash}, where the block is ${expected}`
              })
            }
          }
        })

      // The buffer lets the next batches be fetched and completed while the consumer writes one.
      return ranges.pipe(
        Stream.mapEffect(fetchRange, { concurrency: options.concurrency ?? 4 }),
        Stream.mapEffect(complete),
        Stream.buffer({ capacity: options.concurrency ?? 4 })
      )
    })
  )
}

export const collectBatches = (stream: Stream.Stream<Batch, ChainError>) =>
  Stream.runCollect(stream).pipe(Effect.map(Chunk.toReadonlyArray))
