/**
 * How every backend handler answers: `{ data, meta: { timestamp, version, reqId } }` (lists add
 * `meta.pagination { limit, offset, total }`). Reads of the index (`item`, `list`) go through the
 * indexer breaker and the tiered cache (`cache.ts`, one computation per key and head at a time),
 * with `X-Cache` / `X-Cache-Tier`; answers from the backend's own tables and the system endpoints
 * (`own`, `ownList`) do not. The envelope's shape and version are `schema/envelopes.ts`'s; its
 * meta is made here and nowhere else (`metaOf`).
 *
 * Handlers encode their own answers through the endpoint's data schema, so an encoding bug is a
 * defect (500, logged) rather than HttpApi's misleading 400, and a cache hit is served from the
 * encoded JSON of `data` without decoding or encoding anything; only `meta` is made per request.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, FiberRef, Schema } from "effect"
import { backendMeta, type BackendMeta } from "../../schema/envelopes.js"
import { Freshness } from "../core/freshness.js"
import { onPrimary } from "../core/read-routing.js"
import { IndexerBreaker } from "./edge/breaker.js"
import { BackendCache, type CachedAnswer, type CacheTier } from "./edge/cache.js"
import { answerKey } from "./edge/front-door.js"
import { resolveLocale, type Locale } from "./locale.js"

export const REQUEST_ID_HEADER = "x-request-id"

/** What a handler knows about its request beyond its decoded parameters. */
export interface RequestInfo {
  readonly reqId: string
  readonly locale: Locale
  readonly method: string
  readonly url: string
}

export const requestInfo = Effect.map(HttpServerRequest.HttpServerRequest, (request): RequestInfo => {
  const query = new URLSearchParams(request.url.split("?")[1] ?? "").get("locale") ?? undefined
  return {
    // Set by the request-id middleware (`middleware.ts`) before any handler runs.
    reqId: request.headers[REQUEST_ID_HEADER] ?? "",
    locale: resolveLocale(query, request.headers["accept-language"]),
    method: request.method,
    url: request.url
  }
})

export interface Page<A> {
  readonly rows: ReadonlyArray<A>
  readonly total: number
  readonly limit: number
  readonly offset: number
}

/** The meta of an answer made now (the envelope's shape and version: `schema/envelopes.ts`). */
const metaOf = (info: RequestInfo): BackendMeta => backendMeta(Math.floor(Date.now() / 1000), info.reqId)

/**
 * The request's meta, for an answer that is not rendered here: the system endpoints' 503s carry
 * the healthy answer's envelope in their error (`system/api.ts`).
 */
export const requestMeta = Effect.map(requestInfo, metaOf)

const render = (answer: CachedAnswer, info: RequestInfo, cacheHeaders: Record<string, string>) => {
  const meta = metaOf(info)
  const full = answer.pagination === undefined ? meta : { ...meta, pagination: answer.pagination }
  return HttpServerResponse.text(`{"data":${answer.data},"meta":${JSON.stringify(full)}}`, {
    contentType: "application/json",
    headers: cacheHeaders
  })
}

/**
 * The answer of `compute` (given the request's locale), cached in `tier` (null: not cached) under
 * the request's answer key (its decoded parameters, canonical: `front-door.ts`), locale and
 * `keyExtra` (a POST body, canonicalised). A request without an answer key is never cached: the
 * raw URL is no key (every spelling of a request would be an entry of its own).
 */
const answer = <A, E, R>(
  tier: CacheTier | null,
  compute: (info: RequestInfo) => Effect.Effect<A, E, R>,
  encode: (value: A) => CachedAnswer,
  keyExtra: string
) =>
  Effect.gen(function* () {
    const info = yield* requestInfo
    const { cache } = yield* BackendCache
    const { breaker, guard } = yield* IndexerBreaker
    const head = yield* Effect.flatMap(Freshness, (f) => f.current)
    const canonical = yield* FiberRef.get(answerKey)
    const key = `${canonical} ${info.locale} ${keyExtra}`
    const useCache = tier !== null && cache !== null && head !== null && canonical !== undefined
    if (!useCache) {
      const encoded = encode(yield* guard(compute(info)))
      return render(encoded, info, tier === null ? {} : { "x-cache": "MISS", "x-cache-tier": tier })
    }
    // While the breaker is open nothing is served from the cache (hits nor shared computations).
    const served = yield* cache.through(head, key, guard(compute(info)).pipe(Effect.map(encode)), (encoded) => encoded, {
      tier,
      lookup: breaker.state !== "open"
    })
    return served._tag === "Hit"
      ? render(served.value, info, { "x-cache": "HIT", "x-cache-tier": tier })
      : render(served.result, info, { "x-cache": "MISS", "x-cache-tier": tier })
  })

