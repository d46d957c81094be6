/** The indexer API served on HOST:INDEXER_PORT for this process's configuration (OpenAPI document at /api/openapi.json, docs at /api/docs). */
import { Effect, Layer } from "effect"
import { IndexerEndpoint, indexerServerLayer, listening } from "../http/indexer/api.js"
import { AppConfig } from "./config.js"

export const IndexerServerLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Layer.effect(
      IndexerEndpoint,
      Effect.map(listening("indexer"), (url) => ({ url }))
    ).pipe(Layer.provide(indexerServerLayer(config.chainId, { port: config.indexerPort, host: config.host })))
  )
)
