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
 * - only 200 answers of GET requests are kept, and not those that depend on something besides
 *   the indexed data: `/api/health` (lag against the chain head, database reachability),
 *   `/price-delta` and `/volume-window` (which fall back to the wall clock before any block time
 *   is known), nor the documents (static, and large);
 * - memory is bounded: at most `maxEntries` answers of at most `maxBytes` each; the oldest
 *   entry goes first.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import type { HttpApp } from "@effect/platform"
import { Context, Effect, Layer } from "effect"
import type { IndexedHead } from "./freshness.js"

const UNCACHED = /^\/api\/(health$|docs|openapi\.json$|markets\/[^/]+\/(price-delta|volume-window)$)/

export class HeadCache {
  private tag: string | undefined = undefined
  private readonly entries = new Map<string, Uint8Array>()

  constructor(
    readonly maxEntries: number,
    readonly maxBytes: number
  ) {}

  /** The answers of `head`, emptied when the head moved since the last call. */
  private at(head: IndexedHead): Map<string, Uint8Array> {
    const tag = `${head.block}:${head.hash}`
    if (tag !== this.tag) {
      this.entries.clear()
      this.tag = tag
    }
    return this.entries
  }

  get(head: IndexedHead, key: string): Uint8Array | undefined {
    return this.at(head).get(key)
  }

  /** Stores an answer computed under `head`, unless the head has moved on since. */
  set(head: IndexedHead, key: string, body: Uint8Array): void {
    if (body.byteLength > this.maxBytes || `${head.block}:${head.hash}` !== this.tag) return
    const entries = this.entries
    if (entries.size >= this.maxEntries) {
      const oldest = entries.keys().next()
      if (oldest.done !== true) entries.delete(oldest.value)
    }
    entries.set(key, body)
  }

  get size(): number {
    return this.entries.size
  }
}

/** Whether the answer to a request may be cached (see the invariants above); `url` is path and query. */
export const cacheable = (method: string, url: string): boolean => method === "GET" && !UNCACHED.test(url.split("?")[0] ?? "")

/** The cache one server's answers share (null: caching off). */
export class AnswerCache extends Context.Tag("IndexerAnswerCache")<AnswerCache, { readonly cache: HeadCache | null }>() {}

/** A cache of at most `entries` answers of at most 1 MiB each; 0 turns caching off. */
export const AnswerCacheLive = (entries: number) =>
  Layer.sync(AnswerCache, () => ({ cache: entries > 0 ? new HeadCache(entries, 1 << 20) : null }))

/** Serves `app`'s answers from `cache` while `head` stands, storing the 200 JSON ones. */
export const cachedUnder =
  (cache: HeadCache, head: IndexedHead | null) =>
  <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R | HttpServerRequest.HttpServerRequest> =>
    head === null
      ? app
      : Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
          if (!cacheable(request.method, request.url)) return app
          const hit = cache.get(head, request.url)
          if (hit !== undefined) return Effect.succeed(HttpServerResponse.uint8Array(hit, { contentType: "application/json" }))
          return Effect.tap(app, (response) => {
            const body = response.body
            if (response.status === 200 && body._tag === "Uint8Array" && body.contentType === "application/json") cache.set(head, request.url, body.body)
          })
        })
