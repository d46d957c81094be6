/**
 * Entry of the indexer child that the default `start` runs (`indexer-process.ts`): the single
 * writer, against the DATABASE_URL its parent gives it, until its parent stops it.
 *
 * It is an entry of its own, compiled to a bundle of its own (`.build/indexer-child.mjs`), which
 * holds what indexing needs and none of the APIs, the command line or the devnet tooling: from
 * launch to a refused configuration (CHAIN_ID=abc) it takes 0.27-0.32 s of CPU, where `start
 * --only indexer` from the main bundle takes 0.86-0.99 s, at every start, on the cores the
 * backfill shares with the APIs and Postgres.
 *
 * Invariants (with `indexer-process.ts`):
 * - it waits for its parent's migrations before it touches the index (`awaitMigrations`: the
 *   parent migrates while this process starts), and waits out a database that is gone
 *   meanwhile like its other start-up steps (`patientPgClient`), rather than exit and take the
 *   service (which answers 503 until the database is back) down with it;
 * - it dies with its parent (`stopWithParent`);
 * - the chain comes from RPC_URL (the parent's live devnet, when it runs one) or is the committed
 *   fixture, replayed here; it never runs a devnet itself.
 */
import { Effect, Redacted } from "effect"
import { ConfigurationError, redactUrl } from "./config.js"
import { countedPgClient, databaseTarget, patientPgClient } from "./db/database.js"
import { awaitMigrations } from "./db/migrations.js"
import { checkDeployment, indexChain } from "./index-chain.js"
import { stopWithParent } from "./indexer-process.js"
import { withStartConfig } from "./job-config.js"
import { runCommand } from "./run-command.js"

/** CHAIN=devnet without RPC_URL: the parent runs the devnet and passes its RPC_URL, so this is a misuse. */
const noDevnet = Effect.fail(
  new ConfigurationError({
    message: "invalid configuration\nRPC_URL: the indexer process follows the chain its parent names (RPC_URL); it runs no devnet itself"
  })
)

const indexerChild = Effect.gen(function* () {
  yield* stopWithParent
  const deployment = yield* checkDeployment
  const target = yield* databaseTarget
  yield* Effect.logInfo("database").pipe(Effect.annotateLogs({ kind: target.kind, url: redactUrl(Redacted.value(target.url)) }))
  // Each process counts its Postgres work at the wire and logs it as it ends (`countedPgClient`).
  return yield* awaitMigrations().pipe(
    Effect.zipRight(indexChain(deployment, noDevnet)),
    Effect.provide(countedPgClient("indexer", (counters) => patientPgClient(target.url, counters)))
  )
}).pipe(Effect.scoped)

runCommand(withStartConfig("indexer")(indexerChild))
