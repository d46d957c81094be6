/**
 * The backend's answer cache: an instance of the one head cache (`http/core/head-cache.ts`) in
 * two tiers (protocol-facts section 5): `hot` (2 s: markets, order books, trades, quotes) and
 * `warm` (60 s: profiles, prices, candles, stats).
 *
 * What is cached is the encoded `data` of an answer (and a list's pagination), never the envelope:
 * `meta.timestamp` and `meta.reqId` belong to each request (see `respond.ts`). Entries are keyed
 * by the request's canonical answer key (`front-door.ts`: decoded parameters, sorted, defaults
 * applied), never by its spelling, so spellings of one request share one entry.
 *
 * Invariants (the cache's own, single flight included, are in `head-cache.ts`):
 * - a hot entry is served only while the indexed head (block AND hash) it was computed under is
 *   the current head, and within 2 s. The head moves on the indexer's `predix_indexed` NOTIFY
 *   (`http/core/freshness.ts`), sent in the same transaction as the commit;
 * - a warm entry is served for up to 60 s whatever blocks are indexed meanwhile (the spec's
 *   "warm": profiles, stats and leaderboards may be a minute old), except across a reorg: a new
 *   head that does not move forward (the same or a lower number) drops warm entries too;
 * - an answer costs the JSON of its data at two bytes a character, plus 64 bytes for a
 *   pagination; answers over 1 MiB of JSON are not kept.
 */
import { Context, Layer } from "effect"
import { stringBytes } from "../../core/byte-capped-map.js"
import { HeadCache } from "../../core/head-cache.js"

export const CACHE_TIERS = { hot: { ttlMs: 2_000, perHead: true }, warm: { ttlMs: 60_000, perHead: false } } as const
export type CacheTier = keyof typeof CACHE_TIERS

/** A cached answer: the JSON of its `data`, and of its pagination for lists. */
export interface CachedAnswer {
  readonly data: string
  readonly pagination?: { readonly limit: number; readonly offset: number; readonly total: number }
}

/** The backend's instance of the one head cache. */
export type BackendAnswers = HeadCache<CachedAnswer, CacheTier>

/** What an answer costs in the store besides its key (the pagination's three numbers included). */
const answerBytes = (answer: CachedAnswer) => stringBytes(answer.data) + (answer.pagination === undefined ? 0 : 64)

/** The backend's cache of at most `maxBytes` of keys and answers, an answer of at most `maxEntryBytes`. */
export const backendCache = (maxBytes: number, maxEntryBytes: number = 1 << 20, now: () => number = Date.now): BackendAnswers =>
  new HeadCache<CachedAnswer, CacheTier>({ maxBytes, maxEntryBytes, valueBytes: answerBytes, tiers: CACHE_TIERS, now })

/** Default size of the backend cache: 64 MiB. */
export const DEFAULT_BACKEND_CACHE_BYTES = 64 << 20

/** The cache this backend instance's answers share (null: caching off). */
export class BackendCache extends Context.Tag("predix/BackendCache")<BackendCache, { readonly cache: BackendAnswers | null }>() {}

/** At most `bytes` of keys and answers (answers of at most 1 MiB of JSON each); 0 turns caching off. */
export const BackendCacheLive = (bytes: number) =>
  Layer.sync(BackendCache, () => ({ cache: bytes > 0 ? backendCache(bytes, Math.min(1 << 20, bytes)) : null }))
