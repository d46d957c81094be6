/**
 * The backend's one answer cache, in two tiers (protocol-facts section 5): `hot` (2 s: markets,
 * order books, trades, quotes) and `warm` (60 s: profiles, prices, candles, stats).
 *
 * What is cached is the encoded `data` of an answer (and a list's pagination), never the envelope:
 * `meta.timestamp` and `meta.reqId` belong to each request (see `respond.ts`).
 *
 * Invariants:
 * - an entry is served only while the indexed head (block AND hash) it was computed under is the
 *   current head, and only within its tier's time to live: the first lookup under another head
 *   empties the cache, so no answer outlives the block it reflects, a reorg (a head with another
 *   hash, or an ancestor) included. The head moves on the indexer's `predix_indexed` NOTIFY
 *   (`http/indexer/freshness.ts`), sent in the same transaction as the commit;
 * - an entry's head is the one read BEFORE its data was computed, so it never claims a newer block
 *   than the data reflects (a commit landing mid-read only makes the entry die sooner);
 * - memory is bounded: at most `maxEntries` entries of at most `maxBytes` each, oldest out first;
 * - one computation per key and head at a time ("single flight"): a miss while another request is
 *   computing the same key under the same head waits for that answer instead of computing it again,
 *   so an entry expiring under load costs one computation, not one per request arriving meanwhile.
 */
import { Context, type Deferred, Layer } from "effect"
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
}

/** A head as the cache tells heads apart: block AND hash (a reorg keeps the number, not the hash). */
const headTag = (head: IndexedHead) => `${head.block}:${head.hash}`

export class TieredCache {
  private head: string | undefined = undefined
  private readonly entries = new Map<string, Entry>()
  /**
   * Computations under way, by head and key: each resolves with the answer, or with undefined
   * when its computation failed or was interrupted (then every waiter computes its own).
   */
  readonly inFlight = new Map<string, Deferred.Deferred<CachedAnswer | undefined>>()

  constructor(
    readonly maxEntries: number,
    readonly maxBytes: number,
    private readonly now: () => number = Date.now
  ) {}

  private at(head: IndexedHead): Map<string, Entry> {
    const tag = headTag(head)
    if (tag !== this.head) {
      this.entries.clear()
      this.head = tag
    }
    return this.entries
  }

  /** The key of `key`'s computation under `head` in `inFlight`. */
  flightKey(head: IndexedHead, key: string): string {
    return `${headTag(head)} ${key}`
  }

  get(head: IndexedHead, key: string): CachedAnswer | undefined {
    const entries = this.at(head)
    const entry = entries.get(key)
    if (entry === undefined) return undefined
    if (entry.expires <= this.now()) {
      entries.delete(key)
      return undefined
    }
    return entry.answer
  }

  /** Keeps `answer`, computed under `head`, for its tier's time, unless the head has moved since. */
  set(head: IndexedHead, tier: CacheTier, key: string, answer: CachedAnswer): void {
    if (answer.data.length > this.maxBytes || headTag(head) !== this.head) return
    const entries = this.entries
    entries.delete(key)
    if (entries.size >= this.maxEntries) {
      const oldest = entries.keys().next()
      if (oldest.done !== true) entries.delete(oldest.value)
    }
    entries.set(key, { answer, expires: this.now() + CACHE_TIERS[tier] })
  }

  get size(): number {
    return this.entries.size
  }
}

/** The cache this backend instance's answers share (null: caching off). */
export class BackendCache extends Context.Tag("BackendCache")<BackendCache, { readonly cache: TieredCache | null }>() {}

/** At most `entries` answers of at most 1 MiB of JSON each; 0 turns caching off. */
export const BackendCacheLive = (entries: number) =>
  Layer.sync(BackendCache, () => ({ cache: entries > 0 ? new TieredCache(entries, 1 << 20) : null }))
