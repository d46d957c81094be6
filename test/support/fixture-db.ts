/**
 * A scratch database holding the index of the committed devnet fixture, played to its last head
 * (reorgs included), as `npm start` with no RPC_URL leaves it. Dropped with the scope.
 *
 * The fixture is indexed once per test run, by the code under test, into a template database
 * (named by global-setup.ts, built by the first file that asks while the others wait on an
 * advisory lock); every caller gets its own copy of it (CREATE DATABASE ... TEMPLATE), so tests
 * that change their database still see nobody else's changes.
 */
import { Effect, Logger, LogLevel, Redacted } from "effect"
import pg from "pg"
import { inject } from "vitest"
import { makeIndexer } from "../../pipeline/run.js"
import { makeRpc } from "../../pipeline/source/rpc.js"
import { FIXTURE_RECORDING } from "../../src/app.js"
import { pgClientLayer } from "../../src/db/database.js"
import { runMigrations } from "../../src/db/migrations.js"
import { ReplayChain } from "../../tools/replay/chain.js"
import { serveReplay } from "../../tools/replay/server.js"
import { EXTERNAL_URL, scratchDatabaseUrl } from "./postgres.js"

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

const urlOf = (name: string) => {
  const url = new URL(EXTERNAL_URL)
  url.pathname = `/${name}`
  return url.toString()
}

const withAdmin = <A>(f: (client: pg.Client) => Promise<A>) =>
  Effect.promise(async () => {
    const client = new pg.Client({ connectionString: EXTERNAL_URL })
    await client.connect()
    try {
      return await f(client)
    } finally {
      await client.end()
    }
  })

/**
 * A new database copied from the run's indexed fixture, which is built first if no file has
 * built it yet (built under another name and renamed when complete, so a copy is never taken
 * of half an index).
 */
const copyOfIndexedFixture = (template: string) =>
  Effect.acquireRelease(
    Effect.gen(function* () {
      const lock = yield* Effect.acquireRelease(
        Effect.promise(async () => {
          const client = new pg.Client({ connectionString: EXTERNAL_URL })
          await client.connect()
          await client.query(`select pg_advisory_lock(hashtext($1))`, [template])
          return client
        }),
        (client) => Effect.promise(() => client.end())
      )
      const built = (yield* Effect.promise(() => lock.query(`select 1 from pg_database where datname = $1`, [template]))).rowCount === 1
      if (!built) {
        const build = `${template}_build`
        yield* Effect.promise(() => lock.query(`drop database if exists ${build} with (force)`))
        yield* Effect.promise(() => lock.query(`create database ${build}`))
        yield* indexFixtureInto(urlOf(build))
        // Its connections are closed with the indexer's scope; a template must have none.
        yield* Effect.promise(() => lock.query(`alter database ${build} rename to ${template}`))
      }
      const name = `predix_test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
      yield* Effect.promise(() => lock.query(`create database ${name} template ${template}`))
      return name
    }).pipe(Effect.scoped),
    (name) => withAdmin((client) => client.query(`drop database if exists ${name} with (force)`))
  )

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
  const url = urlOf(yield* copyOfIndexedFixture(template))
  const chain = yield* Effect.promise(() => ReplayChain.load(FIXTURE_RECORDING))
  chain.advanceAll()
  return { url, headNumber: chain.headNumber, deployment: chain.meta.deployment }
})