const encoder = <A, I>(schema: Schema.Schema<A, I>) => {
  const encode = Schema.encodeSync(schema)
  return (value: A): string => JSON.stringify(encode(value))
}

/**
 * A writer of one value's JSON text that stands in for the schema's encoding (a hot record, e.g.
 * `markets/market-json.ts`): it must give exactly `JSON.stringify(Schema.encodeSync(schema)(value))`,
 * key order included, and a test must compare the two over real records.
 */
export type JsonWriter<A> = (value: A) => string

/** A single item of `schema` (written by `json` when given, which must match the schema's encoding). */
export const item = <A, I>(schema: Schema.Schema<A, I>, tier: CacheTier | null, json?: JsonWriter<A>) => {
  const encode = json ?? encoder(schema)
  return <E, R>(compute: (info: RequestInfo) => Effect.Effect<A, E, R>, keyExtra = "") =>
    answer(tier, compute, (value) => ({ data: encode(value) }), keyExtra)
}

/**
 * `item` for an answer whose computation gives the JSON text of `data` itself (written from
 * Postgres' text: the portfolio, `trading/portfolio-json.ts`), wrapped in the envelope as it is. The text must
 * be what `JSON.stringify(Schema.encodeSync(schema)(value))` gives of the same answer, key order
 * included, and a test must compare the two; `schema` is named here so the endpoint's answer and
 * that test refer to the same one.
 */
export const itemJson = <A, I>(_schema: Schema.Schema<A, I>, tier: CacheTier | null) => {
  return <E, R>(compute: (info: RequestInfo) => Effect.Effect<string, E, R>, keyExtra = "") =>
    answer(tier, compute, (data) => ({ data }), keyExtra)
}

/**
 * An answer from the backend's own tables (sessions, comments, notifications, claims, accounts):
 * never cached (each is a user's own or a write), and not behind the indexer's breaker (an indexer
 * outage must not stop sign-in or a comment). Same envelope and encoding as `item`. Computed on
 * the primary even when the process reads the index from replicas (`onPrimary`): a user's write
 * and the read after it meet there.
 */
export const own = <A, I>(schema: Schema.Schema<A, I>) => {
  const encode = encoder(schema)
  return <E, R>(compute: (info: RequestInfo) => Effect.Effect<A, E, R>) =>
    Effect.flatMap(requestInfo, (info) => Effect.map(onPrimary(compute(info)), (value) => render({ data: encode(value) }, info, {})))
}

/** A page of the backend's own rows (`own`'s rules, `list`'s envelope). */
export const ownList = <A, I>(schema: Schema.Schema<A, I>) => {
  const encode = encoder(Schema.Array(schema))
  return <E, R>(compute: (info: RequestInfo) => Effect.Effect<Page<A>, E, R>) =>
    Effect.flatMap(requestInfo, (info) =>
      Effect.map(onPrimary(compute(info)), (page) =>
        render({ data: encode(page.rows), pagination: { limit: page.limit, offset: page.offset, total: page.total } }, info, {})
      )
    )
}

/** A page of `schema` items (each written by `json` when given, which must match the schema's encoding). */
export const list = <A, I>(schema: Schema.Schema<A, I>, tier: CacheTier | null, json?: JsonWriter<A>) => {
  const encode = json === undefined ? encoder(Schema.Array(schema)) : (rows: ReadonlyArray<A>) => `[${rows.map(json).join(",")}]`
  return <E, R>(compute: (info: RequestInfo) => Effect.Effect<Page<A>, E, R>, keyExtra = "") =>
    answer(
      tier,
      compute,
      (page) => ({ data: encode(page.rows), pagination: { limit: page.limit, offset: page.offset, total: page.total } }),
      keyExtra
    )
}
