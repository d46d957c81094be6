/**
 * Every indexer request passes here before HttpApi's router: CORS, the parsed target
 * (`request-target.ts`), the endpoint and its decoded parameters (`routes.ts`), the answer cache
 * (`response-cache.ts`), freshness headers (`freshness.ts`) and error bodies
 * (`request-errors.ts`).
 *
 * Invariants:
 * - the router is handed the canonical URL of the parsed target, so it routes what the cache is
 *   keyed on: an absolute-form `GET http://host/api/health` is the health endpoint, uncached;
 * - a GET to a path that names no endpoint (an empty segment where a parameter goes included) is
 *   a 404 `NotFound`, and a GET whose parameters the endpoint rejects is its 400, both before the
 *   router runs; the documents (`/api/openapi.json`, `/api/docs`) go straight to it;
 * - every answer carries the CORS headers; `OPTIONS` is a 204 preflight;
 * - `GET /metrics` is the Prometheus scrape (`metrics.ts`), not an endpoint of the API's
 *   definition: never cached, its body read from the database at each scrape.
 */
import { HttpServerError, HttpServerRequest } from "@effect/platform"
import type { HttpApp } from "@effect/platform"
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import type { SqlClient } from "@effect/sql"
import { Effect, Either } from "effect"
import { preflight, withCorsHeaders } from "./cors.js"
import { type IndexedHead, withFreshness } from "./freshness.js"
import { IndexedChain } from "./handlers/system.js"
import { METRICS_PATH, metricsAnswer } from "./metrics.js"
import { renderErrors } from "./request-errors.js"
import { parseTarget } from "../core/request-target.js"
import type { HeadCache } from "./response-cache.js"
import { cachedUnder } from "./response-cache.js"
import { answerKey, decodeRequest, matchRequest } from "./routes.js"

/** Paths HttpApi serves that are not endpoints of the definition. */
export const DOCUMENT_PATHS = { openApi: "/api/openapi.json", docs: "/api/docs" } as const
const DOCUMENTS = new Set<string>(Object.values(DOCUMENT_PATHS))

/**
 * One request: a preflight answered, the target parsed and handed to the router canonical, an
 * endpoint's GET checked (route, parameters) and served through the cache under `head`.
 */
const dispatch = <E, R>(
  router: HttpApp.Default<E, R>,
  cache: HeadCache | null,
  head: IndexedHead | null,
  request: HttpServerRequest.HttpServerRequest
): HttpApp.Default<E | HttpServerError.RouteNotFound | HttpApiDecodeError, R | IndexedChain | SqlClient.SqlClient> => {
  if (request.method === "OPTIONS") return Effect.succeed(preflight())
  const target = parseTarget(request.url)
  if (target === undefined) return router
  const routed = Effect.provideService(router, HttpServerRequest.HttpServerRequest, request.modify({ url: target.url }))
  const isRead = request.method === "GET" || request.method === "HEAD"
  const path = target.url.split("?")[0]!
  if (isRead && path === METRICS_PATH) return Effect.flatMap(IndexedChain, ({ chainId }) => metricsAnswer(chainId))
  if (!isRead || DOCUMENTS.has(path)) return routed
  const matched = matchRequest(target)
  if (matched === undefined) return Effect.fail(new HttpServerError.RouteNotFound({ request }))
  const decoded = decodeRequest(matched, target)
  if (Either.isLeft(decoded)) return HttpApiDecodeError.refailParseError(decoded.left)
  const key = answerKey(matched, decoded.right)
  return cache === null || head === null || key === undefined || request.method !== "GET"
    ? routed
    : cachedUnder(cache, head, key, request.url)(routed)
}

/** `app` (HttpApi's router) behind the front door, with `cache` (null: none). */
export const frontDoor =
  (cache: HeadCache | null) =>
  <E, R>(app: HttpApp.Default<E, R>) =>
    Effect.map(
      withFreshness(
        app,
        (head) => (router) =>
          renderErrors(Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => dispatch(router, cache, head, request)))
      ),
      withCorsHeaders
    )
