/**
 * The default chain: with no RPC_URL (and CHAIN=devnet, the default) `start` owns a live local
 * anvil chain (`devnet/live.ts`) for its whole run, indexes it, and drives a seeded background
 * market on it (DEVNET_ACTIVITY).
 *
 * Invariant: the database never holds another chain's rows. Before anything indexes, the
 * highest block the database holds must be on this chain (same number, same hash); when it is
 * not (the chain was started afresh, or its state was lost ahead of the index), what the database
 * derived from the chain is reset, with a log line saying so, and the backend's own data (users,
 * sessions, comments, faucet claims...) is kept (`db/chain-data.ts`). A database holding an index
 * that did not come from the devnet or its fixture (a real RPC_URL's) is refused rather than reset.
 */
import { SqlClient } from "@effect/sql"
import { Context, Data, Effect, Fiber, Option, Queue, Redacted, Runtime } from "effect"
import { bytesToHex, type Address, type Hex } from "viem"
import { mnemonicToAccount, privateKeyToAccount } from "viem/accounts"
import { verifyingPaymasterAbi } from "../schema/protocol/aa.js"
import type { FaucetOptions } from "../http/backend/faucet/service.js"
import { AppConfig, ConfigurationError } from "./config.js"
import { displayUrl } from "./config/readers.js"
import { readActiveGeneration, schemaIdent } from "../schema/io/indexer-checkpoint.js"
import { DERIVED_TABLES, resetChainData } from "./db/chain-data.js"
import { DEVNET_CHAIN_ID, DEVNET_MNEMONIC } from "../tools/devnet/anvil.js"
import { startBundler } from "../tools/devnet/bundler.js"
import { DevnetClient } from "../tools/devnet/client.js"
import { startLiveDevnet, type LiveDevnet, type Log } from "../tools/devnet/live.js"
import { liveArtifacts } from "../tools/devnet/live-state.js"
import { followTrading } from "../tools/devnet/scenario.js"
import { betaTradedIds, betaTransitions, setUpBeta, type Beta } from "../tools/devnet/beta.js"
import { BETA_EVENT, type BetaDisplay } from "../tools/devnet/beta-catalog.js"
import { seedDisplayMetadata, type DisplayMetadataFile } from "./display-metadata.js"
import { makeRpc } from "../pipeline/source/rpc.js"
import { FIXTURE_SOURCE, LIVE_SOURCE } from "./index-chain.js"

export class DevnetFailed extends Data.TaggedError("DevnetFailed")<{ readonly message: string }> {}

/** Starts the live devnet for the scope (stopped, its state dumped, when the scope closes). */
export const liveDevnet = Effect.gen(function* () {
  const config = yield* AppConfig
  const runtime = yield* Effect.runtime<never>()
  // Lines of the start are logged in order once it is up; later ones (the keeper restarting anvil) as they come.
  const notes: Array<{ message: string; fields: Record<string, unknown>; level: "info" | "warning" }> = []
  let started = false
  const log: Log = (message, fields = {}, level = "info") => {
    if (!started) return void notes.push({ message, fields, level })
    Runtime.runFork(runtime)((level === "warning" ? Effect.logWarning(message) : Effect.logInfo(message)).pipe(Effect.annotateLogs(fields)))
  }
  const live = yield* Effect.acquireRelease(
    Effect.tryPromise({
      try: () => startLiveDevnet({ dataDir: config.dataDir, log }),
      catch: (cause) => new DevnetFailed({ message: `devnet: ${(cause as Error).message ?? String(cause)}` })
    }),
    (live) => Effect.promise(() => live.stop())
  )
  for (const note of notes)
    yield* (note.level === "warning" ? Effect.logWarning(note.message) : Effect.logInfo(note.message)).pipe(
      Effect.annotateLogs(note.fields)
    )
  started = true
  yield* Effect.logInfo("devnet: live local chain").pipe(
    Effect.annotateLogs({ rpc_url: live.url, chain_id: 130, deployment: live.deploymentFile, block_time_s: 1 })
  )
  return live
})

/**
 * The highest block `schema`'s index holds for `chainId`: the tip of the unfinalized window, else
 * the checkpoint. Ordered as numbers (ordered as text, 999 would rank above 1060 and a window
 * crossing a power of ten would hide its tip).
 */
