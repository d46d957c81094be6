/** The backend API served on HOST:BACKEND_PORT, for this process's configuration (see http/backend/api.ts), with the WebSocket stream at /ws/realtime on the same server (http/ws/server.ts). */
import { Effect, Layer, Option } from "effect"
import { backendHttpLayer } from "../http/backend/api.js"
import { NotificationConsumerLive } from "../http/backend/community/notification-consumer.js"
import { IndexerEndpoint, listening } from "../http/indexer/api.js"
import { httpServerWithRealtime } from "../http/ws/server.js"
import { SessionsRealtime } from "../http/ws/sessions.js"
import { BuildInfoLive } from "./build-info.js"
import { AppConfig } from "./config.js"
import { namingListenFailure } from "./listen-error.js"
import type { AaOptions } from "../http/backend/aa/config.js"
import { LIVE_STATE } from "../tools/devnet/live.js"
import { readManifest } from "../tools/devnet/live-state.js"
import { AaSetup, FaucetSetup } from "./live-chain.js"

export const BackendServerLive = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const { url } = yield* IndexerEndpoint
    const faucet = yield* Effect.serviceOption(FaucetSetup)
    const aaSetup = yield* Effect.serviceOption(AaSetup)
    // AaSetup exists on the live devnet only, whose protocol contracts are the committed manifest's.
    const aa: AaOptions | undefined = Option.match(aaSetup, {
      onNone: () => undefined,
      onSome: (setup) => {
        const addresses = readManifest(LIVE_STATE).devnet.addresses
        return {
          rpcUrl: setup.rpcUrl,
          chainId: setup.chainId,
          entryPoint: setup.entryPoint,
          accountFactory: setup.smartAccountFactory,
          ecdsaAccountFactory: setup.simpleAccountFactory,
          paymaster: setup.paymaster,
          paymasterSignerKey: setup.paymasterSignerKey,
          bundlerUrl: setup.bundlerUrl,
          protocol: {
            router: addresses.router,
            diamond: addresses.diamond,
            exchange: addresses.exchange,
            usdc: addresses.testUsdc,
            permit2: addresses.permit2
          },
          caps: config.aaCaps,
          webauthn: {
            ...Option.match(config.webauthnRpId, { onNone: () => ({}), onSome: (rpId) => ({ rpId }) }),
            ...Option.match(config.webauthnOrigins, { onNone: () => ({}), onSome: (origins) => ({ origins }) })
          }
        }
      }
    })
    // The chain's RPC for what the index does not hold (quote balances, smart-account signatures):
    // RPC_URL, else the live devnet's (the faucet's chain), so on `npm start` both work as they do
    // against a real RPC_URL.
    const chainRpcUrl = Option.getOrUndefined(config.rpcUrl) ?? Option.getOrUndefined(faucet)?.rpcUrl ?? aa?.rpcUrl
    const auth = {
      publicUrl: config.publicUrl,
      chainId: config.chainId,
      rpcUrl: chainRpcUrl,
      adminAddresses: config.adminAddresses,
      corsOrigins: config.corsOrigins
    }
    const backend = backendHttpLayer({
      chainId: config.chainId,
      indexerUrl: url,
      auth,
      rateLimits: { ...config.rateLimits, redisUrl: Option.getOrUndefined(config.redisUrl), trustProxy: config.trustProxy },
      faucet: Option.getOrUndefined(faucet),
      comments: config.comments,
      leaderboardMinResolved: config.leaderboardMinResolved,
      aa,
      chainRpcUrl
    })
    // Every API instance runs the notification consumer; passes take turns (notification-consumer.ts).
    return Layer.mergeAll(
      backend,
      NotificationConsumerLive(config.chainId, { horizonBlocks: config.notificationHorizonBlocks }),
      Layer.effectDiscard(listening("backend"))
    ).pipe(
      Layer.provide(httpServerWithRealtime({ port: config.backendPort, host: config.host }, { chainId: config.chainId })),
      Layer.provide([BuildInfoLive, SessionsRealtime(auth)]),
      namingListenFailure({ setting: "BACKEND_PORT", host: config.host, port: config.backendPort })
    )
  })
)
