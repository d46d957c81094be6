/**
 * The jobs the command line runs, each an Effect over the configuration.
 *
 * `start` (the main job): database (embedded unless DATABASE_URL), migrations, then the indexer
 * and backend HTTP servers, and the indexer in a child process, until SIGINT/SIGTERM. Resources
 * are scoped: on a signal the servers stop accepting and the indexer process stops, then the pool
 * closes, then the embedded Postgres shuts down.
 */
import type { SqlClient } from "@effect/sql"
import type { PgClient } from "@effect/sql-pg"
import { Context, Deferred, Effect, Layer, Option, Redacted } from "effect"
import { BackendServerLive } from "./backend-server.js"
import { IndexerEndpoint } from "../http/indexer/api.js"
import { IndexedHeadsLive } from "../http/core/indexed-heads.js"
import { HealthNode, IndexerServerLive } from "./indexer-server.js"
import { ReadReplicasLive } from "./db/read-replicas.js"
import { GenerationsLive } from "./db/generation-targets.js"
import { AppConfig, redactUrl } from "./config.js"
import { countedPgClient, DatabaseLive, databaseTarget, pgClientLayer } from "./db/database.js"
import { type IndexerProcessExited, runIndexerProcess } from "./indexer-process.js"
import { type MigrationFailed, runMigrations } from "./db/migrations.js"
import { FIXTURE_RECORDING } from "./fixture-recording.js"
import { checkDeployment, follow, indexChain, LIVE_DEVNET_ENV, LIVE_SOURCE, seedFixtureMetadata } from "./index-chain.js"
import type { StartRole } from "./job-config.js"
import { AaSetup, devnetAa, devnetFaucet, FaucetSetup, fitDatabaseToDevnet, liveDevnet, simulateMarket } from "./live-chain.js"
import { showDevnetAccounts } from "./screen/devnet-accounts.js"

/**
 * Serves the indexer and the backend until interrupted. Each server is launched as its own layer
 * graph: HttpApiBuilder keeps routes in a memoized router, so one graph would mount both APIs on
 * both ports. The backend learns the indexer's bound URL (INDEXER_PORT may be 0) from a Deferred.
 * Both graphs follow one source of indexed heads (one LISTEN connection for the process),
 * built here for as long as they serve.
 */
export const serve = Effect.gen(function* () {
  const config = yield* AppConfig
  const primaryHeads = Layer.succeedContext(yield* Layer.build(IndexedHeadsLive(config.chainId)))
  // Both APIs read the active generation of the index (`src/db/generation-targets.ts`), and with
  // read replicas they read it there (`src/db/read-replicas.ts`: one poll serves both), the
  // primary's generation serving when no replica is in rotation. The replicas' `ReadTargets`
  // replaces the primary's; the generation-following `SqlClient` stays.
  const generations = yield* Layer.build(GenerationsLive.pipe(Layer.provide(primaryHeads)))
  const targets =
    config.databaseReadUrls.length === 0
      ? generations
      : Context.merge(
          generations,
          yield* Layer.build(
            ReadReplicasLive({ chainId: config.chainId, urls: config.databaseReadUrls, maxLagBlocks: config.readMaxLagBlocks }).pipe(
              Layer.provide(Layer.succeedContext(generations))
            )
          )
        )
  const heads = Layer.merge(primaryHeads, Layer.succeedContext(targets))
  const indexerUrl = yield* Deferred.make<string>()
  const indexer = IndexerServerLive.pipe(
    Layer.provide(heads),
    Layer.flatMap((context) => Layer.effectDiscard(Deferred.succeed(indexerUrl, Context.get(context, IndexerEndpoint).url)))
  )
  const backend = BackendServerLive.pipe(
    Layer.provide(heads),
    Layer.provide(
      Layer.effect(
        IndexerEndpoint,
        Effect.map(Deferred.await(indexerUrl), (url) => ({ url }))
      )
    )
  )
  return yield* Effect.all([Layer.launch(indexer), Layer.launch(backend)], { concurrency: "unbounded", discard: true })
}).pipe(Effect.scoped)

