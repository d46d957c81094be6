/**
 * The indexer's public, read-only HTTP API: its definition (shared with the typed client the
 * backend uses) and the server layer.
 */
import { HttpApi, HttpApiBuilder, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Layer } from "effect"
import { createServer } from "node:http"
import { AppConfig } from "../../src/config.js"
import { HealthGroup, readHealth } from "./health.js"
import { readStats, StatsGroup } from "./stats.js"

export class IndexerApi extends HttpApi.make("indexer").add(HealthGroup).add(StatsGroup) {}

const HealthLive = HttpApiBuilder.group(IndexerApi, "health", (handlers) =>
  handlers.handle("health", () =>
    AppConfig.pipe(
      Effect.flatMap((config) => readHealth(config.chainId)),
      Effect.map((data) => ({ data, meta: null }))
    )
  )
)

const StatsLive = HttpApiBuilder.group(IndexerApi, "stats", (handlers) =>
  handlers.handle("stats", () => Effect.map(readStats, (data) => ({ data, meta: null })))
)

export const IndexerApiLive = HttpApiBuilder.api(IndexerApi).pipe(Layer.provide([HealthLive, StatsLive]))

/** Where this process's indexer API answers, once its server is listening. */
export class IndexerEndpoint extends Context.Tag("IndexerEndpoint")<IndexerEndpoint, { readonly url: string }>() {}

/** Logs where a server listens, with a stable `server` key, and returns its URL. */
export const listening = (server: string) =>
  HttpServer.addressFormattedWith((url) =>
    Effect.logInfo("listening").pipe(Effect.annotateLogs({ server, url }), Effect.as(url))
  )

/** The indexer API served on HOST:INDEXER_PORT (OpenAPI document at /api/openapi.json). */
export const IndexerServerLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Layer.merge(
      HttpApiBuilder.serve().pipe(
        Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/api/openapi.json" })),
        Layer.provide(IndexerApiLive)
      ),
      Layer.effect(IndexerEndpoint, Effect.map(listening("indexer"), (url) => ({ url })))
    ).pipe(Layer.provide(NodeHttpServer.layer(createServer, { port: config.indexerPort, host: config.host })))
  )
)
