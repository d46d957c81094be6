/**
 * The unfinalized tip as a stream of events: what the node's chain means for the window of
 * blocks held, decided by `reorg.ts` and fetched here, for the tip writer to commit one by one.
 *
 * - `Reorg`: the window's tip left the canonical chain; go back to the common ancestor.
 * - `Finalized`: blocks the node calls final leave the window.
 * - `Block`: one block on top of the window, its logs decoded and its digest chained.
 *
 * Each event carries the window as it stands once the event is committed. The stream is pulled:
 * the next event is worked out only after the writer has committed the one before, so a failed
 * commit ends the stream with nothing fetched ahead, and the next poll starts again from the
 * window the database holds.
 */
import { Effect, Option, Stream } from "effect"
import { decodeBatch, type LocatedEvent, type UnknownLogs } from "./decode-batch.js"
import { type AddressBook, announcedTokens } from "./decode.js"
import { findAncestor, reconcile, type Header, type ReorgTooDeep, type Window } from "./reorg.js"
import { AddressBits } from "./source/bloom.js"
import { type ChainError, InconsistentAnswer } from "./source/errors.js"
import type { Rpc } from "./source/rpc.js"
import { encodeRange } from "./log-store/codec.js"
import type { StoredRange } from "./log-store/store-sql.js"
import { confirmEmpty, suspectIn } from "./source/withheld.js"

/** A window entry: the header and the chained digest after the block. */
export interface Held extends Header {
  readonly digest: string
}

/** The digest after block `number`, which the window holds. */
export const digestAt = (window: Window, number: number) => (window.at(number) as Held).digest

export type TipEvent =
  | {
      readonly _tag: "Block"
      readonly header: Header
      readonly events: ReadonlyArray<LocatedEvent>
      readonly unknown: ReadonlyArray<UnknownLogs>
      readonly digest: string
      readonly parentDigest: string
      /** The block's logs in the log store's form (`log-store/`): a row of its own, so a reorg deletes it whole. */
      readonly stored: StoredRange
      /** The newest head seen when the block was fetched. */
      readonly head: number
      readonly window: Window
    }
  | { readonly _tag: "Reorg"; readonly ancestor: Held; readonly depth: number; readonly window: Window }
  | { readonly _tag: "Finalized"; readonly block: number; readonly window: Window }

/** Where a follow stream stands: the window once the last event is committed, and the heads still to reconcile. */
interface Position {
  readonly window: Window
  readonly pending: ReadonlyArray<Header>
}