/**
 * `start --only indexer` alone with CHAIN=devnet and no RPC_URL: this process runs the live
 * devnet, indexes it and trades on it.
 */
const indexLiveDevnet = Effect.gen(function* () {
  const config = yield* AppConfig
  const live = yield* liveDevnet
  yield* showDevnetAccounts(live.url, config.devnetActivity)
  yield* fitDatabaseToDevnet(live)
  return yield* Effect.all([follow(live.url, live.manifest.devnet.deployment, LIVE_SOURCE, seedFixtureMetadata), simulateMarket(live)], {
    concurrency: "unbounded",
    discard: true
  })
})

export { FIXTURE_RECORDING }

/**
 * The main job: check the deployment, open the database (embedded unless DATABASE_URL), migrate,
 * then serve and index until interrupted.
 *
 * - `all` (the default): the APIs in this process and the indexer in a child process
 *   (`indexer-process.ts`), so request load can never starve indexing;
 * - `indexer`: the single writer alone (as the child's own entry, `indexer-child.ts`, runs it);
 * - `api`: the APIs alone; any number of them may serve one database that one indexer writes.
 */
export const start = (role: StartRole = "all") =>
  checkDeployment.pipe(
    Effect.flatMap((deployment) =>
      Effect.gen(function* () {
        const target = yield* databaseTarget
        yield* Effect.logInfo("database").pipe(Effect.annotateLogs({ kind: target.kind, url: redactUrl(Redacted.value(target.url)) }))
        const jobs: Effect.Effect<
          void,
          | Effect.Effect.Error<ReturnType<typeof indexChain<void, Effect.Effect.Error<typeof indexLiveDevnet>, never>>>
          | Effect.Effect.Error<typeof serve>
          | IndexerProcessExited
          | MigrationFailed,
          AppConfig | SqlClient.SqlClient | PgClient.PgClient
        > =
          role === "indexer"
            ? indexChain(deployment, indexLiveDevnet)
            : role === "api"
              ? serve
              : Effect.gen(function* () {
                  const config = yield* AppConfig
                  if (Option.isSome(config.rpcUrl) || config.chain !== "devnet") {
                    // The child starts while this process migrates (it waits for the migrations
                    // before it touches the index), so its start-up overlaps them.
                    return yield* Effect.all([runMigrations().pipe(Effect.zipRight(serve)), runIndexerProcess(target.url)], {
                      concurrency: "unbounded",
                      discard: true
                    })
                  }
                  yield* runMigrations()
                  // The live devnet belongs to this process (it outlives the indexer child, which follows it).
                  const live = yield* liveDevnet
                  yield* showDevnetAccounts(live.url, config.devnetActivity)
                  yield* fitDatabaseToDevnet(live)
                  const childEnv = { RPC_URL: live.url, DEPLOYMENT: live.deploymentFile, [LIVE_DEVNET_ENV]: "1" }
                  const faucet = yield* devnetFaucet(live)
                  const aa = yield* devnetAa(live)
                  return yield* Effect.all(
                    [
                      serve.pipe(
                        Effect.provideService(FaucetSetup, faucet),
                        Effect.provideService(AaSetup, aa),
                        Effect.provideService(HealthNode, { rpcUrl: live.url })
                      ),
                      runIndexerProcess(target.url, childEnv),
                      simulateMarket(live)
                    ],
                    { concurrency: "unbounded", discard: true }
                  )
                }).pipe(Effect.scoped)
        // The parent of role `all` migrates in its jobs (beside the child's start-up). Each process
        // counts its Postgres work at the wire and logs it as it ends (`countedPgClient`).
        return yield* (role === "all" ? jobs : runMigrations().pipe(Effect.zipRight(jobs))).pipe(
          Effect.provide(countedPgClient(role === "indexer" ? "indexer" : "api", (counters) => pgClientLayer(target.url, counters)))
        )
      })
    ),
    Effect.scoped
  )

/** Applies pending migrations and exits. */
export const migrate = runMigrations().pipe(Effect.asVoid, Effect.provide(DatabaseLive), Effect.scoped)
