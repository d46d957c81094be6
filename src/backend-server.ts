/** The backend API served on HOST:BACKEND_PORT, for this process's configuration (see http/backend/api.ts), with the WebSocket stream at /ws/realtime on the same server (http/ws/server.ts). */
import { Effect, Layer } from "effect"
import { backendHttpLayer } from "../http/backend/api.js"
import { IndexerEndpoint, listening } from "../http/indexer/api.js"
import { httpServerWithRealtime } from "../http/ws/server.js"
import { NoSessions } from "../http/ws/sessions.js"
import { BuildInfoLive } from "./build-info.js"
import { AppConfig } from "./config.js"

export const BackendServerLive = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const { url } = yield* IndexerEndpoint
    return Layer.merge(backendHttpLayer({ chainId: config.chainId, indexerUrl: url }), Layer.effectDiscard(listening("backend"))).pipe(
      Layer.provide(httpServerWithRealtime({ port: config.backendPort, host: config.host }, { chainId: config.chainId })),
      Layer.provide([BuildInfoLive, NoSessions])
    )
  })
)
