/**
 * The indexer's public, read-only HTTP API: the server layer over the definition
 * (`definition.ts`, shared with the typed client the backend uses) and the handlers
 * (`handlers/*.ts`, one module per resource group).
 *
 * Every request goes through one middleware, the front door (`front-door.ts`): CORS, the parsed
 * target, its endpoint and decoded parameters, the freshness headers (`freshness.ts`), the error
 * bodies (`request-errors.ts`) and the per-head answer cache (`response-cache.ts`), whose hits
 * the Node listener answers before HttpApi (`fast-path.ts`).
 * OpenAPI 3.1 is served at /api/openapi.json and a browsable page (Scalar, its script inlined:
 * no CDN needed) at /api/docs.
 */
import { HttpApiBuilder, HttpApiScalar, HttpRouter, HttpServer } from "@effect/platform"
import type { HttpApp } from "@effect/platform"
import { Effect, Layer } from "effect"
import { IndexerApi } from "./definition.js"
import { FreshnessLive } from "../core/freshness.js"
import { unavailableResponse } from "./request-errors.js"
import { routeReads } from "../core/read-routing.js"
import { type HealthSettings, HealthWatchLive } from "./health-watch.js"
import { AdminLive } from "./handlers/admin.js"
import { EventsLive } from "./handlers/events.js"
import { ExchangeLive, TradeBreakdownLive } from "./handlers/exchange.js"
import { LiquidityLive } from "./handlers/liquidity.js"
import { MarketAmmLive } from "./handlers/market-amm.js"
import { MarketBookLive } from "./handlers/market-book.js"
import { MarketPricesLive } from "./handlers/market-prices.js"
import { MarketTradesLive } from "./handlers/market-trades.js"
import { MarketsLive } from "./handlers/markets.js"
import { OraclesLive } from "./handlers/oracles.js"
import { PortfolioLive } from "./handlers/portfolio.js"
import { HealthLive, IndexedChain, StatsLive } from "./handlers/system.js"
import { UserStatsLive, UsersLive } from "./handlers/users.js"
import { AnswerCache, AnswerCacheLive, DEFAULT_CACHE_BYTES } from "./response-cache.js"
import { cachedAnswerServer } from "./fast-path.js"
import { DOCUMENT_PATHS, frontDoor } from "./front-door.js"

export { IndexerApi } from "./definition.js"
export { IndexedChain } from "./handlers/system.js"
export { IndexerEndpoint } from "../core/indexer-health.js"

export const IndexerApiLive = HttpApiBuilder.api(IndexerApi).pipe(
  Layer.provide([
    HealthLive,
    StatsLive,
    MarketsLive,
    MarketTradesLive,
    MarketPricesLive,
    MarketBookLive,
    MarketAmmLive,
    EventsLive,
    PortfolioLive,
    UserStatsLive,
    UsersLive,
    ExchangeLive,
    TradeBreakdownLive,
    LiquidityLive,
    OraclesLive,
    AdminLive
  ])
)

/**
 * Every request through the front door (`front-door.ts`), unknown routes included, on a read
 * replica when there are any (`read-routing.ts`: the API only reads).
 */
const IndexerMiddleware = HttpApiBuilder.middleware(
  Effect.map(
    AnswerCache,
    ({ cache }) =>
      <E, R>(app: HttpApp.Default<E, R>) =>
        // The routing's refusal (an upgrade in progress) is answered here: it comes before the front door's error rendering.
        Effect.catchTag(routeReads(frontDoor(cache)(app)), "ServiceUnavailable", (error) =>
          Effect.succeed(unavailableResponse({ message: "message" in error ? String(error.message) : "service unavailable" }))
        )
  ),
  { withContext: true }
)

/**
 * The indexer API served by whatever `HttpServer` is provided, for chain `chainId`, over the
 * provided `SqlClient`, `Freshness`, `HealthWatch` and `AnswerCache`.
 */
export const indexerHttpLayer = (chainId: number) =>
  HttpApiBuilder.serve().pipe(
    // Paths match exactly as documented (case, slashes), and path parameters of any length reach
    // their decoders (a 400 naming them) instead of the router's 100-character limit turning
    // them into a NotFound. Node caps the request line at 16 KiB; no route has a regex parameter.
    Layer.provide(
      HttpRouter.setRouterConfig({ maxParamLength: 16_384, caseSensitive: true, ignoreTrailingSlash: false, ignoreDuplicateSlashes: false })
    ),
    Layer.provide(HttpApiScalar.layer({ path: DOCUMENT_PATHS.docs })),
    Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: DOCUMENT_PATHS.openApi })),
    Layer.provide(IndexerMiddleware),
    Layer.provide(IndexerApiLive),
    Layer.provide(Layer.succeed(IndexedChain, { chainId }))
  )

export interface IndexerServerOptions {
  readonly port: number
  readonly host: string
  /** Bytes of answers kept per indexed head (see `response-cache.ts`); 0 turns the cache off. Default 64 MiB. */
  readonly cacheBytes?: number
  /** What health judges stale (`health-watch.ts`); omitted, nothing is (a server over a finished index). */
  readonly health?: HealthSettings
}

/**
 * The indexer API listening on `port`/`host` (0: any free port), with its freshness follower and
 * answer cache; needs `SqlClient` and `PgClient`, gives the `HttpServer` (for its address) and the `AnswerCache`.
 */
export const indexerServerLayer = (chainId: number, options: IndexerServerOptions) =>
  indexerHttpLayer(chainId).pipe(
    Layer.provideMerge(cachedAnswerServer({ port: options.port, host: options.host })),
    // The cache stays in the output, for whoever wants to look at it (tests).
    Layer.provideMerge(
      Layer.mergeAll(
        FreshnessLive(chainId),
        HealthWatchLive(chainId, options.health),
        AnswerCacheLive(options.cacheBytes ?? DEFAULT_CACHE_BYTES)
      )
    )
  )

/** Logs where a server listens, with a stable `server` key, and returns its URL. */
export const listening = (server: string) =>
  HttpServer.addressFormattedWith((url) => Effect.logInfo("listening").pipe(Effect.annotateLogs({ server, url }), Effect.as(url)))
