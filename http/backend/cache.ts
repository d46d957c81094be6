/**
 * The backend's one answer cache, in two tiers (protocol-facts section 5): `hot` (2 s: markets,
 * order books, trades, quotes) and `warm` (60 s: profiles, prices, candles, stats).
 *
 * What is cached is the encoded `data` of an answer (and a list's pagination), never the envelope:
 * `meta.timestamp` and `meta.reqId` belong to each request (see `respond.ts`). Entries are keyed
 * by the request's canonical answer key (`front-door.ts`: decoded parameters, sorted, defaults
 * applied), never by its spelling, so spellings of one request share one entry.
 *
 * Invariants:
 * - a hot entry is served only while the indexed head (block AND hash) it was computed under is
 *   the current head, and within 2 s: the first lookup under another head drops every hot entry.
 *   The head moves on the indexer's `predix_indexed` NOTIFY (`http/indexer/freshness.ts`), sent in
 *   the same transaction as the commit;
 * - a warm entry is served for up to 60 s whatever blocks are indexed meanwhile (the spec's
 *   "warm": profiles, stats and leaderboards may be a minute old), except across a reorg: a new
 *   head that does not move forward (the same or a lower number) drops warm entries too;
 * - an entry's head is the one read BEFORE its data was computed, and an answer computed under a
 *   head that has moved on meanwhile is not stored, so no entry claims a newer block than its
 *   data reflects;
 * - memory is bounded in bytes (`http/core/byte-capped-map.ts`, the store the indexer's cache
 *   uses too): keys and answers at two bytes a character plus a fixed overhead each, at most
 *   `maxBytes` in all, an answer over `maxEntryBytes` not kept, the oldest entry out first;
 * - one computation per key and head at a time ("single flight"): a miss while another request is
 *   computing the same key under the same head waits for that answer instead of computing it again,
 *   so an entry expiring under load costs one computation, not one per request arriving meanwhile.
 */
import { Context, type Deferred, Layer } from "effect"
import { ByteCappedMap, ENTRY_OVERHEAD, stringBytes } from "../core/byte-capped-map.js"
import type { IndexedHead } from "../indexer/freshness.js"

export const CACHE_TIERS = { hot: 2_000, warm: 60_000 } as const
export type CacheTier = keyof typeof CACHE_TIERS

/** A cached answer: the JSON of its `data`, and of its pagination for lists. */
export interface CachedAnswer {
  readonly data: string
  readonly pagination?: { readonly limit: number; readonly offset: number; readonly total: number }
}

interface Entry {
  readonly answer: CachedAnswer
  readonly expires: number
  /** The head tag a hot entry belongs to; null for a warm one. */
  readonly head: string | null
}

/** A head as the cache tells heads apart: block AND hash (a reorg keeps the number, not the hash). */
const headTag = (head: IndexedHead) => `${head.block}:${head.hash}`

/** What an answer costs in the store besides its key (the pagination's three numbers included). */
const answerBytes = (answer: CachedAnswer) => stringBytes(answer.data) + (answer.pagination === undefined ? 0 : 64)

/** Default size of the backend cache: 64 MiB. */
export const DEFAULT_BACKEND_CACHE_BYTES = 64 << 20

export class TieredCache {
  private head: string | undefined = undefined
  private headBlock = -1
  private readonly entries: ByteCappedMap<Entry>
  /**
   * Computations under way, by head and key: each resolves with the answer, or with undefined
   * when its computation failed or was interrupted (then every waiter computes its own).
   */
  readonly inFlight = new Map<string, Deferred.Deferred<CachedAnswer | undefined>>()

  constructor(
    readonly maxBytes: number,
    readonly maxEntryBytes: number = 1 << 20,
    private readonly now: () => number = Date.now
  ) {
    this.entries = new ByteCappedMap(maxBytes, (key, entry) => stringBytes(key) + answerBytes(entry.answer) + ENTRY_OVERHEAD)
  }

  /** Moves the cache to `head`: hot entries of another head go; on a reorg warm ones too. */
  private at(head: IndexedHead): void {
    const tag = headTag(head)
    if (tag === this.head) return
    if (head.block > this.headBlock) this.entries.deleteWhere((entry) => entry.head !== null)
    else this.entries.clear()
    this.head = tag
    this.headBlock = head.block
  }

  /** The key of `key`'s computation under `head` in `inFlight`. */
  flightKey(head: IndexedHead, key: string): string {
    return `${headTag(head)} ${key}`
  }

  get(head: IndexedHead, key: string): CachedAnswer | undefined {
    this.at(head)
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    if (entry.expires <= this.now()) {
      this.entries.delete(key)
      return undefined
    }
    return entry.answer
  }

  /** Keeps `answer`, computed under `head`, for its tier's time, unless the head has moved since. */
  set(head: IndexedHead, tier: CacheTier, key: string, answer: CachedAnswer): void {
    if (answerBytes(answer) > this.maxEntryBytes || headTag(head) !== this.head) return
    this.entries.set(key, { answer, expires: this.now() + CACHE_TIERS[tier], head: tier === "hot" ? this.head : null })
  }

  /** The head (`block:hash`) the entries were last looked up under, for observation. */
  get heldHead(): string | undefined {
    return this.head
  }

  /** Answers held. */
  get size(): number {
    return this.entries.size
  }

  /** Bytes held, as counted against `maxBytes`. */
  get bytes(): number {
    return this.entries.bytes
  }
}

/** The cache this backend instance's answers share (null: caching off). */
export class BackendCache extends Context.Tag("BackendCache")<BackendCache, { readonly cache: TieredCache | null }>() {}

/** At most `bytes` of keys and answers (answers of at most 1 MiB of JSON each); 0 turns caching off. */
export const BackendCacheLive = (bytes: number) =>
  Layer.sync(BackendCache, () => ({ cache: bytes > 0 ? new TieredCache(bytes, Math.min(1 << 20, bytes)) : null }))
