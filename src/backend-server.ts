/** The backend API served on HOST:BACKEND_PORT, for this process's configuration (see http/backend/api.ts), with the WebSocket stream at /ws/realtime on the same server (http/ws/server.ts). */
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { createServer } from "node:http"
import { backendHttpLayer } from "../http/backend/api.js"
import { IndexerEndpoint, listening } from "../http/indexer/api.js"
import { realtimeLayer } from "../http/ws/server.js"
import { NoSessions } from "../http/ws/sessions.js"
import { BuildInfoLive } from "./build-info.js"
import { AppConfig } from "./config.js"

export const BackendServerLive = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const { url } = yield* IndexerEndpoint
    const server = createServer()
    return Layer.mergeAll(
      backendHttpLayer({ chainId: config.chainId, indexerUrl: url }),
      Layer.effectDiscard(listening("backend")),
      realtimeLayer(server, { chainId: config.chainId })
    ).pipe(
      Layer.provide(NodeHttpServer.layer(() => server, { port: config.backendPort, host: config.host })),
      Layer.provide([BuildInfoLive, NoSessions])
    )
  })
)
