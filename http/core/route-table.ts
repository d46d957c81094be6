/**
 * An HttpApi's endpoints as a table read from its definition, matched against a parsed request
 * target (`request-target.ts`), with their path and query parameters decoded by the endpoint's
 * own schemas. The indexer (`http/indexer/routes.ts`) and the backend (`http/backend/edge/front-door.ts`)
 * each build one from their definition.
 *
 * What it gives:
 * - `match`: the endpoint a method and target name, or none; a path parameter never matches an
 *   empty segment (`/api/markets/` names no market), and a literal segment beats a parameter, as
 *   in the router;
 * - `decode`: the endpoint's parameters decoded exactly as HttpApi decodes them (the same schemas;
 *   repeated parameters as arrays), into a record with no prototype, so `__proto__` is an unknown
 *   parameter like any other;
 * - `key`: for a request that decodes, the decoded parameters encoded back by the same schemas,
 *   in canonical order with defaults applied. Two requests with the same key have the same answer
 *   under a given head (handlers read nothing else from the target), and every spelling of a
 *   request (percent-encoding, parameter order, a default written out or left out, and whatever
 *   the schemas normalise: address case, decimal or hex market id) has the same key.
 */
import type { HttpApi, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Either, Option, ParseResult, Schema } from "effect"
import type { RequestTarget } from "./request-target.js"

export interface Route {
  readonly name: string
  readonly method: string
  readonly template: string
  /** Literal segments, or `{ param }` for a path parameter. */
  readonly parts: ReadonlyArray<string | { readonly param: string }>
  readonly pathSchema: Option.Option<Schema.Schema<any, any>>
  readonly querySchema: Option.Option<Schema.Schema<any, any>>
  /** Whether the endpoint reads a body. */
  readonly hasPayload: boolean
}

export interface MatchedRequest {
  readonly route: Route
  readonly params: Readonly<Record<string, string>>
}

export interface DecodedRequest {
  readonly path: unknown
  readonly query: unknown
}

export interface RouteTable {
  readonly routes: ReadonlyArray<Route>
  readonly match: (method: string, target: RequestTarget) => MatchedRequest | undefined
  readonly decode: (matched: MatchedRequest, target: RequestTarget) => Either.Either<DecodedRequest, ParseResult.ParseError>
  readonly key: (matched: MatchedRequest, decoded: DecodedRequest) => string
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

const canonical = (schema: Option.Option<Schema.Schema<any, any>>, value: unknown): string => {
  if (Option.isNone(schema)) return ""
  const encoded = Schema.encodeSync(schema.value)(value) as Record<string, unknown>
  return JSON.stringify(
    Object.keys(encoded)
      .sort()
      .map((key) => [key, encoded[key]])
  )
}

/** The route table of `api`'s endpoints (all methods; HEAD is matched as GET). */
export const routeTable = (api: HttpApi.HttpApi.Any): RouteTable => {
  const groups = (api as unknown as { readonly groups: Record<string, HttpApiGroup.HttpApiGroup.AnyWithProps> }).groups
  const routes: ReadonlyArray<Route> = Object.values(groups).flatMap((group) =>
    Object.values(group.endpoints as unknown as Record<string, HttpApiEndpoint.HttpApiEndpoint.AnyWithProps>).map((endpoint) => ({
      name: `${group.identifier}.${endpoint.name}`,
      method: endpoint.method,
      template: endpoint.path,
      parts: endpoint.path
        .slice(1)
        .split("/")
        .map((part) => (part.startsWith(":") ? { param: part.slice(1) } : part)),
      pathSchema: endpoint.pathSchema as Option.Option<Schema.Schema<any, any>>,
      querySchema: endpoint.urlParamsSchema as Option.Option<Schema.Schema<any, any>>,
      hasPayload: Option.isSome(endpoint.payloadSchema)
    }))
  )

  const match = (method: string, target: RequestTarget): MatchedRequest | undefined => {
    const wanted = method === "HEAD" ? "GET" : method
    let best: MatchedRequest | undefined
    let bestRank = ""
    for (const route of routes) {
      if (route.method !== wanted || route.parts.length !== target.segments.length) continue
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

  // Path first, as HttpApi decodes.
  const decode = (matched: MatchedRequest, target: RequestTarget): Either.Either<DecodedRequest, ParseResult.ParseError> =>
    Either.gen(function* () {
      const path = Option.isSome(matched.route.pathSchema)
        ? yield* Schema.decodeUnknownEither(matched.route.pathSchema.value)(matched.params)
        : undefined
      const query = Option.isSome(matched.route.querySchema)
        ? yield* Schema.decodeUnknownEither(matched.route.querySchema.value)(queryRecord(target.query))
        : undefined
      return { path, query }
    })

  const key = (matched: MatchedRequest, decoded: DecodedRequest): string =>
    `${matched.route.method} ${matched.route.template} ${canonical(matched.route.pathSchema, decoded.path)} ${canonical(matched.route.querySchema, decoded.query)}`

  return { routes, match, decode, key }
}