const heldTip = (chainId: number, schema: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe<{ number: string; hash: string }>(
      `SELECT held.number::text AS number, held.hash FROM (
        SELECT number, hash FROM ${schemaIdent(schema)}.indexed_block WHERE chain_id = $1
        UNION ALL SELECT block_number, block_hash FROM ${schemaIdent(schema)}.indexer_checkpoint WHERE chain_id = $1) held
      ORDER BY held.number DESC LIMIT 1`,
      [chainId]
    )
  ).pipe(Effect.map((rows) => rows[0]))

/**
 * Makes the database fit `live`'s chain: refuses a foreign index, resets the chain's data of one
 * this chain does not continue (keeping the backend's own), leaves a continued one alone.
 *
 * What is judged is the index that serves: the active generation's deployment, window and
 * checkpoint (blue-green re-index: after a switch public's derived tables are retired or empty,
 * and judging them would keep another chain's index). The reset empties every generation
 * (`resetChainData`).
 */
export const fitDatabaseToDevnet = (live: LiveDevnet) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const chainId = DEVNET_CHAIN_ID
    const generation = yield* readActiveGeneration
    const held = (yield* sql.unsafe<{
      diamond: string
      source: string
    }>(`SELECT diamond, source FROM ${schemaIdent(generation)}.indexed_deployment WHERE chain_id = $1`, [chainId]))[0]
    if (held !== undefined && held.source !== LIVE_SOURCE && held.source !== FIXTURE_SOURCE) {
      return yield* new ConfigurationError({
        message: `invalid configuration\nDATABASE: it holds the index of chain ${chainId} from ${held.source} (deployment ${held.diamond}); the live devnet will not overwrite it. Use another DATA_DIR or DATABASE_URL, or set RPC_URL.`
      })
    }
    const tip = yield* heldTip(chainId, generation)
    let reason: string | undefined
    if (held !== undefined && held.diamond !== live.manifest.devnet.deployment.diamond.toLowerCase())
      reason = `it indexes deployment ${held.diamond}`
    else if (tip !== undefined) {
      const rpc = makeRpc({ url: live.url })
      const head = yield* rpc.header("latest")
      // Asked only when the chain is that high: a block beyond the head is not retried for.
      const onChain =
        head.number < Number(tip.number) ? undefined : yield* rpc.header(Number(tip.number)).pipe(Effect.map((header) => header.hash))
      if (onChain !== tip.hash)
        reason = `its block ${tip.number} (${tip.hash}) is ${onChain === undefined ? "beyond this chain's head" : `not this chain's (${onChain})`}`
    }
    if (reason === undefined) return
    // Only what was derived from the chain goes; users, sessions, comments, claims... stay (`db/chain-data.ts`).
    const { unverifiedClaims } = yield* resetChainData
    yield* Effect.logWarning(
      "devnet: the database holds another chain's index; resetting the chain's data (the backend's own data is kept)"
    ).pipe(
      Effect.annotateLogs({
        reason,
        generation,
        fresh_chain: live.fresh,
        derived_tables: DERIVED_TABLES.length,
        claims_to_verify: unverifiedClaims
      })
    )
  })

/**
 * The seeded background market until interrupted, or nothing when DEVNET_ACTIVITY=off. First the
 * beta's markets (`tools/devnet/beta.ts`: launched unless the chain has them, then their display
 * metadata upserted), then `followTrading` on them, with the short markets' transitions in every
 * round. Refused actions are logged at debug level; the chain answers either way.
 */
