/**
 * The jobs the command line runs, each an Effect over the configuration.
 *
 * `start` (the main job): database (embedded unless DATABASE_URL), migrations, then the indexer
 * and backend HTTP servers, and the indexer in a child process, until SIGINT/SIGTERM. Resources
 * are scoped: on a signal the servers stop accepting and the indexer process stops, then the pool
 * closes, then the embedded Postgres shuts down.
 */
import { SqlClient } from "@effect/sql"
import type { PgClient } from "@effect/sql-pg"
import { Context, Deferred, Duration, Effect, Layer, Logger, Option, Redacted } from "effect"
import { BackendServerLive } from "./backend-server.js"
import { IndexerEndpoint } from "../http/indexer/api.js"
import { IndexedHeadsLive } from "../http/core/indexed-heads.js"
import { HealthNode, IndexerServerLive } from "./indexer-server.js"
import { ReadReplicasLive } from "./db/read-replicas.js"
import { GenerationsLive } from "./db/generation-targets.js"
import { AppConfig, type AppConfigShape, ConfigurationError, loadConfig, redactUrl } from "./config.js"
import { countedPgClient, DatabaseLive, databaseTarget, patientPgClient, pgClientLayer } from "./db/database.js"
import { type IndexerProcessExited, runIndexerProcess, startedByParent, stopWithParent } from "./indexer-process.js"
import { awaitMigrations, type MigrationFailed, runMigrations } from "./db/migrations.js"
import { loadDeployment } from "./deployment.js"
import { FIXTURE_METADATA, seedDisplayMetadataFrom } from "./display-metadata.js"
import { FIXTURE_RECORDING } from "./fixture-recording.js"
import type { Deployment } from "../schema/deployment.js"
import { healing, HealingPauseCap } from "../pipeline/run.js"
import { followGenerations } from "./blue-green.js"
import { makeRpc } from "../pipeline/source/rpc.js"
import { ReplayChain } from "../tools/replay/chain.js"
import {
  AaSetup,
  devnetAa,
  devnetFaucet,
  FaucetSetup,
  FIXTURE_SOURCE,
  fitDatabaseToDevnet,
  LIVE_DEVNET_ENV,
  LIVE_SOURCE,
  liveDevnet,
  simulateMarket
} from "./live-chain.js"
import { serveReplay } from "../tools/replay/server.js"
import { existsSync } from "node:fs"
import * as Path from "node:path"
import { showDevnetAccounts } from "./screen/devnet-accounts.js"
import { withStartOutput } from "./screen/output.js"

/** Runs `job` with the configuration loaded, logging as LOG_LEVEL says (logfmt, stable keys). */
export const withConfig = <A, E, R>(job: Effect.Effect<A, E, R | AppConfig>) =>
  Effect.flatMap(loadConfig, (config: AppConfigShape) =>
    job.pipe(Effect.provideService(AppConfig, config), Logger.withMinimumLogLevel(config.logLevel))
  ).pipe(Effect.provide(Logger.logFmt))

/**
 * `withConfig` for `start`: on a terminal (LOG_FORMAT=auto) its records go to the start screen
 * instead of logfmt, and an indexer child's to its parent's screen (src/screen/output.ts).
 */
export const withStartConfig =
  (role: StartRole) =>
  <A, E, R>(job: Effect.Effect<A, E, R | AppConfig>) =>
    Effect.flatMap(loadConfig, (config: AppConfigShape) =>
      job.pipe(
        Effect.provideService(AppConfig, config),
        Effect.provideService(HealingPauseCap, Duration.millis(config.retryMaxMs)),
        Logger.withMinimumLogLevel(config.logLevel),
        withStartOutput(config, role)
      )
    )

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

/** Checks the deployment file when one is named, before anything starts. */
const checkDeployment = Effect.flatMap(AppConfig, (config) =>
  Option.match(config.deploymentPath, {
    onNone: () =>
      Option.isSome(config.rpcUrl)
        ? Effect.fail(
            new ConfigurationError({
              message: "invalid configuration\nDEPLOYMENT: required when RPC_URL is set (which contracts to index?)"
            })
          )
        : Effect.succeed(Option.none<Deployment>()),
    onSome: (path) =>
      loadDeployment(path, config.chainId).pipe(
        Effect.tap((deployment) =>
          Effect.logInfo("deployment").pipe(
            Effect.annotateLogs({ file: path, diamond: deployment.diamond, deploy_block: deployment.deployBlock })
          )
        ),
        Effect.map(Option.some)
      )
  })
)

export { FIXTURE_RECORDING }

/**
 * Claims the database for `deployment`, or refuses when it already holds another deployment's
 * index (switching from the fixture to a real RPC_URL on the same DATA_DIR, say): mixing two
 * chains' rows would corrupt both.
 */
const claimDatabase = (chainId: number, deployment: Deployment, source: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const diamond = deployment.diamond.toLowerCase()
    yield* sql`INSERT INTO indexed_deployment (chain_id, diamond, deploy_block, source)
      VALUES (${chainId}, ${diamond}, ${deployment.deployBlock}, ${source}) ON CONFLICT (chain_id) DO NOTHING`
    const rows = yield* sql<{ diamond: string; deployBlock: string; source: string }>`
      SELECT diamond, deploy_block::text AS "deployBlock", source FROM indexed_deployment WHERE chain_id = ${chainId}`
    const held = rows[0]
    if (held !== undefined && (held.diamond !== diamond || Number(held.deployBlock) !== deployment.deployBlock)) {
      return yield* new ConfigurationError({
        message: `invalid configuration\nDATABASE: it holds the index of chain ${chainId} deployment ${held.diamond} (from block ${held.deployBlock}, ${held.source}); this start indexes ${diamond} (from block ${deployment.deployBlock}). Use another DATA_DIR or DATABASE_URL for it.`
      })
    }
  })

