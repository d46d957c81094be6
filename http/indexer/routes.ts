/**
 * The indexer API's route table (`http/core/route-table.ts`): its GET endpoints matched against a
 * parsed request target, their parameters decoded, and the answer-cache key of a request.
 */
import { Either } from "effect"
import type { RequestTarget } from "../core/request-target.js"
import { routeTable, type DecodedRequest, type MatchedRequest } from "../core/route-table.js"
import { IndexerApi } from "./definition.js"

export type { DecodedRequest, MatchedRequest } from "../core/route-table.js"

/** Endpoints whose answers depend on more than the indexed data (see `response-cache.ts`). */
const UNCACHED = new Set(["/api/health", "/api/markets/:id/price-delta", "/api/markets/:id/volume-window"])

const TABLE = routeTable(IndexerApi)

/** The GET endpoint `target` names, with its raw (decoded) path parameters. */
export const matchRequest = (target: RequestTarget): MatchedRequest | undefined => TABLE.match("GET", target)

/** Decodes the matched endpoint's parameters (path first, as HttpApi does). */
export const decodeRequest = TABLE.decode

/** The answer-cache key of a decoded request; undefined for endpoints whose answers are not cached. */
export const answerKey = (matched: MatchedRequest, decoded: DecodedRequest): string | undefined =>
  UNCACHED.has(matched.route.template) ? undefined : TABLE.key(matched, decoded)

/** The answer-cache key of a target in one call (the Node-level fast path's lookup). */
export const answerKeyOf = (target: RequestTarget): string | undefined => {
  const matched = matchRequest(target)
  if (matched === undefined) return undefined
  const decoded = decodeRequest(matched, target)
  return Either.isRight(decoded) ? answerKey(matched, decoded.right) : undefined
}