export const simulateMarket = (live: LiveDevnet) =>
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (!config.devnetActivity) return yield* Effect.logInfo("devnet: background activity off (DEVNET_ACTIVITY=off)")
    const runtime = yield* Effect.runtime<never>()
    const log = (line: string) =>
      void Runtime.runFork(runtime)(Effect.logDebug(line).pipe(Effect.annotateLogs("component", "devnet-activity")))
    const client = new DevnetClient(live.url, liveArtifacts(live.manifest))
    const devnet = live.manifest.devnet
    const beta = yield* Effect.tryPromise({
      try: () => setUpBeta(client, devnet, { after: live.manifest.stateHead.number, log }),
      catch: (cause) => new DevnetFailed({ message: `devnet beta markets: ${(cause as Error).message ?? String(cause)}` })
    })
    yield* seedDisplayMetadata(betaMetadata(beta))
    yield* Effect.logInfo("devnet: beta markets ready").pipe(
      Effect.annotateLogs({
        markets: beta.markets.length,
        launched: beta.launched,
        event: beta.event.id.toString(),
        categories: new Set(beta.markets.map((m) => m.spec.category)).size
      })
    )
    yield* Effect.logInfo("devnet: background market activity on (DEVNET_ACTIVITY=off stops it)")
    yield* Effect.tryPromise({
      try: (signal) =>
        followTrading(client, devnet, {
          seed: 2,
          stop: signal,
          log,
          markets: betaTradedIds(beta),
          beforeEach: () => betaTransitions(client, devnet, beta)
        }),
      catch: (cause) => new DevnetFailed({ message: `devnet activity: ${(cause as Error).message ?? String(cause)}` })
    })
  })

/** The beta markets' and event's display metadata, as the `display_metadata` seed takes it. */
const betaMetadata = (beta: Beta): DisplayMetadataFile => {
  const entry = (id: bigint, d: BetaDisplay) => ({
    id: id.toString(),
    slug: d.slug,
    category: d.category,
    featured: d.featured,
    title: { en: d.title },
    icon: d.icon,
    tags: d.tags
  })
  const members = BETA_EVENT.outcomes.map((o, i) => entry(beta.event.members[i]!, { ...BETA_EVENT, ...o, featured: false }))
  return {
    markets: [...beta.markets.map((m) => entry(m.id, m.spec)), ...members],
    events: [entry(beta.event.id, BETA_EVENT)]
  }
}

/** The faucet's chain and key, when this process runs one the faucet can pay on (the live devnet). */
export class FaucetSetup extends Context.Tag("predix/FaucetSetup")<FaucetSetup, FaucetOptions>() {}

/**
 * The faucet on the live devnet: FAUCET_PRIVATE_KEY, or by default the committed state's funded
 * faucet account (`live-state.ts`: ETH, test USDC, the dispenser approved).
 */
export const devnetFaucet = (live: LiveDevnet) =>
  Effect.gen(function* () {
    const config = yield* AppConfig
    const fallback = (): Redacted.Redacted<Hex> => Redacted.make(mnemonicKey(live.manifest.faucetAccount))
    // One pending restart is enough: the faucet verifies every claim against the chain as it is then.
    const restarts = yield* Queue.sliding<void>(1)
    live.onRestart(() => void Queue.unsafeOffer(restarts, undefined))
    const options: FaucetOptions = {
      rpcUrl: live.url,
      chainId: DEVNET_CHAIN_ID,
      privateKey: Option.getOrElse(config.faucetPrivateKey, fallback),
      testUsdc: live.manifest.devnet.addresses.testUsdc,
      dispenser: live.manifest.faucetDispenser,
      // Claims fund an EOA's ECDSA smart account: the SimpleAccountFactory's address for it.
      accountFactory: live.manifest.simpleAccountFactory,
      ethWei: config.faucetEthWei,
      chainRestarts: Queue.take(restarts)
    }
    return options
  })

const mnemonicKey = (index: number): Hex => bytesToHex(mnemonicToAccount(DEVNET_MNEMONIC, { addressIndex: index }).getHdKey().privateKey!)

/** What the account-abstraction endpoints need on the chain this process runs. */
export interface AaOptions {
  readonly rpcUrl: string
  readonly chainId: number
  readonly entryPoint: Address
  /** Passkey (WebAuthn P-256) accounts' factory (the project's). */
  readonly smartAccountFactory: Address
  /** ECDSA accounts' factory (the canonical SimpleAccountFactory v0.7). */
  readonly simpleAccountFactory: Address
  readonly paymaster: Address
  /** The paymaster's `verifyingSigner` key (PAYMASTER_SIGNER_KEY, or the devnet's default); never logged. */
  readonly paymasterSignerKey: Redacted.Redacted<Hex>
  /** The bundler's JSON-RPC URL (BUNDLER_URL, or the devnet's alto once it listens: this waits for it). */
  readonly bundlerUrl: Effect.Effect<string, DevnetFailed>
}