export const makeTipSource = (rpc: Rpc, book: AddressBook) => {
  /** Bloom bits of the watched addresses, computed once each. */
  const bloomBits = new AddressBits()

  /**
   * Logs of one block by hash, the logs of contracts it announces included. An empty answer
   * for a block whose bloom may hold logs of ours is confirmed first (`withheld.ts`).
   */
  const blockLogs = (header: Header) =>
    Effect.gen(function* () {
      let logs = yield* rpc.logsAtHash([...book.addresses], header.hash)
      const suspect = logs.length === 0 ? suspectIn(bloomBits, header, book.addresses) : undefined
      if (suspect !== undefined) logs = [...(yield* confirmEmpty(rpc, [...book.addresses], header, suspect))]
      const fresh = [...new Set(logs.flatMap(announcedTokens))].filter((t) => book.kindsOf(t) === undefined)
      if (fresh.length > 0) {
        for (const token of fresh) book.watchToken(token)
        const more = yield* rpc.logsAtHash(fresh, header.hash)
        logs = [...logs, ...more].sort((a, b) => a.logIndex - b.logIndex)
      }
      for (const log of logs) {
        if (log.blockHash !== header.hash || log.blockNumber !== header.number) {
          return yield* new InconsistentAnswer({
            message: `a log of block ${header.number} names block ${log.blockNumber} ${log.blockHash}`
          })
        }
      }
      return logs
    })

  /** Block `header` fetched and decoded on top of the window's tip. */
  const block = (window: Window, header: Header, head: number) =>
    Effect.gen(function* () {
      const logs = yield* blockLogs(header).pipe(Effect.withSpan("indexer.tip.fetch", { attributes: { block: header.number } }))
      const parentDigest = digestAt(window, window.tip.number)
      const fetched = { from: header.number, to: header.number, logs, blocks: new Map([[header.number, header]]) }
      const decoded = decodeBatch(book, fetched, parentDigest)
      const held: Held = { ...header, digest: decoded.digest }
      return {
        _tag: "Block",
        header,
        events: decoded.events,
        unknown: decoded.unknown,
        digest: decoded.digest,
        parentDigest,
        stored: { from: header.number, to: header.number, bytes: encodeRange(fetched) },
        head,
        window: window.push(held)
      } satisfies TipEvent
    })

  /** Walks back from `head` to the block we hold that it descends from: the revert, and the branch to index after it. */
  const rewind = (window: Window, head: Header) =>
    Effect.gen(function* () {
      const found = yield* findAncestor(window, head, (h) => rpc.headerByHash(h.parentHash))
      const depth = window.tip.number - found.ancestor.number
      yield* Effect.logWarning("reorg").pipe(
        Effect.annotateLogs({ ancestor: found.ancestor.number, depth, old_tip: window.tip.number, new_head: head.number })
      )
      const reorg = {
        _tag: "Reorg",
        ancestor: found.ancestor as Held,
        depth,
        window: window.rewindTo(found.ancestor.number)
      } satisfies TipEvent
      return { reorg, branch: found.branch }
    })

  /**
   * The events that settle `start` before following: our tip re-checked against the node's
   * chain at `latest` (a reorg while we were away), then the finalized mark moved to `finalized`.
   */
  const settle = (start: Window, latest: Header, finalized: number): Stream.Stream<TipEvent, ChainError | ReorgTooDeep> =>
    Stream.fromIterableEffect(
      Effect.gen(function* () {
        const events: Array<TipEvent> = []
        let window = start
        if (window.headers.length > 0 && window.tip.number <= latest.number) {
          const canonical = yield* rpc.header(window.tip.number)
          if (canonical.hash !== window.tip.hash) {
            const { reorg } = yield* rewind(window, canonical)
            events.push(reorg)
            window = reorg.window
          }
        }
        const moved = window.finalize(finalized)
        if (moved.finalized.number !== window.finalized.number)
          events.push({ _tag: "Finalized", block: moved.finalized.number, window: moved })
        return events
      })
    )

  /**
   * The events that bring `start` up to `latest`, in order: next blocks, a gap fetched in order
   * and reconciled block by block, a reorg reverted and then its branch.
   */
  const follow = (start: Window, latest: Header): Stream.Stream<TipEvent, ChainError | ReorgTooDeep> => {
    const next = ({ window, pending }: Position): Effect.Effect<Option.Option<readonly [TipEvent, Position]>, ChainError | ReorgTooDeep> =>
      Effect.gen(function* () {
        const heads = [...pending]
        while (heads.length > 0) {
          const head = heads.shift()!
          const decision = reconcile(window, head)
          switch (decision._tag) {
            case "Duplicate":
            case "Behind":
              break
            case "Next": {
              const event = yield* block(window, head, latest.number)
              return Option.some([event, { window: event.window, pending: heads }] as const)
            }
            case "Gap":
              heads.unshift(...(yield* rpc.headers(decision.from, decision.to)), head)
              break
            case "Reorg": {
              // The branch ends with `head`; after the revert each of its blocks is `Next`.
              const { reorg, branch } = yield* rewind(window, head)
              return Option.some([reorg, { window: reorg.window, pending: [...branch, ...heads] }] as const)
            }
          }
        }
        return Option.none()
      })
    return Stream.unfoldEffect<Position, TipEvent, ChainError | ReorgTooDeep, never>({ window: start, pending: [latest] }, next)
  }

  return { settle, follow }
}
