/**
 * The backend API (view model for apps), served over the provided `SqlClient`/`PgClient`.
 *
 * Reads go straight to the indexed tables through the indexer's query modules, behind the
 * indexer circuit breaker (`breaker.ts` says why and how the indexer's health still counts), and
 * through the tiered answer cache keyed on the indexed head (`cache.ts`, `freshness.ts`). Every
 * request passes one middleware (`middleware.ts`: request id, error bodies) and, under /api, the
 * guard (`guard.ts`: CORS, cross-site writes, session, rate limits). OpenAPI 3.1 at
 * /api/openapi.json; the typed client is `client.ts`.
 */
import { FetchHttpClient, HttpApiBuilder, HttpRouter } from "@effect/platform"
import { Effect, Layer } from "effect"
import { FreshnessLive } from "../core/freshness.js"
import { routeBackendReads } from "../core/read-routing.js"
import { IndexerEndpoint } from "../core/indexer-health.js"
import { AaLive } from "./aa/handlers.js"
import { AaServiceLive } from "./aa/service.js"
import type { AaOptions } from "./aa/config.js"
import { AdminLive, AuthLive, SessionMiddlewareLive } from "./auth/handlers.js"
import { IndexerBreakerLive } from "./edge/breaker.js"
import { BackendCacheLive, DEFAULT_BACKEND_CACHE_BYTES } from "./edge/cache.js"
import { BackendApi } from "./definition.js"
import { EventsLive, MarketsLive } from "./markets/handlers.js"
import { canonicalTarget, checkedRequest } from "./edge/front-door.js"
import { makeGuard } from "./edge/guard.js"
import { backendMiddleware } from "./edge/middleware.js"
import { PricingLive } from "./pricing/handlers.js"
import { RewardsLive } from "./rewards/handlers.js"
import { RewardsSettingsLive } from "./rewards/service.js"
import { RateLimitsLive, SPEC_RATE_LIMITS, type RateLimitOptions } from "./edge/rate-limit.js"
import { SessionsLive, type AuthOptions } from "./auth/sessions.js"
import { TradingLive } from "./trading/handlers.js"
import { ChainReaderLive } from "./pricing/chain-reader.js"
import { FaucetLive } from "./faucet/handlers.js"
import { FaucetServiceLive, type FaucetOptions } from "./faucet/service.js"
import { systemHandlers } from "./system/handlers.js"
import { CommentsLive } from "./community/comments-handlers.js"
import { CommentSettingsLive, type CommentOptions } from "./community/comments-service.js"
import { NotificationsLive } from "./community/notifications-handlers.js"

export { BackendApi } from "./definition.js"

const SystemLive = HttpApiBuilder.group(BackendApi, "system", (handlers) =>
  Effect.gen(function* () {
    const { url } = yield* IndexerEndpoint
    const system = systemHandlers(url)
    return handlers
      .handle("health", () => system.health)
      .handle("ready", () => system.ready)
      .handle("version", () => system.version)
  })
)

export const BackendApiLive = HttpApiBuilder.api(BackendApi).pipe(
  Layer.provide([
    SystemLive,
    MarketsLive,
    EventsLive,
    PricingLive,
    TradingLive,
    AuthLive,
    AdminLive,
    FaucetLive,
    CommentsLive,
    NotificationsLive,
    RewardsLive,
    AaLive
  ]),
  Layer.provide(SessionMiddlewareLive)
)

export interface BackendOptions {
  readonly chainId: number
  /** The indexer's base URL: its health feeds the breaker. */
  readonly indexerUrl: string
  /** Bytes of cached answers and their keys (see `cache.ts`); 0 turns the cache off. Default 64 MiB. */
  readonly cacheBytes?: number
  /** Consecutive failures that open the breaker (default 3), how long it stays open (default 5 s), probe period (default 1 s). */
  readonly breakerThreshold?: number
  readonly breakerOpenForMs?: number
  readonly probeEveryMs?: number
  /** Sign-in: public URL (SIWE domain and URI, cookie Secure flag), RPC for smart-account signatures, admins, CORS origins. Default: http://localhost:3000 on `chainId`, no RPC. */
  readonly auth?: Omit<AuthOptions, "chainId">
  /** Rate limits and their store; default the spec's limits, counted in-process. */
  readonly rateLimits?: RateLimitOptions
  /** The chain's JSON-RPC endpoint for what the index does not hold (USDC balances of quote addresses); without it a buy quote with `address` is VALIDATION_FAILED on that field. */
  readonly chainRpcUrl?: string | undefined
  /** The faucet's chain and key; without it POST /api/faucet answers 503 (not configured). */
  readonly faucet?: FaucetOptions | undefined
  /** Comment cooldown, daily cap and edit window; default 30 s, 50 per UTC day, 15 min. */
  readonly comments?: Partial<CommentOptions>
  /** Resolved markets with a call needed for leaderboard accuracy (default 5). */
  readonly leaderboardMinResolved?: number | undefined
  /** Account abstraction (passkey / ECDSA smart accounts, bundler proxy, paymaster); without it /api/aa answers 503. */
  readonly aa?: AaOptions | undefined
}

/** The backend served by whatever `HttpServer` is provided; needs `SqlClient`, `PgClient` and `BuildInfo` (`build-info.ts`). */
export const backendHttpLayer = (options: BackendOptions) =>
  HttpApiBuilder.serve().pipe(
    // Parameters of any length reach their parsers (a 400 naming them), not the router's limit.
    Layer.provide(
      HttpRouter.setRouterConfig({ maxParamLength: 16_384, caseSensitive: true, ignoreTrailingSlash: false, ignoreDuplicateSlashes: false })
    ),
    Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/api/openapi.json" })),
    // Request id and error bodies outermost, the canonical target (front-door.ts), then CORS, cross-site
    // writes, session, rate limits (guard.ts), then parameters and body checked and the answer key set.
    Layer.provide(
      HttpApiBuilder.middleware(
        Effect.map(makeGuard, (guard) => (app) => backendMiddleware(canonicalTarget(guard(checkedRequest(routeBackendReads(app))))))
      )
    ),
    Layer.provide(BackendApiLive),
    // The cache stays in the output, so whoever runs the layer (a test) can see what it holds.
    Layer.provideMerge(BackendCacheLive(options.cacheBytes ?? DEFAULT_BACKEND_CACHE_BYTES)),
    Layer.provide([
      FreshnessLive(options.chainId),
      IndexerBreakerLive({
        indexerUrl: options.indexerUrl,
        threshold: options.breakerThreshold ?? 3,
        openForMs: options.breakerOpenForMs ?? 5_000,
        probeEveryMs: options.probeEveryMs ?? 1_000
      }),
      Layer.succeed(IndexerEndpoint, { url: options.indexerUrl })
    ]),
    Layer.provide(RateLimitsLive(options.rateLimits ?? SPEC_RATE_LIMITS)),
    Layer.provide(FaucetServiceLive(options.faucet)),
    Layer.provide(CommentSettingsLive(options.comments)),
    Layer.provide(RewardsSettingsLive({ minResolved: options.leaderboardMinResolved })),
    Layer.provide(AaServiceLive(options.aa)),
    Layer.provide(
      ChainReaderLive(options.chainRpcUrl === undefined ? undefined : { rpcUrl: options.chainRpcUrl, chainId: options.chainId })
    ),
    Layer.provide(SessionsLive({ publicUrl: "http://localhost:3000", ...options.auth, chainId: options.chainId })),
    Layer.provide(FetchHttpClient.layer)
  )
