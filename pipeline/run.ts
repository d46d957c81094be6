/**
 * The indexing loop of this slice: backfill finalized blocks from the checkpoint on, decode,
 * fold, commit, and keep following the finalized head.
 *
 * Only finalized blocks are indexed here, so no reorg can reach what is written; following the
 * unfinalized tip (with undo) builds on `reorg.ts` and `sink.revertTo`.
 *
 * Exactly once: each batch commits its rows and the checkpoint of its last block in one
 * transaction, and a (re)start continues at checkpoint + 1. Contracts discovered from events
 * (outcome tokens) are re-watched on restart from the markets already indexed.
 *
 * The digest chains every block that has events: digest' = sha256(digest ‖ block hash ‖
 * events), so two runs that agree on it have read the same events, whatever their batch sizes.
 * (sha256, not keccak: it is native in Node and this runs once per block on the hot path.)
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schedule, Stream } from "effect"
import { createHash } from "node:crypto"
import { COMPONENTS } from "../schema/components.js"
import type { Deployment } from "../schema/deployment.js"
import { applyBatch, type LocatedEvent } from "./batch.js"
import { AddressBook, announcedTokens, decodeLog } from "./decode.js"
import { readCheckpoint } from "./sink.js"
import { backfill, type Batch, type Watchlist } from "./source/backfill.js"
import type { Rpc } from "./source/rpc.js"

export const GENESIS_DIGEST = `0x${"0".repeat(64)}`

const serialize = (value: unknown) => JSON.stringify(value, (_, v) => (typeof v === "bigint" ? v.toString() : v))

/** Chains the events of one block into the digest. */
export const chainDigest = (digest: string, blockHash: string, events: ReadonlyArray<LocatedEvent>) =>
  `0x${createHash("sha256").update(digest).update(blockHash).update(serialize(events.map((e) => [e.at.logIndex, e.event]))).digest("hex")}`

export interface IndexerOptions {
  readonly rpc: Rpc
  readonly deployment: Deployment
  readonly chainId: number
  /** Blocks behind the latest that count as final when the node has no `finalized` tag. */
  readonly confirmations?: number
  readonly pollInterval?: number
  readonly concurrency?: number
}

/** The watch list: deployment components plus every outcome token already indexed. */
const watchlistFrom = (book: AddressBook): Watchlist => ({
  addresses: () => book.addresses,
  announced: announcedTokens,
  watch: (address) => book.watchToken(address)
})

export const makeIndexer = (options: IndexerOptions) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const book = new AddressBook(options.deployment)
    const tokens = yield* sql.unsafe<{ yes_token: string; no_token: string }>(`select yes_token, no_token from market`)
    for (const t of tokens) {
      book.watchToken(t.yes_token)
      book.watchToken(t.no_token)
    }
    const protocol = new Set<string>(COMPONENTS.filter((c) => c !== "testUsdc").map((c) => options.deployment[c].toLowerCase()))
    const unknown = new Set<string>()
    let unknownCount = 0
    /** Milliseconds spent per stage and events applied, for progress lines and benchmarks. */
    const stats = { decodeMs: 0, reduceAndWriteMs: 0, events: 0, batches: 0 }

    const finalizedHead = options.rpc.header("finalized").pipe(
      Effect.map((h) => h.number),
      Effect.catchAll(() =>
        options.rpc.header("latest").pipe(Effect.map((h) => Math.max(0, h.number - (options.confirmations ?? 64))))
      )
    )

    const decodeBatch = (batch: Batch) => {
      const events: Array<LocatedEvent> = []
      for (const log of batch.logs) {
        const kinds = book.kindsOf(log.address)
        const decoded = kinds === undefined ? undefined : decodeLog(kinds, log)
        if (decoded === undefined) {
          unknownCount++
          const key = `${log.address}/${log.topics[0] ?? "none"}`
          if (!unknown.has(key)) {
            unknown.add(key)
            Effect.runFork(Effect.logWarning("unknown log").pipe(Effect.annotateLogs({ address: log.address, topic0: log.topics[0] ?? "none", block: log.blockNumber })))
          }
          continue
        }
        const header = batch.headers.get(log.blockNumber)!
        events.push({ event: decoded.event, at: { block: log.blockNumber, timestamp: header.timestamp, txHash: log.transactionHash, logIndex: log.logIndex, address: log.address.toLowerCase() } })
      }
      return events
    }

    /** Indexes [checkpoint + 1, target]; returns the new checkpoint block. */
    const indexTo = (target: number, head: number) =>
      Effect.gen(function* () {
        const checkpoint = yield* readCheckpoint(options.chainId)
        const from = checkpoint === undefined ? options.deployment.deployBlock : checkpoint.block + 1
        if (from > target) return checkpoint?.block ?? from - 1
        let digest = checkpoint?.digest ?? GENESIS_DIGEST
        const started = Date.now()
        let events = 0
        yield* backfill(options.rpc, watchlistFrom(book), { from, to: target, concurrency: options.concurrency ?? 4 }).pipe(
          Stream.runForEach((batch) =>
            Effect.gen(function* () {
              const decodeStarted = performance.now()
              const decoded = decodeBatch(batch)
              // Digest per block, in block order, so batch boundaries do not matter.
              let i = 0
              while (i < decoded.length) {
                const block = decoded[i]!.at.block
                let j = i
                while (j < decoded.length && decoded[j]!.at.block === block) j++
                digest = chainDigest(digest, batch.headers.get(block)!.hash, decoded.slice(i, j))
                i = j
              }
              const last = batch.headers.get(batch.to)!
              const applyStarted = performance.now()
              stats.decodeMs += applyStarted - decodeStarted
              yield* applyBatch(decoded, { chainId: options.chainId, block: batch.to, hash: last.hash, digest, head }, protocol, undefined)
              stats.reduceAndWriteMs += performance.now() - applyStarted
              stats.events += decoded.length
              stats.batches++
              events += decoded.length
              const seconds = Math.max((Date.now() - started) / 1000, 0.001)
              yield* Effect.logInfo("indexed").pipe(
                Effect.annotateLogs({
                  block: batch.to,
                  target,
                  events: decoded.length,
                  events_per_s: Math.round(events / seconds),
                  blocks_per_s: Math.round((batch.to - from + 1) / seconds)
                })
              )
            })
          )
        )
        return target
      })

    /** Follows the finalized head forever, one catch-up per poll. */
    const follow = Effect.gen(function* () {
      const target = yield* finalizedHead
      const head = (yield* options.rpc.header("latest")).number
      yield* indexTo(target, head)
    }).pipe(
      Effect.catchAll((error) => Effect.logError("indexing failed; retrying").pipe(Effect.annotateLogs({ error: String(error.message ?? error) }))),
      Effect.repeat(Schedule.spaced(options.pollInterval ?? 1000))
    )

    return { indexTo, follow, unknownLogs: () => unknownCount, stats: () => ({ ...stats }) }
  })
