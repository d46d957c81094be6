/**
 * The indexer's answers cached per indexed head, in the one head cache (`http/core/head-cache.ts`).
 * Indexed data changes only when the pipeline commits a block (or reverts to an ancestor), and
 * every commit is announced by the NOTIFY that moves `Freshness`. So a 200 answer computed while
 * the head was H may be served again, byte for byte, for as long as H is still the head: a
 * read-heavy API on a chain with ~1 s blocks answers most requests without touching Postgres.
 *
 * Invariants (the cache's own are in `head-cache.ts`):
 * - no tiers: an entry is served only while the head (block and hash) it was stored under is the
 *   current head; the first request that sees another head empties the cache;
 * - an entry's head is the one read when its request started, so its X-Indexed-Block never
 *   claims more than its body reflects (the same rule as uncached answers, see `freshness.ts`);
 * - answers are keyed by the request's decoded, validated parameters (`routes.ts`), never by its
 *   spelling: percent-encoded, reordered or case-changed spellings of one request share one
 *   entry, so they can neither grow the cache nor get past it to the database;
 * - only 200 JSON answers of GET requests are kept, and not those that depend on something
 *   besides the indexed data: `/api/health` (lag against the chain head, database reachability),
 *   `/price-delta` and `/volume-window` (which fall back to the wall clock before any block time
 *   is known), nor the documents (static, and large);
 * - concurrent misses of one key under one head run one computation; the others are answered
 *   its body as a hit is (single flight);
 * - memory is bounded in bytes: answers (bodies and keys) take at most 7/8 of the cache's bytes
 *   and the raw-URL aliases of their keys (so a repeated URL skips decoding, `fast-path.ts`) at
 *   most 1/8. A flood of aliases can only evict aliases.
 */
import { HttpServerResponse } from "@effect/platform"
import type { HttpApp } from "@effect/platform"
import { Context, Effect, Layer } from "effect"
import { HeadCache as Cache } from "../core/head-cache.js"
import type { IndexedHead } from "./freshness.js"

/** The indexer's instance of the one head cache: 200 JSON bodies by answer key, no tiers, URL aliases. */
export type HeadCache = Cache<Uint8Array>

/** The indexer's cache of at most `maxBytes` in all, an answer of at most `maxEntryBytes`. */
export const indexerCache = (maxBytes: number, maxEntryBytes: number = 1 << 20): HeadCache =>
  new Cache<Uint8Array>({
    maxBytes,
    maxEntryBytes,
    valueBytes: (body) => body.byteLength,
    aliasBytes: Math.floor(maxBytes / 8)
  })

/** The cache one server's answers share (null: caching off). */
export class AnswerCache extends Context.Tag("predix/IndexerAnswerCache")<AnswerCache, { readonly cache: HeadCache | null }>() {}

/** Default size of the answer cache: 64 MiB. */
export const DEFAULT_CACHE_BYTES = 64 << 20

/** A cache of at most `bytes` (answers of at most 1 MiB each); 0 turns caching off. */
export const AnswerCacheLive = (bytes: number) =>
  Layer.sync(AnswerCache, () => ({ cache: bytes > 0 ? indexerCache(bytes, Math.min(1 << 20, bytes)) : null }))

/** The body of a response the cache keeps: a 200 JSON answer's, encoded. */
const keptBody = (response: HttpServerResponse.HttpServerResponse): Uint8Array | undefined => {
  const body = response.body
  return response.status === 200 && body._tag === "Uint8Array" && body.contentType === "application/json" ? body.body : undefined
}

/**
 * Serves `app`'s answer to a GET request with answer key `key` (see `routes.ts`) from `cache`
 * while `head` stands, storing it when it is a 200 JSON answer; `url` (the raw request URL)
 * becomes an alias of `key` whenever the key has an answer.
 */
export const cachedUnder =
  (cache: HeadCache, head: IndexedHead, key: string, url: string) =>
  <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
    Effect.map(cache.through(head, key, app, keptBody), (answer) => {
      if (answer._tag === "Hit") {
        cache.setAlias(head, url, key)
        return HttpServerResponse.uint8Array(answer.value, { contentType: "application/json" })
      }
      if (keptBody(answer.result) !== undefined) cache.setAlias(head, url, key)
      return answer.result
    })
