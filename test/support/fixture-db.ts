/**
 * A scratch database holding the index of the committed devnet fixture, played to its last head
 * (reorgs included), as `npm start` with no RPC_URL leaves it. Dropped with the scope.
 *
 * The fixture is indexed once per test run, by the code under test, into a template database
 * (named by global-setup.ts, built by the first file that asks while the others wait: see
 * template-db.ts); every caller gets its own copy of it (CREATE DATABASE ... TEMPLATE), so tests
 * that change their database still see nobody else's changes.
 */
import type { SqlClient } from "@effect/sql"
import { Effect, Logger, LogLevel, Redacted } from "effect"
import { inject } from "vitest"
import { makeIndexer } from "../../pipeline/run.js"
import { makeRpc } from "../../pipeline/source/rpc.js"
import { FIXTURE_RECORDING } from "../../src/fixture-recording.js"
import { pgClientLayer } from "../../src/db/database.js"
import { runMigrations } from "../../src/db/migrations.js"
import { ReplayChain } from "../../tools/replay/chain.js"
import { serveReplay } from "../../tools/replay/server.js"
import { EXTERNAL_URL, scratchDatabaseUrl } from "./postgres.js"
import { copyOfTemplate, databaseUrlOn } from "./template-db.js"

/** Migrates the database at `url` and indexes the whole fixture into it. */
export const indexFixtureInto = (url: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const chain = yield* Effect.promise(() => ReplayChain.load(FIXTURE_RECORDING))
      chain.advanceAll()
      const server = yield* Effect.acquireRelease(
        Effect.promise(() => serveReplay(chain)),
        (s) => Effect.promise(() => s.close())
      )
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

/**
 * A new database copied from the run's indexed fixture, which is built first if no file has
 * built it yet (template-db.ts: never a copy of half an index).
 */
const copyOfIndexedFixture = (template: string) => copyOfTemplate(EXTERNAL_URL, template, indexFixtureInto)

const providedTemplate = (): string | undefined => {
  try {
    return inject("fixtureTemplate")
  } catch {
    return undefined
  }
}

/** A scratch database (on the run's server) with the fixture indexed into it; dropped with the scope. */
export const fixtureDatabaseUrl = Effect.gen(function* () {
  const template = providedTemplate()
  if (template === undefined) {
    // Outside a vitest run (no global setup): index into a fresh database.
    const url = yield* scratchDatabaseUrl
    const indexed = yield* indexFixtureInto(url)
    return { url, ...indexed }
  }
  const url = databaseUrlOn(EXTERNAL_URL, yield* copyOfIndexedFixture(template))
  const chain = yield* Effect.promise(() => ReplayChain.load(FIXTURE_RECORDING))
  chain.advanceAll()
  return { url, headNumber: chain.headNumber, deployment: chain.meta.deployment }
})

/** `effect` run against a copy of the indexed fixture (`fixtureDatabaseUrl`), with the service's pool on it; dropped after. */
export const onFixtureDb = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.scoped(Effect.flatMap(fixtureDatabaseUrl, (db) => Effect.provide(effect, pgClientLayer(Redacted.make(db.url)))))
