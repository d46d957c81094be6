/** The backend API served on HOST:BACKEND_PORT, for this process's configuration (see http/backend/api.ts), with the WebSocket stream at /ws/realtime on the same server (http/ws/server.ts). */
import { Effect, Layer, Option } from "effect"
import { backendHttpLayer } from "../http/backend/api.js"
import { IndexerEndpoint, listening } from "../http/indexer/api.js"
import { httpServerWithRealtime } from "../http/ws/server.js"
import { SessionsRealtime } from "../http/ws/sessions.js"
import { BuildInfoLive } from "./build-info.js"
import { AppConfig } from "./config.js"
import { FaucetSetup } from "./live-chain.js"

export const BackendServerLive = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const { url } = yield* IndexerEndpoint
    const faucet = yield* Effect.serviceOption(FaucetSetup)
    const auth = {
      publicUrl: config.publicUrl,
      chainId: config.chainId,
      rpcUrl: Option.getOrUndefined(config.rpcUrl),
      adminAddresses: config.adminAddresses,
      corsOrigins: config.corsOrigins
    }
    const backend = backendHttpLayer({
      chainId: config.chainId,
      indexerUrl: url,
      auth,
      rateLimits: { ...config.rateLimits, redisUrl: Option.getOrUndefined(config.redisUrl), trustProxy: config.trustProxy },
      faucet: Option.getOrUndefined(faucet),
      // RPC_URL, else the live devnet's (the faucet's chain).
      chainRpcUrl: Option.getOrUndefined(config.rpcUrl) ?? Option.getOrUndefined(faucet)?.rpcUrl
    })
    return Layer.merge(backend, Layer.effectDiscard(listening("backend"))).pipe(
      Layer.provide(httpServerWithRealtime({ port: config.backendPort, host: config.host }, { chainId: config.chainId })),
      Layer.provide([BuildInfoLive, SessionsRealtime(auth)])
    )
  })
)