/**
 * Indexes `rpc`'s finalized chain for `deployment`, following it until interrupted. `seed` runs
 * once the database is claimed for the deployment (display metadata that belongs to it).
 */
const follow = <E = never, R = never>(
  url: string,
  deployment: Deployment,
  source: string,
  seed: Effect.Effect<unknown, E, R> = Effect.void
) =>
  Effect.gen(function* () {
    const config = yield* AppConfig
    const rpc = makeRpc({ url })
    // Start-up steps wait out node and database outages like the indexing steps after them; only
    // a configuration error (another chain, another deployment's database) stops the process.
    const chainId = yield* healing("starting", rpc.chainId)
    if (chainId !== config.chainId) {
      return yield* new ConfigurationError({
        message: `invalid configuration\nRPC_URL: the endpoint serves chain ${chainId}, CHAIN_ID is ${config.chainId}`
      })
    }
    // Each generation of the index is claimed for the deployment (`indexed_deployment` is derived);
    // the seed (kept tables, an upsert) follows each claim.
    const prepare = healing("starting", claimDatabase(chainId, deployment, source), (error) => error instanceof ConfigurationError).pipe(
      Effect.zipRight(healing("starting", seed))
    )
    return yield* followGenerations({ rpc, deployment, chainId, prepare })
  })

/**
 * The committed devnet recording, replayed on a loopback port as a node would serve it (all
 * heads played, reorgs included), for `npm start` on a machine with no chain to talk to.
 */
const replayFixture = Effect.acquireRelease(
  Effect.promise(async () => {
    const chain = await ReplayChain.load(FIXTURE_RECORDING)
    chain.advanceAll()
    return serveReplay(chain)
  }),
  (server) => Effect.promise(() => server.close())
)

/** The fixture's display metadata (slug, category, featured, titles, icons), upserted: the live devnet's markets are the fixture's. */
const seedFixtureMetadata = seedDisplayMetadataFrom(FIXTURE_METADATA)

/**
 * Follows the chain at RPC_URL when one is configured (the live devnet's, when the parent runs
 * one); otherwise the live devnet (CHAIN=devnet, run here: `start --only indexer` alone) or the
 * committed fixture, replayed locally (CHAIN=fixture).
 */
const indexChain = (deployment: Option.Option<Deployment>) =>
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (Option.isSome(config.rpcUrl) && Option.isSome(deployment)) {
      return yield* process.env[LIVE_DEVNET_ENV] === "1"
        ? follow(config.rpcUrl.value, deployment.value, LIVE_SOURCE, seedFixtureMetadata)
        : follow(config.rpcUrl.value, deployment.value, "RPC_URL")
    }
    if (config.chain === "devnet") {
      const live = yield* liveDevnet
      yield* showDevnetAccounts(live.url, config.devnetActivity)
      yield* fitDatabaseToDevnet(live)
      return yield* Effect.all(
        [follow(live.url, live.manifest.devnet.deployment, LIVE_SOURCE, seedFixtureMetadata), simulateMarket(live)],
        { concurrency: "unbounded", discard: true }
      )
    }
    if (!existsSync(FIXTURE_RECORDING)) {
      yield* Effect.logInfo("no RPC_URL and no fixture recording: nothing to index; serving what the database holds")
      return yield* Effect.never
    }
    const server = yield* replayFixture
    yield* Effect.logInfo("no RPC_URL, CHAIN=fixture: indexing the committed devnet fixture").pipe(
      Effect.annotateLogs({ recording: Path.relative(process.cwd(), FIXTURE_RECORDING), replay_url: server.url })
    )
    // The fixture's display metadata (slug, category, featured, titles, icons), upserted.
    return yield* follow(server.url, server.chain.meta.deployment, FIXTURE_SOURCE, seedFixtureMetadata)
  }).pipe(Effect.scoped)

/** What one `start` runs: everything (the default), or one side of it (`start --only ...`). */
export type StartRole = "all" | "indexer" | "api"

/**
 * The main job: check the deployment, open the database (embedded unless DATABASE_URL), migrate,
 * then serve and index until interrupted.
 *
 * - `all` (the default): the APIs in this process and the indexer in a child process
 *   (`indexer-process.ts`), so request load can never starve indexing;
 * - `indexer`: the single writer alone (what that child runs);
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
          Effect.Effect.Error<ReturnType<typeof indexChain>> | Effect.Effect.Error<typeof serve> | IndexerProcessExited | MigrationFailed,
          AppConfig | SqlClient.SqlClient | PgClient.PgClient
        > =
          role === "indexer"
            ? Effect.zipRight(stopWithParent, indexChain(deployment))
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
        // The indexer child of `start` waits for its parent's migrations, and may find the database
        // gone meanwhile: it waits for it like its other start-up steps, rather than exit and take the
        // service (which answers 503 until the database is back) down with it. The parent of role
        // `all` migrates in its jobs (beside the child's start-up).
        // Each process counts its Postgres work at the wire and logs it as it ends (`countedPgClient`).
        return startedByParent() && role === "indexer"
          ? yield* awaitMigrations().pipe(
              Effect.zipRight(jobs),
              Effect.provide(countedPgClient("indexer", (counters) => patientPgClient(target.url, counters)))
            )
          : yield* (role === "all" ? jobs : runMigrations().pipe(Effect.zipRight(jobs))).pipe(
              Effect.provide(countedPgClient(role === "indexer" ? "indexer" : "api", (counters) => pgClientLayer(target.url, counters)))
            )
      })
    ),
    Effect.scoped
  )

/** Applies pending migrations and exits. */
export const migrate = runMigrations().pipe(Effect.asVoid, Effect.provide(DatabaseLive), Effect.scoped)
