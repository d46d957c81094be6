/**
 * A node whose eth_getLogs answers a block with no logs is not simply believed when the block's
 * own `logsBloom` says it may hold a log of a watched contract:
 *
 * 1. the block's logs are asked again by block hash (another request shape, maybe another
 *    replica); logs that come back now are the block's logs;
 * 2. still none: the block's receipts (every log of the block) decide. None of a watched
 *    contract there means the bloom's "maybe" was one of its false positives, and the block is
 *    indeed empty for us; any there, or no receipts to be had, is `LogsWithheld`, which stops
 *    the advance at this block (the step fails and is tried again later, never skipping it).
 *
 * A header without a bloom (a node or recording that has none) is "unknown": nothing to check.
 * Only whole blocks can be caught this way: a block that keeps one watched log of several
 * already explains its bloom bits.
 */
import { Effect } from "effect"
import type { AddressBits } from "./bloom.js"
import { type ChainError, LogsWithheld } from "./errors.js"
import type { ChainLog } from "./chain-log.js"
import type { Rpc } from "./rpc.js"

/** What the check needs of a header. */
export interface BloomedHeader {
  readonly number: number
  readonly hash: string
  readonly logsBloom?: string | undefined
}

/** The first of the first `count` watched addresses the bloom of `header` may hold logs of; undefined when none (or no bloom). */
export const suspectIn = (
  bits: AddressBits,
  header: BloomedHeader,
  addresses: ReadonlyArray<string>,
  count = addresses.length
): string | undefined => (header.logsBloom === undefined ? undefined : bits.firstIn(header.logsBloom, addresses, count))

/**
 * The logs of `addresses` in block `header`, whose first answer was empty although its bloom
 * may hold logs of `suspect`: asked again by hash, then settled by the receipts (see above).
 */
export const confirmEmpty = (
  rpc: Rpc,
  addresses: ReadonlyArray<string>,
  header: BloomedHeader,
  suspect: string
): Effect.Effect<ReadonlyArray<ChainLog>, ChainError> =>
  Effect.gen(function* () {
    const again = yield* rpc.logsAtHash(addresses, header.hash)
    if (again.length > 0) {
      yield* Effect.logWarning("logs missing from an answer came back when asked again").pipe(
        Effect.annotateLogs({ block: header.number, logs: again.length })
      )
      return again
    }
    const watched = new Set(addresses)
    const receipts = yield* rpc.receiptLogs(header.hash).pipe(
      Effect.catchTag("RequestRejected", (error) =>
        Effect.fail(
          new LogsWithheld({
            message: `block ${header.number}: its bloom may hold logs of ${suspect} but eth_getLogs answers none, and the node has no receipts to settle it (${error.message})`
          })
        )
      )
    )
    const ours = receipts.filter((log) => watched.has(log.address))
    if (ours.length > 0) {
      return yield* new LogsWithheld({
        message: `block ${header.number} ${header.hash}: eth_getLogs answers no logs, its receipts hold ${ours.length} of watched contracts (${ours[0]!.address} first)`
      })
    }
    return []
  })
