/**
 * A fetched batch as the sink takes it: its logs decoded into located events in chain order, the
 * digest chained over its blocks, and the logs no ABI knows counted per (address, topic0).
 * The backfill thread and the in-thread path both call `decodeBatch`, so they agree byte for byte.
 *
 * The digest chains every block that has events: digest' = sha256(digest ‖ block hash ‖ events),
 * so two runs that agree on it have read the same events, whatever their batch sizes or the
 * reorgs they went through. (sha256, not keccak: native in Node, once per block.)
 */
import { hash } from "node:crypto"
import { type Duration, Option, Schedule, Sink, Stream } from "effect"
import type { DomainEvent } from "../schema/domain-events.js"
import type { AddressBook } from "./decode.js"
import { decodeLog } from "./decode.js"
import type { Located } from "./reduce/model.js"
import type { Batch } from "./source/backfill.js"
import type { StoredRange } from "./log-store/store-sql.js"

export interface LocatedEvent {
  readonly event: DomainEvent
  readonly at: Located
}

/** Logs of one (address, topic0) that no ABI of the address's kinds knows. */
export interface UnknownLogs {
  readonly address: string
  readonly topic0: string
  /** The first block such a log was seen in. */
  readonly block: number
  readonly count: number
}

export interface DecodedBatch {
  readonly from: number
  readonly to: number
  /** Hash of block `to`. */
  readonly hash: string
  /** The chained digest after block `to`. */
  readonly digest: string
  readonly events: ReadonlyArray<LocatedEvent>
  readonly unknown: ReadonlyArray<UnknownLogs>
  /**
   * The fetched ranges of the batch in the log store's form (`log-store/`), for the commit that
   * writes its rows to keep; empty for a batch replayed from the store (it holds them already).
   */
  readonly stored: ReadonlyArray<StoredRange>
}

export const GENESIS_DIGEST = `0x${"0".repeat(64)}`

/** A field's text for the digest: primitives as themselves, anything nested as JSON. */
const fieldText = (v: unknown): string =>
  typeof v === "object" && v !== null ? JSON.stringify(v, (_, x) => (typeof x === "bigint" ? x.toString() : x)) : String(v)

/**
 * Chains the events of one block into the digest: sha256 over the previous digest, the block
 * hash, and each event's log index and fields in declaration order. Field by field rather than
 * JSON.stringify with a replacer, which costs a callback per value on the hot path; one string
 * hashed in one call rather than a Hash object fed per event (about 30% less per event).
 */
export const chainDigest = (digest: string, blockHash: string, events: ReadonlyArray<LocatedEvent>) => {
  let text = digest + blockHash
  for (const { at, event } of events) {
    text += `\n${at.logIndex}`
    for (const key in event) text += `\u0000${key}=${fieldText((event as unknown as Record<string, unknown>)[key])}`
  }
  return `0x${hash("sha256", text)}`
}

/** Decodes `batch` on top of `digest` (the digest after block `batch.from - 1`). */
export const decodeBatch = (book: AddressBook, batch: Batch, digest: string): DecodedBatch => {
  const events: Array<LocatedEvent> = []
  const unknown = new Map<string, { address: string; topic0: string; block: number; count: number }>()
  for (const log of batch.logs) {
    const kinds = book.kindsOf(log.address)
    const decoded = kinds === undefined ? undefined : decodeLog(kinds, log)
    if (decoded === undefined) {
      const topic0 = log.topics[0] ?? "none"
      const key = `${log.address}/${topic0}`
      const seen = unknown.get(key)
      if (seen === undefined) unknown.set(key, { address: log.address, topic0, block: log.blockNumber, count: 1 })
      else seen.count++
      continue
    }
    const header = batch.blocks.get(log.blockNumber)!
    events.push({
      event: decoded.event,
      at: {
        block: log.blockNumber,
        timestamp: header.timestamp,
        txHash: log.transactionHash,
        logIndex: log.logIndex,
        address: log.address.toLowerCase()
      }
    })
  }
  // Per block, in block order, so batch boundaries do not matter.
  let i = 0
  while (i < events.length) {
    const block = events[i]!.at.block
    let j = i
    while (j < events.length && events[j]!.at.block === block) j++
    digest = chainDigest(digest, batch.blocks.get(block)!.hash, events.slice(i, j))
    i = j
  }
  return {
    from: batch.from,
    to: batch.to,
    hash: batch.blocks.get(batch.to)!.hash,
    digest,
    events,
    unknown: [...unknown.values()],
    stored: []
  }
}

/**
 * A decoded batch being joined from several: it owns its lists, so each further batch is
 * appended in place (copying the whole join for every batch would make joining quadratic).
 */
class JoinedBatch implements DecodedBatch {
  constructor(
    readonly from: number,
    public to: number,
    public hash: string,
    public digest: string,
    readonly events: Array<LocatedEvent>,
    readonly unknown: Array<UnknownLogs>,
    readonly stored: Array<StoredRange>
  ) {}
}

/** `acc` and the batch `next`, which starts right after it, as one batch. */
const join = (acc: DecodedBatch, next: DecodedBatch): DecodedBatch => {
  const joined =
    acc instanceof JoinedBatch
      ? acc
      : new JoinedBatch(acc.from, acc.to, acc.hash, acc.digest, acc.events.slice(), acc.unknown.slice(), acc.stored.slice())
  for (const event of next.events) joined.events.push(event)
  for (const u of next.unknown) joined.unknown.push(u)
  for (const r of next.stored) joined.stored.push(r)
  joined.to = next.to
  joined.hash = next.hash
  joined.digest = next.digest
  return joined
}

/**
 * Joins decoded ranges into batches of up to `maxEvents` events or what arrives within
 * `maxWait`, whichever comes first (the last batch when the ranges end): fetch ranges stay small
 * (answers providers accept, fetching overlapped with writing), while each transaction takes a
 * sizeable batch (a hot row written once per batch, not once per range). Order, tiling and the
 * digest chain are kept: a joined batch ends with its last part's block, hash and digest.
 */
export const coalesceDecoded =
  (maxEvents: number, maxWait: Duration.DurationInput) =>
  <E, R>(batches: Stream.Stream<DecodedBatch, E, R>): Stream.Stream<DecodedBatch, E, R> =>
    batches.pipe(
      Stream.aggregateWithin(
        Sink.foldWeighted({
          initial: undefined as DecodedBatch | undefined,
          maxCost: maxEvents,
          cost: (_, batch: DecodedBatch) => batch.events.length,
          body: (acc: DecodedBatch | undefined, batch: DecodedBatch) => (acc === undefined ? batch : join(acc, batch))
        }),
        Schedule.spaced(maxWait)
      ),
      Stream.filterMap((batch) => Option.fromNullable(batch))
    )
