/**
 * Answers cached per indexed head. Indexed data changes only when the pipeline commits a block
 * (or reverts to an ancestor), and every commit is announced by the NOTIFY that moves
 * `Freshness`. So a 200 answer computed while the head was H may be served again, byte for byte,
 * for as long as H is still the head: a read-heavy API on a chain with ~1 s blocks answers most
 * requests without touching Postgres.
 *
 * Invariants:
 * - an entry is served only while the head (block and hash) it was stored under is the current
 *   head; the first request that sees another head empties the cache (a reorg back to an ancestor
 *   is another head too);
 * - an entry's head is the one read when its request started, so its X-Indexed-Block never
 *   claims more than its body reflects (the same rule as uncached answers, see `freshness.ts`);
 * - answers are keyed by the request's decoded, validated parameters (`routes.ts`), never by its
 *   spelling: percent-encoded, reordered or case-changed spellings of one request share one
 *   entry, so they can neither grow the cache nor get past it to the database;
 * - only 200 answers of GET requests are kept, and not those that depend on something besides
 *   the indexed data: `/api/health` (lag against the chain head, database reachability),
 *   `/price-delta` and `/volume-window` (which fall back to the wall clock before any block time
 *   is known), nor the documents (static, and large);
 * - memory is bounded in bytes: answers (bodies and keys) take at most 7/8 of `maxBytes` and the
 *   raw-URL shortcuts to their keys (`aliases`, so a repeated URL skips decoding) at most 1/8,
 *   each counted at two bytes a character plus a fixed overhead per entry; the oldest entry goes
 *   first. A flood of aliases can only evict aliases.
 */
import { HttpServerResponse } from "@effect/platform"
import type { HttpApp } from "@effect/platform"
import { Context, Effect, Layer } from "effect"
import { ByteCappedMap, ENTRY_OVERHEAD } from "../core/byte-capped-map.js"
import type { IndexedHead } from "./freshness.js"

/** URLs longer than this get no alias: decoding them again costs less than keeping them. */
const MAX_ALIAS_URL = 1_024

export class HeadCache {
  private tag: string | undefined = undefined
  private readonly answers: ByteCappedMap<Uint8Array>
  private readonly aliases: ByteCappedMap<string>

  /** At most `maxBytes` in all; an answer larger than `maxEntryBytes` is not kept. */
  constructor(
    readonly maxBytes: number,
    readonly maxEntryBytes: number = 1 << 20
  ) {
    const aliasBytes = Math.floor(maxBytes / 8)
    this.answers = new ByteCappedMap(maxBytes - aliasBytes, (key, body) => key.length * 2 + body.byteLength + ENTRY_OVERHEAD)
    this.aliases = new ByteCappedMap(aliasBytes, (url, key) => (url.length + key.length) * 2 + ENTRY_OVERHEAD)
  }

  /** Whether `head` is the head the entries belong to; empties them when the head moved. */
  private at(head: IndexedHead): void {
    const tag = `${head.block}:${head.hash}`
    if (tag !== this.tag) {
      this.answers.clear()
      this.aliases.clear()
      this.tag = tag
    }
  }

  private stands(head: IndexedHead): boolean {
    return `${head.block}:${head.hash}` === this.tag
  }

  get(head: IndexedHead, key: string): Uint8Array | undefined {
    this.at(head)
    return this.answers.get(key)
  }

  /** Stores an answer computed under `head`, unless the head has moved on since. */
  set(head: IndexedHead, key: string, body: Uint8Array): void {
    if (body.byteLength > this.maxEntryBytes || !this.stands(head)) return
    this.answers.set(key, body)
  }

  /** The key a raw URL was last found to have under `head`. */
  aliasOf(head: IndexedHead, url: string): string | undefined {
    this.at(head)
    return this.aliases.get(url)
  }

  setAlias(head: IndexedHead, url: string, key: string): void {
    if (url.length > MAX_ALIAS_URL || !this.stands(head)) return
    this.aliases.set(url, key)
  }

  /** Answers held. */
  get size(): number {
    return this.answers.size
  }

  /** Bytes held, answers and aliases, as counted against `maxBytes`. */
  get bytes(): number {
    return this.answers.bytes + this.aliases.bytes
  }
}

/** The cache one server's answers share (null: caching off). */
export class AnswerCache extends Context.Tag("IndexerAnswerCache")<AnswerCache, { readonly cache: HeadCache | null }>() {}

/** Default size of the answer cache: 64 MiB. */
export const DEFAULT_CACHE_BYTES = 64 << 20

/** A cache of at most `bytes` (answers of at most 1 MiB each); 0 turns caching off. */
export const AnswerCacheLive = (bytes: number) =>
  Layer.sync(AnswerCache, () => ({ cache: bytes > 0 ? new HeadCache(bytes, Math.min(1 << 20, bytes)) : null }))

/**
 * Serves `app`'s answer to a GET request with answer key `key` (see `routes.ts`) from `cache`
 * while `head` stands, storing it when it is a 200 JSON answer; `url` (the raw request URL)
 * becomes an alias of `key`.
 */
export const cachedUnder =
  (cache: HeadCache, head: IndexedHead, key: string, url: string) =>
  <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> => {
    const hit = cache.get(head, key)
    if (hit !== undefined) {
      cache.setAlias(head, url, key)
      return Effect.succeed(HttpServerResponse.uint8Array(hit, { contentType: "application/json" }))
    }
    return Effect.tap(app, (response) => {
      const body = response.body
      if (response.status === 200 && body._tag === "Uint8Array" && body.contentType === "application/json") {
        cache.set(head, key, body.body)
        cache.setAlias(head, url, key)
      }
    })
  }
