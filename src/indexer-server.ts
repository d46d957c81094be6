/** The indexer API served on HOST:INDEXER_PORT for this process's configuration (OpenAPI document at /api/openapi.json, docs at /api/docs). */
import { Context, Effect, Layer, Option } from "effect"
import { IndexerEndpoint, indexerServerLayer, listening } from "../http/indexer/api.js"
import { AppConfig } from "./config.js"
import { namingListenFailure } from "./listen-error.js"

/**
 * The node health compares the index with, when it is not RPC_URL: the live devnet this process
 * runs for its indexer child. Without either (the fixture, replayed inside the indexer process;
 * `--only api` on a devnet run elsewhere), health uses the head the indexer recorded.
 */
export class HealthNode extends Context.Tag("predix/HealthNode")<HealthNode, { readonly rpcUrl: string }>() {}

export const IndexerServerLive = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const node = yield* Effect.serviceOption(HealthNode)
    const rpcUrl = Option.getOrUndefined(Option.orElse(config.rpcUrl, () => Option.map(node, (n) => n.rpcUrl)))
    return Layer.effect(
      IndexerEndpoint,
      Effect.map(listening("indexer"), (url) => ({ url }))
    ).pipe(
      Layer.provide(
        indexerServerLayer(config.chainId, { port: config.indexerPort, host: config.host, health: { ...config.health, rpcUrl } })
      ),
      namingListenFailure({ setting: "INDEXER_PORT", host: config.host, port: config.indexerPort })
    )
  })
)
