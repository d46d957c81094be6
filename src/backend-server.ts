/** The backend API served on HOST:BACKEND_PORT, for this process's configuration (see http/backend/api.ts). */
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer, Option } from "effect"
import { createServer } from "node:http"
import { backendHttpLayer } from "../http/backend/api.js"
import { IndexerEndpoint, listening } from "../http/indexer/api.js"
import { BuildInfoLive } from "./build-info.js"
import { AppConfig } from "./config.js"
import { FaucetSetup } from "./live-chain.js"

export const BackendServerLive = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const { url } = yield* IndexerEndpoint
    const faucet = yield* Effect.serviceOption(FaucetSetup)
    const backend = backendHttpLayer({
      chainId: config.chainId,
      indexerUrl: url,
      auth: {
        publicUrl: config.publicUrl,
        rpcUrl: Option.getOrUndefined(config.rpcUrl),
        adminAddresses: config.adminAddresses,
        corsOrigins: config.corsOrigins
      },
      rateLimits: { ...config.rateLimits, redisUrl: Option.getOrUndefined(config.redisUrl), trustProxy: config.trustProxy },
      faucet: Option.getOrUndefined(faucet)
    })
    return Layer.merge(backend, Layer.effectDiscard(listening("backend"))).pipe(
      Layer.provide(NodeHttpServer.layer(createServer, { port: config.backendPort, host: config.host })),
      Layer.provide(BuildInfoLive)
    )
  })
)
