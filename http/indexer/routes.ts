/**
 * The indexer API's endpoints as a table read from its definition, matched against a parsed
 * request target (`request-target.ts`), with their path and query parameters decoded by the
 * endpoint's own schemas.
 *
 * What it gives:
 * - `matchRequest`: the endpoint a target names, or none; a path parameter never matches an
 *   empty segment (`/api/markets/` names no market), and a literal segment beats a parameter, as
 *   in the router;
 * - `decodeRequest`: the endpoint's parameters decoded exactly as HttpApi decodes them (the same
 *   schemas; repeated parameters as arrays), into a record with no prototype, so `__proto__` is
 *   an unknown parameter like any other;
 * - `answerKey`: for a request that decodes, the decoded parameters encoded back by the same
 *   schemas, in canonical order with defaults applied. Two requests with the same key have the
 *   same answer under a given head (handlers read nothing else), and every spelling of a
 *   request (percent-encoding, parameter order, address case, decimal or hex market id, a
 *   default written out or left out) has the same key.
 */
import type { HttpApiEndpoint } from "@effect/platform"
import { Either, Option, ParseResult, Schema } from "effect"
import { IndexerApi } from "./definition.js"
import type { RequestTarget } from "./request-target.js"

interface Route {
  readonly name: string
  readonly template: string
  /** Literal segments, or `{ param }` for a path parameter. */
  readonly parts: ReadonlyArray<string | { readonly param: string }>
  readonly pathSchema: Option.Option<Schema.Schema<any, any>>
  readonly querySchema: Option.Option<Schema.Schema<any, any>>
}

/** Endpoints whose answers depend on more than the indexed data (see `response-cache.ts`). */
const UNCACHED = new Set(["/api/health", "/api/markets/:id/price-delta", "/api/markets/:id/volume-window"])

const ROUTES: ReadonlyArray<Route> = Object.values(IndexerApi.groups).flatMap((group) =>
  Object.values(group.endpoints as unknown as Record<string, HttpApiEndpoint.HttpApiEndpoint.AnyWithProps>)
    .filter((endpoint) => endpoint.method === "GET")
    .map((endpoint) => ({
      name: `${group.identifier}.${endpoint.name}`,
      template: endpoint.path,
      parts: endpoint.path
        .slice(1)
        .split("/")
        .map((part) => (part.startsWith(":") ? { param: part.slice(1) } : part)),
      pathSchema: endpoint.pathSchema as Option.Option<Schema.Schema<any, any>>,
      querySchema: endpoint.urlParamsSchema as Option.Option<Schema.Schema<any, any>>
    }))
)

export interface MatchedRequest {
  readonly route: Route
  readonly params: Readonly<Record<string, string>>
}

/** The endpoint `target` names, with its raw (decoded) path parameters. */
export const matchRequest = (target: RequestTarget): MatchedRequest | undefined => {
  let best: MatchedRequest | undefined
  let bestRank = ""
  for (const route of ROUTES) {
    if (route.parts.length !== target.segments.length) continue
    const params: Record<string, string> = {}
    let rank = ""
    let matches = true
    for (let i = 0; i < route.parts.length && matches; i++) {
      const part = route.parts[i]!
      const segment = target.segments[i]!
      if (typeof part === "string") {
        matches = part === segment
        rank += "1"
      } else {
        matches = segment !== ""
        params[part.param] = segment
        rank += "0"
      }
    }
    if (matches && (best === undefined || rank > bestRank)) {
      best = { route, params }
      bestRank = rank
    }
  }
  return best
}

/** The query as HttpApi hands it to the schema: one string per name, several as an array. */
const queryRecord = (query: RequestTarget["query"]): Record<string, string | Array<string>> => {
  const record: Record<string, string | Array<string>> = Object.create(null)
  for (const [key, value] of query) {
    const held = record[key]
    const next = held === undefined ? value : Array.isArray(held) ? [...held, value] : [held, value]
    Object.defineProperty(record, key, { value: next, enumerable: true, writable: true, configurable: true })
  }
  return record
}

export interface DecodedRequest {
  readonly path: unknown
  readonly query: unknown
}

/** Decodes the matched endpoint's parameters (path first, as HttpApi does). */
export const decodeRequest = (matched: MatchedRequest, target: RequestTarget): Either.Either<DecodedRequest, ParseResult.ParseError> =>
  Either.gen(function* () {
    const path = Option.isSome(matched.route.pathSchema)
      ? yield* Schema.decodeUnknownEither(matched.route.pathSchema.value)(matched.params)
      : undefined
    const query = Option.isSome(matched.route.querySchema)
      ? yield* Schema.decodeUnknownEither(matched.route.querySchema.value)(queryRecord(target.query))
      : undefined
    return { path, query }
  })

const canonical = (schema: Option.Option<Schema.Schema<any, any>>, value: unknown): string => {
  if (Option.isNone(schema)) return ""
  const encoded = Schema.encodeSync(schema.value)(value) as Record<string, unknown>
  return JSON.stringify(
    Object.keys(encoded)
      .sort()
      .map((key) => [key, encoded[key]])
  )
}

/** The answer-cache key of a decoded request; undefined for endpoints whose answers are not cached. */
export const answerKey = (matched: MatchedRequest, decoded: DecodedRequest): string | undefined =>
  UNCACHED.has(matched.route.template)
    ? undefined
    : `${matched.route.template} ${canonical(matched.route.pathSchema, decoded.path)} ${canonical(matched.route.querySchema, decoded.query)}`

/** The answer-cache key of a target in one call (the Node-level fast path's lookup). */
export const answerKeyOf = (target: RequestTarget): string | undefined => {
  const matched = matchRequest(target)
  if (matched === undefined) return undefined
  const decoded = decodeRequest(matched, target)
  return Either.isRight(decoded) ? answerKey(matched, decoded.right) : undefined
}
