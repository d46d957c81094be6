/**
 * The backend API (view model for apps). It wraps the indexer through the indexer's typed
 * client; `INDEXER_URL` (or this process's own indexer) says where that is.
 */
import { FetchHttpClient, HttpApi, HttpApiBuilder } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { createServer } from "node:http"
import { AppConfig } from "../../src/config.js"
import { BuildInfo } from "../../src/build-info.js"
import { IndexerEndpoint, listening } from "../indexer/api.js"
import { SystemGroup, systemHandlers } from "./system.js"

export class BackendApi extends HttpApi.make("backend").add(SystemGroup) {}

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
  Layer.provide(SystemLive),
  Layer.provide([FetchHttpClient.layer, BuildInfo.layer])
)

/** The backend API served on HOST:BACKEND_PORT (OpenAPI 3.1 document at /api/openapi.json). */
export const BackendServerLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Layer.merge(
      HttpApiBuilder.serve().pipe(
        Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/api/openapi.json" })),
        Layer.provide(BackendApiLive)
      ),
      Layer.effectDiscard(listening("backend"))
    ).pipe(Layer.provide(NodeHttpServer.layer(createServer, { port: config.backendPort, host: config.host })))
  )
)
