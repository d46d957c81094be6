/**
 * The HTTP server of the indexer API, with cache hits answered at the Node level.
 *
 * A request whose answer is in the per-head cache (`response-cache.ts`) needs no routing,
 * decoding or database; going through the Effect HTTP pipeline would still cost it several
 * times what writing the stored bytes costs. So the Node `request` listener answers such a hit
 * itself and hands every other request to the Effect handler.
 *
 * Invariants:
 * - a hit is answered exactly as the Effect path answers it: status 200, the stored JSON body,
 *   `content-type: application/json`, the CORS header, and the freshness and health headers of the current
 *   head (the head the entry was stored under, which `HeadCache` checks);
 * - a request is a hit only when it is a GET whose answer key (its decoded, validated
 *   parameters, `routes.ts`) is cached under the current head; a raw URL seen before finds its
 *   key through the cache's aliases without decoding; everything else, errors included, goes
 *   through HttpApi unchanged.
 */
import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { ListenOptions } from "node:net"
import { CORS_HEADERS } from "./cors.js"
import { Freshness } from "../core/freshness.js"
import { headHeaders, healthHeaders } from "./freshness.js"
import { type HeaderJudgement, HealthWatch } from "./health-watch.js"
import { parseTarget } from "../core/request-target.js"
import { AnswerCache } from "./response-cache.js"
import { answerKeyOf } from "./routes.js"

/** Answers `request` from the cache if it is a hit; says whether it did. */
const answerHit =
  (
    latest: () => { readonly block: number; readonly hash: string } | null,
    judgement: () => HeaderJudgement,
    cache: AnswerCache["Type"]["cache"]
  ) =>
  (request: IncomingMessage, response: ServerResponse): boolean => {
    const url = request.url
    if (cache === null || url === undefined || request.method !== "GET") return false
    const head = latest()
    if (head === null) return false
    const alias = cache.aliasOf(head, url)
    const target = alias === undefined ? parseTarget(url) : undefined
    const key = alias ?? (target === undefined ? undefined : answerKeyOf(target))
    if (key === undefined) return false
    const body = cache.get(head, key)
    if (body === undefined) return false
    if (alias === undefined) cache.setAlias(head, url, key)
    response.writeHead(200, {
      "content-type": "application/json",
      "content-length": body.byteLength,
      ...CORS_HEADERS,
      ...headHeaders(head),
      ...healthHeaders(judgement())
    })
    response.end(body)
    return true
  }

/** An `HttpServer` (plus the Node platform services HttpApi needs) listening on `options`. */
export const cachedAnswerServer = (options: ListenOptions) =>
  Layer.merge(
    Layer.scoped(
      HttpServer.HttpServer,
      Effect.gen(function* () {
        const { cache } = yield* AnswerCache
        const freshness = yield* Freshness
        const watch = yield* HealthWatch
        let node: Server | undefined
        // The Node server's lifecycle (listen, close) is NodeHttpServer's; only `serve` differs.
        const inner = yield* NodeHttpServer.make(() => (node = createServer()), options)
        const hit = answerHit(freshness.latest, watch.latest, cache)
        return HttpServer.make({
          address: inner.address,
          serve: (app, middleware) =>
            Effect.gen(function* () {
              const handler = yield* middleware === undefined
                ? NodeHttpServer.makeHandler(app)
                : NodeHttpServer.makeHandler(app, middleware)
              const listener = (request: IncomingMessage, response: ServerResponse) => {
                if (!hit(request, response)) handler(request, response)
              }
              yield* Effect.addFinalizer(() => Effect.sync(() => node?.off("request", listener)))
              node?.on("request", listener)
            })
        })
      })
    ),
    NodeHttpServer.layerContext
  )