export class AaSetup extends Context.Tag("predix/AaSetup")<AaSetup, AaOptions>() {}

/**
 * Account abstraction on the live devnet: the committed state's EntryPoint, factory and
 * paymaster; the paymaster's signer set to PAYMASTER_SIGNER_KEY when one is configured (the
 * devnet's paymaster owner does it); and, unless BUNDLER_URL points elsewhere, the devnet's own
 * alto bundler, started in the background for the scope (it takes seconds to load, and nothing
 * else waits for it) and stopped with it, before anvil.
 */
export const devnetAa = (live: LiveDevnet) =>
  Effect.gen(function* () {
    const config = yield* AppConfig
    const manifest = live.manifest
    const signerKey = Option.getOrElse(config.paymasterSignerKey, () => Redacted.make(mnemonicKey(manifest.paymasterAccount)))
    if (Option.isSome(config.paymasterSignerKey)) yield* useSigner(live, privateKeyToAccount(Redacted.value(signerKey)).address)
    const bundlerUrl: Effect.Effect<string, DevnetFailed> = Option.isSome(config.bundlerUrl)
      ? Effect.succeed(config.bundlerUrl.value)
      : yield* Effect.acquireRelease(
          Effect.tryPromise({
            try: () =>
              startBundler({
                rpcUrl: live.url,
                entryPoint: manifest.entryPoint,
                executorKey: mnemonicKey(manifest.bundlerAccounts.executor),
                utilityKey: mnemonicKey(manifest.bundlerAccounts.utility)
              }),
            catch: (cause) => new DevnetFailed({ message: `bundler: ${(cause as Error).message ?? String(cause)}` })
          }),
          (bundler) => Effect.promise(() => bundler.stop())
        ).pipe(
          Effect.tap((bundler) =>
            Effect.logInfo("devnet: alto bundler").pipe(Effect.annotateLogs({ bundler_url: bundler.url, entry_point: manifest.entryPoint }))
          ),
          Effect.tapError((error) => Effect.logError(error.message)),
          Effect.map((bundler) => bundler.url),
          Effect.forkScoped,
          Effect.map((fiber) => Fiber.join(fiber))
        )
    if (Option.isSome(config.bundlerUrl))
      // Its path and query hidden: a hosted bundler's URL holds its API key.
      yield* Effect.logInfo("bundler: BUNDLER_URL").pipe(Effect.annotateLogs({ bundler_url: displayUrl(config.bundlerUrl.value) }))
    return {
      rpcUrl: live.url,
      chainId: DEVNET_CHAIN_ID,
      entryPoint: manifest.entryPoint,
      smartAccountFactory: manifest.smartAccountFactory,
      simpleAccountFactory: manifest.simpleAccountFactory,
      paymaster: manifest.paymaster,
      paymasterSignerKey: signerKey,
      bundlerUrl
    } satisfies AaOptions
  })

/** Makes `signer` the devnet paymaster's verifying signer (its owner, a mnemonic account, sends setSigner) unless it is already. */
const useSigner = (live: LiveDevnet, signer: Address) =>
  Effect.tryPromise({
    try: async () => {
      const client = new DevnetClient(live.url, liveArtifacts(live.manifest))
      const current = await client.public.readContract({
        address: live.manifest.paymaster,
        abi: verifyingPaymasterAbi,
        functionName: "verifyingSigner"
      })
      if (current.toLowerCase() === signer.toLowerCase()) return false
      await client.send(live.manifest.paymasterAccount, "VerifyingPaymaster", live.manifest.paymaster, "setSigner", [signer])
      return true
    },
    catch: (cause) => new DevnetFailed({ message: `paymaster signer: ${(cause as Error).message ?? String(cause)}` })
  }).pipe(
    Effect.tap((changed) =>
      changed
        ? Effect.logInfo("devnet: paymaster signer set to PAYMASTER_SIGNER_KEY's address").pipe(
            Effect.annotateLogs({ signer: signer.toLowerCase() })
          )
        : Effect.void
    )
  )
