/**
 * The indexer's side of `start`: which chain to index and following it, for both places that run
 * it: `start --only indexer` (the command line, `app.ts`) and the indexer child that the default
 * `start` spawns (`indexer-child.ts`, a bundle of its own). So this module imports nothing of the
 * APIs or of the devnet tooling; the one step that needs the devnet (running it, for `start
 * --only indexer` alone with CHAIN=devnet) is handed in by the caller.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { existsSync } from "node:fs"
import * as Path from "node:path"
import { healing } from "../pipeline/run.js"
import { makeRpc } from "../pipeline/source/rpc.js"
import type { Deployment } from "../schema/deployment.js"
import { ReplayChain } from "../tools/replay/chain.js"
import { serveReplay } from "../tools/replay/server.js"
import { followGenerations } from "./blue-green.js"
import { AppConfig, ConfigurationError } from "./config.js"
import { loadDeployment } from "./deployment.js"
import { FIXTURE_METADATA, seedDisplayMetadataFrom } from "./display-metadata.js"
import { FIXTURE_RECORDING } from "./fixture-recording.js"

/** `indexed_deployment.source` of an index of the live devnet, and of the fixture replay (the same chain's first blocks). */
export const LIVE_SOURCE = "live devnet"
export const FIXTURE_SOURCE = "committed fixture"

/** Set by the parent in its indexer child's environment: the RPC_URL it is given is the live devnet. */
export const LIVE_DEVNET_ENV = "PREDIX_LIVE_DEVNET"

/** Checks the deployment file when one is named, before anything starts. */
export const checkDeployment = Effect.flatMap(AppConfig, (config) =>
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
export const follow = <E = never, R = never>(
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
export const seedFixtureMetadata = seedDisplayMetadataFrom(FIXTURE_METADATA)

/**
 * Follows the chain at RPC_URL when one is configured (the live devnet's, when the parent runs
 * one); otherwise `devnet` (CHAIN=devnet: the caller runs the live devnet and indexes it) or the
 * committed fixture, replayed locally (CHAIN=fixture).
 */
export const indexChain = <A, E, R>(deployment: Option.Option<Deployment>, devnet: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (Option.isSome(config.rpcUrl) && Option.isSome(deployment)) {
      return yield* process.env[LIVE_DEVNET_ENV] === "1"
        ? follow(config.rpcUrl.value, deployment.value, LIVE_SOURCE, seedFixtureMetadata)
        : follow(config.rpcUrl.value, deployment.value, "RPC_URL")
    }
    if (config.chain === "devnet") return yield* devnet
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
