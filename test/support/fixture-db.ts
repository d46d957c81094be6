/**
 * A scratch database holding the index of the committed devnet fixture, played to its last head
 * (reorgs included), as `npm start` with no RPC_URL leaves it. Dropped with the scope.
 */
import { Effect, Logger, LogLevel, Redacted } from "effect"
import { makeIndexer } from "../../pipeline/run.js"
import { makeRpc } from "../../pipeline/source/rpc.js"
import { FIXTURE_RECORDING } from "../../src/app.js"
import { pgClientLayer } from "../../src/db/database.js"
import { runMigrations } from "../../src/db/migrations.js"
import { ReplayChain } from "../../src/replay/chain.js"
import { serveReplay } from "../../src/replay/server.js"
import { scratchDatabaseUrl } from "./postgres.js"

/** Migrates the database at `url` and indexes the whole fixture into it. */
export const indexFixtureInto = (url: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const chain = yield* Effect.promise(() => ReplayChain.load(FIXTURE_RECORDING))
      chain.advanceAll()
      const server = yield* Effect.acquireRelease(Effect.promise(() => serveReplay(chain)), (s) => Effect.promise(() => s.close()))
      const rpc = makeRpc({ url: server.url })
      yield* Effect.provide(
        Effect.gen(function* () {
          yield* runMigrations()
          const indexer = yield* makeIndexer({ rpc, deployment: chain.meta.deployment, chainId: 130 })
          yield* indexer.step(yield* indexer.loadWindow)
        }),
        pgClientLayer(Redacted.make(url))
      )
      return { headNumber: chain.headNumber, deployment: chain.meta.deployment }
    })
  ).pipe(Logger.withMinimumLogLevel(LogLevel.Warning))

/** A scratch database (external Postgres) with the fixture indexed into it; dropped with the scope. */
export const fixtureDatabaseUrl = Effect.gen(function* () {
  const url = yield* scratchDatabaseUrl
  const indexed = yield* indexFixtureInto(url)
  return { url, ...indexed }
})
