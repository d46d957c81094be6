/** What the API benchmarks share: a scratch database indexed from a recording, and latency text. */
import { Effect, Logger, LogLevel, Redacted } from "effect"
import { makeIndexer } from "../pipeline/run.js"
import { makeRpc } from "../pipeline/source/rpc.js"
import { pgClientLayer } from "../src/db/database.js"
import { runMigrations } from "../src/db/migrations.js"
import { seedDisplayMetadataFrom } from "../src/display-metadata.js"
import { ReplayChain } from "../tools/replay/chain.js"
import { serveReplay } from "../tools/replay/server.js"

/** Migrates the database at `url`, indexes the whole recording (reorgs included), seeds display metadata; the head block. */
export async function indexRecording(url: string, recording: string): Promise<number> {
  const chain = await ReplayChain.load(recording)
  chain.advanceAll()
  const replay = await serveReplay(chain)
  try {
    await Effect.runPromise(
      Effect.gen(function* () {
        yield* runMigrations()
        const indexer = yield* makeIndexer({ rpc: makeRpc({ url: replay.url }), deployment: chain.meta.deployment, chainId: 130 })
        yield* indexer.step(yield* indexer.loadWindow)
        yield* seedDisplayMetadataFrom()
      }).pipe(Effect.provide(pgClientLayer(Redacted.make(url))), Logger.withMinimumLogLevel(LogLevel.Warning))
    )
  } finally {
    await replay.close()
  }
  return chain.headNumber
}

/** A latency in milliseconds, two decimals below 10 ms. */
export const ms = (value: number) => `${value.toFixed(value < 10 ? 2 : 1)} ms`
