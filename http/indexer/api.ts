/**
 * The indexer's public, read-only HTTP API: the server layer over the definition
 * (`definition.ts`, shared with the typed client the backend uses) and the handlers
 * (`handlers/*.ts`, one module per resource group).
 *
 * Every response goes through one middleware: the freshness headers (`freshness.ts`), the
 * error bodies (`request-errors.ts`) and the per-head answer cache (`response-cache.ts`).
 * OpenAPI 3.1 is served at /api/openapi.json and a browsable page (Scalar, its script inlined:
 * no CDN needed) at /api/docs.
 */
import { HttpApiBuilder, HttpApiScalar, HttpRouter, HttpServer } from "@effect/platform"
import type { HttpApp } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Layer } from "effect"
import { createServer } from "node:http"
import { AppConfig } from "../../src/config.js"
import { IndexerApi } from "./definition.js"
import { FreshnessLive, withFreshness } from "./freshness.js"
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
import { renderErrors } from "./request-errors.js"
import { cachedUnder, HeadCache } from "./response-cache.js"

export { IndexerApi } from "./definition.js"
export { IndexedChain } from "./handlers/system.js"

export const IndexerApiLive = HttpApiBuilder.api(IndexerApi).pipe(Layer.provide([
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
]))

export interface IndexerHttpOptions {
  /** Answers kept per indexed head (see `response-cache.ts`); 0 turns the cache off. Default 10,000. */
  readonly cacheEntries?: number
}

/**
 * Freshness headers and error bodies on every response, unknown routes included; 200 answers
 * served from the per-head cache while the head stands.
 */
const indexerMiddleware = (cacheEntries: number) =>
  HttpApiBuilder.middleware(
    Effect.sync(() => {
      const cache = cacheEntries > 0 ? new HeadCache(cacheEntries, 1 << 20) : null
      return (app: HttpApp.Default) =>
        withFreshness(renderErrors(app), (head) => (cache === null ? (a) => a : cachedUnder(cache, head)))
    }),
    { withContext: true }
  )

/**
 * The indexer API served by whatever `HttpServer` is provided, reading the database of the
 * provided `SqlClient`/`PgClient` for chain `chainId`.
 */
export const indexerHttpLayer = (chainId: number, options: IndexerHttpOptions = {}) =>
  HttpApiBuilder.serve().pipe(
    // Paths match exactly as documented (case, slashes), and path parameters of any length reach
    // their decoders (a 400 naming them) instead of the router's 100-character limit turning
    // them into a NotFound. Node caps the request line at 16 KiB; no route has a regex parameter.
    Layer.provide(
      HttpRouter.setRouterConfig({ maxParamLength: 16_384, caseSensitive: true, ignoreTrailingSlash: false, ignoreDuplicateSlashes: false })
    ),
    Layer.provide(HttpApiScalar.layer({ path: "/api/docs" })),
    Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/api/openapi.json" })),
    Layer.provide(indexerMiddleware(options.cacheEntries ?? 10_000)),
    Layer.provide(IndexerApiLive),
    Layer.provide(Layer.succeed(IndexedChain, { chainId })),
    Layer.provide(FreshnessLive(chainId))
  )

/** Where this process's indexer API answers, once its server is listening. */
export class IndexerEndpoint extends Context.Tag("IndexerEndpoint")<IndexerEndpoint, { readonly url: string }>() {}

/** Logs where a server listens, with a stable `server` key, and returns its URL. */
export const listening = (server: string) =>
  HttpServer.addressFormattedWith((url) =>
    Effect.logInfo("listening").pipe(Effect.annotateLogs({ server, url }), Effect.as(url))
  )

/** The indexer API served on HOST:INDEXER_PORT (OpenAPI document at /api/openapi.json, docs at /api/docs). */
export const IndexerServerLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Layer.merge(indexerHttpLayer(config.chainId), Layer.effect(IndexerEndpoint, Effect.map(listening("indexer"), (url) => ({ url })))).pipe(
      Layer.provide(NodeHttpServer.layer(createServer, { port: config.indexerPort, host: config.host }))
    )
  )
)

