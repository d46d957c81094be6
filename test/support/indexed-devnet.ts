/**
 * A live devnet indexed into a scratch database, for the tests that drive the chain and read what
 * the indexer made of it: anvil (mining each transaction at once), the protocol deployed on it,
 * a migrated database and an indexer the test steps (`index()`) whenever it wants the chain's
 * head in the database. Everything is released with the scope passed in.
 *
 * Invariants the tests rely on:
 * - every block stays unfinalized (confirmations far beyond any test's chain), so a reorg of any
 *   depth the test makes (`client.reorg(n)`) is undone by the indexer rather than refused;
 * - the indexer runs in this process (no backfill thread): a step has written and committed
 *   everything up to the head it saw when `index()` resolves;
 * - the database is the indexer's own scratch database (a copy of the run's migrated template) unless `databaseUrl` names another one
 *   (whose owner drops it); either way it is migrated.
 *
 * No vitest import here: bench/ws.ts builds its devnet with this too.
 */
import { Effect, Layer, Logger, LogLevel, ManagedRuntime, Redacted, Scope } from "effect"
import { maxUint256, type TransactionReceipt } from "viem"
import { makeIndexer } from "../../pipeline/run.js"
import { makeRpc } from "../../pipeline/source/rpc.js"
import { pgClientLayer } from "../../src/db/database.js"
import { runMigrations } from "../../src/db/migrations.js"
import { startAnvil, type Anvil } from "../../tools/devnet/anvil.js"
import { DevnetClient, type Address } from "../../tools/devnet/client.js"
import { compileContracts } from "../../tools/devnet/compile.js"
import { ADMIN, deployDevnet, type Devnet } from "../../tools/devnet/deploy.js"
import { migratedDatabaseUrl } from "./postgres.js"

/** Test USDC's raw unit per USDC (6 decimals). */
export const USDC = 1_000_000n

/** The chain id the indexer files the devnet's rows under (the devnet's own id). */
export const INDEXED_CHAIN_ID = 130

/**
 * The unfinalized depth the indexer keeps: anvil has no finalized tag, so the indexer counts
 * this many blocks back from the head, more than any test's chain holds.
 */
const CONFIRMATIONS = 1_000

const quiet = Logger.withMinimumLogLevel(LogLevel.Error)

export interface IndexedDevnet {
  readonly anvil: Anvil
  /** Sends and reads as the devnet's mnemonic accounts, with the compiled contracts' ABIs. */
  readonly client: DevnetClient
  readonly devnet: Devnet
  readonly databaseUrl: string
  /** A client layer on the database (a new pool wherever it is provided). */
  readonly database: ReturnType<typeof pgClientLayer>
  /** One pool on the database, the indexer's; tests may run their own queries on it. */
  readonly runtime: ManagedRuntime.ManagedRuntime<Layer.Layer.Success<ReturnType<typeof pgClientLayer>>, unknown>
  /** One indexer step: the chain's head (reorgs undone) is committed to the database when it resolves. */
  readonly index: () => Promise<void>
  /** A new indexer on the same database, starting from what it holds, as a restarted process would. */
  readonly restartIndexer: () => Promise<void>
  /** `client.send`: a call as account `from`; rejects with the revert reason if it reverts. */
  readonly send: (
    from: number,
    contract: string,
    address: Address,
    fn: string,
    args?: ReadonlyArray<unknown>
  ) => Promise<TransactionReceipt>
  /** Lets every protocol contract that pulls tokens (router, exchange, diamond, pool manager, factory) spend `user`'s `token`. */
  readonly approveAll: (user: number, token: Address) => Promise<void>
  /** Mints `usdc` raw test USDC to each user and approves it everywhere (`approveAll`), user by user. */
  readonly fund: (users: ReadonlyArray<number>, usdc: bigint) => Promise<void>
  /** Launches a market as the admin (seed = its pool's USDC, 0n for books only); its id. */
  readonly launch: (question: string, endTime: bigint, seed: bigint) => Promise<bigint>
}

export interface IndexedDevnetOptions {
  /** Index into this database instead of a new scratch one (it is migrated, never dropped here). */
  readonly databaseUrl?: string
}

/**
 * Starts anvil, deploys the protocol, migrates the database and makes the indexer; indexes
 * nothing yet (the first `index()` does). Anvil, the pool and a scratch database are released
 * with `scope`, in the reverse order of their start.
 */
export const withIndexedDevnet = async (scope: Scope.Scope, options: IndexedDevnetOptions = {}): Promise<IndexedDevnet> => {
  const anvil = await Effect.runPromise(
    Effect.acquireRelease(
      Effect.promise(() => startAnvil()),
      (node) => Effect.promise(() => node.stop())
    ).pipe(Scope.extend(scope))
  )
  const client = new DevnetClient(anvil.url, compileContracts())
  const devnet = await deployDevnet(client, { deployedVariants: false })
  // A copy of the run's migrated template (its migrations then find nothing to do), or a given database.
  const databaseUrl = options.databaseUrl ?? (await Effect.runPromise(Scope.extend(migratedDatabaseUrl, scope)))
  const database = pgClientLayer(Redacted.make(databaseUrl))
  const runtime = await Effect.runPromise(
    Effect.acquireRelease(
      Effect.sync(() => ManagedRuntime.make(database)),
      (r) => Effect.promise(() => r.dispose())
    ).pipe(Scope.extend(scope))
  )
  await runtime.runPromise(runMigrations().pipe(quiet))

  let index: () => Promise<void> = () => Promise.reject(new Error("no indexer yet"))
  const restartIndexer = async () => {
    const indexer = await runtime.runPromise(
      makeIndexer({
        rpc: makeRpc({ url: anvil.url }),
        deployment: devnet.deployment,
        chainId: INDEXED_CHAIN_ID,
        backfillThread: false,
        confirmations: CONFIRMATIONS
      }).pipe(quiet)
    )
    let window = await runtime.runPromise(indexer.loadWindow)
    index = async () => {
      window = await runtime.runPromise(indexer.step(window).pipe(quiet))
    }
  }
  await restartIndexer()

  const a = devnet.addresses
  const send = (from: number, contract: string, address: Address, fn: string, args: ReadonlyArray<unknown> = []) =>
    client.send(from, contract, address, fn, args)
  const approveAll = async (user: number, token: Address) => {
    for (const spender of [a.router, a.exchange, a.diamond, a.poolManager, a.marketFactory])
      await send(user, "TestUsdc", token, "approve", [spender, maxUint256])
  }
  return {
    anvil,
    client,
    devnet,
    databaseUrl,
    database,
    runtime,
    index: () => index(),
    restartIndexer,
    send,
    approveAll,
    fund: async (users, usdc) => {
      for (const user of users) {
        await send(ADMIN, "TestUsdc", a.testUsdc, "mint", [client.address(user), usdc])
        await approveAll(user, a.testUsdc)
      }
    },
    launch: async (question, endTime, seed) => {
      await send(ADMIN, "MarketFactory", a.marketFactory, "launch", [question, endTime, a.manualOracle, seed])
      return client.read<bigint>("MarketFacet", a.diamond, "marketCount")
    }
  }
}
