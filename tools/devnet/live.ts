/**
 * The live local chain `npm start` runs when no RPC_URL is set: anvil (chain id 130) started
 * from the committed live state (the fixture's whole history, the protocol deployed, the live
 * contracts, `live-state.ts`), mining a block every second, its state kept under
 * `DATA_DIR/devnet/` so that a restart continues the same chain.
 *
 * Invariants:
 * - anvil lives no longer than this process: it runs under `keeper.ts`, which stops it
 *   when our scope closes and when we die without closing it (SIGKILL); either way anvil is
 *   stopped with SIGTERM and dumps its state, so the next start continues where it stopped;
 * - anvil also dumps its state every STATE_INTERVAL_SECONDS, and its keeper starts it again on the
 *   same port when it dies on its own (killed, crashed), so a crash loses seconds of the chain and
 *   clients keep their URL; the log says so, and `onRestart` listeners (the faucet) are told;
 * - a state file that does not hold the committed chain (the manifest's last block is missing or
 *   different) is set aside and the chain starts afresh from the committed state; the caller
 *   then finds the database ahead of, or off, the chain and resets it (`app.ts`).
 */
import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { anvilBinary, AnvilError, DEVNET_ACCOUNTS, DEVNET_CHAIN_ID, DEVNET_MNEMONIC } from "./anvil.js"
import { startKept, type KeeperEvent } from "./kept.js"
import { FIXTURE } from "./run.js"
import { readManifest, unpackLiveState, type LiveManifest } from "./live-state.js"
import { PROJECT_ROOT } from "../../schema/io/project-root.js"

const root = PROJECT_ROOT
export const LIVE_STATE = Path.join(root, FIXTURE.liveState)

export interface LiveDevnet {
  readonly url: string
  readonly manifest: LiveManifest
  /** `DATA_DIR/devnet/deployment.json`, written at every start. */
  readonly deploymentFile: string
  /** True when this start began a new chain (no state, or one that was set aside). */
  readonly fresh: boolean
  readonly stop: () => Promise<void>
  /** Calls `listener` each time anvil was restarted by its keeper (from its last saved state: the chain may have lost its last seconds). */
  readonly onRestart: (listener: () => void) => void
}

const rpc = async (url: string, method: string, params: ReadonlyArray<unknown> = []): Promise<unknown> => {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    signal: AbortSignal.timeout(5_000)
  })
  const body = (await response.json()) as { result?: unknown; error?: { message: string } }
  if (body.error !== undefined) throw new AnvilError(`${method}: ${body.error.message}`)
  return body.result
}

/**
 * Seconds between anvil's dumps of its state (besides the dump at a clean stop): a crash loses at
 * most this much of the chain. Each dump rewrites the whole state (33 MB of JSON for the committed
 * state), so not every second: anvil's CPU over 30 s was 0.70 s at 5 s against 0.17 s without
 * dumps (~1.8% of a core); at 1 s it was ~10%.
 */
export const STATE_INTERVAL_SECONDS = 5

export type Log = (message: string, fields?: Record<string, unknown>, level?: "info" | "warning") => void

/** Starts anvil under the keeper on `statePath` (restarted by it on the same port if it dies); resolves once it answers. */
const keptAnvil = async (
  statePath: string,
  blockTime: number | undefined,
  onEvent: (event: KeeperEvent) => void
): Promise<{ url: string; stop: () => Promise<void> }> => {
  const args = [
    "--host",
    "127.0.0.1",
    "--port",
    "0",
    "--chain-id",
    String(DEVNET_CHAIN_ID),
    "--mnemonic",
    DEVNET_MNEMONIC,
    "--accounts",
    String(DEVNET_ACCOUNTS),
    "--balance",
    "100000",
    "--state",
    statePath,
    "--state-interval",
    String(STATE_INTERVAL_SECONDS),
    ...(blockTime === undefined ? [] : ["--block-time", String(blockTime)])
  ]
  // anvil writes its state on SIGTERM; a large state takes a moment.
  const { port, stop } = await startKept({
    name: "anvil",
    executable: anvilBinary(),
    args,
    listenTimeoutMs: 30_000,
    stopTimeoutMs: 20_000,
    restart: true,
    onEvent
  }).catch((error: Error) => {
    throw new AnvilError(error.message)
  })
  const url = `http://127.0.0.1:${port}`
  for (let attempt = 0; ; attempt++) {
    if (
      await rpc(url, "eth_chainId").then(
        () => true,
        () => false
      )
    )
      return { url, stop }
    if (attempt >= 200) {
      await stop()
      throw new AnvilError(`anvil did not answer on ${url}`)
    }
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** Whether the chain at `url` holds `block` (the committed state's last block). */
const holds = async (url: string, block: { readonly number: number; readonly hash: string }) => {
  const header = (await rpc(url, "eth_getBlockByNumber", [`0x${block.number.toString(16)}`, false])) as { hash: string } | null
  return header?.hash === block.hash
}

/**
 * Starts the live devnet under `dataDir/devnet`; `log` gets one line per decision (fresh chain,
 * continued chain, state set aside).
 */
export const startLiveDevnet = async (options: {
  readonly dataDir: string
  readonly blockTimeSeconds?: number
  /** Mine each transaction at once instead of on a clock (tests). */
  readonly automine?: boolean
  readonly log: Log
}): Promise<LiveDevnet> => {
  const dir = Path.join(options.dataDir, "devnet")
  const statePath = Path.join(dir, "anvil-state.json")
  const manifest = readManifest(LIVE_STATE)
  mkdirSync(dir, { recursive: true })
  const blockTime = options.automine === true ? undefined : (options.blockTimeSeconds ?? 1)
  let fresh = !existsSync(statePath)
  if (fresh) unpackLiveState(LIVE_STATE, statePath)
  const listeners: Array<() => void> = []
  let url: string | undefined
  const onEvent = (event: KeeperEvent) => {
    if (event.event === "died")
      options.log(
        `devnet: anvil died (${event.signal ?? `exit code ${event.code}`}); its keeper restarts it from its last saved state`,
        { rpc_url: url, signal: event.signal, code: event.code, state_interval_s: STATE_INTERVAL_SECONDS },
        "warning"
      )
    else if (event.event === "retrying")
      options.log("devnet: anvil did not start again; its keeper retries", { error: event.message }, "warning")
    else
      void rpc(`http://127.0.0.1:${event.port}`, "eth_blockNumber")
        .then(
          (head) => Number(head),
          () => undefined
        )
        .then((head) => {
          options.log(
            event.state === "backup"
              ? "devnet: anvil restarted by its keeper from the state it loaded last (its last saved state was unreadable); the chain answers at the same URL"
              : "devnet: anvil restarted by its keeper from its last saved state; the chain answers at the same URL",
            { rpc_url: `http://127.0.0.1:${event.port}`, same_url: url === `http://127.0.0.1:${event.port}`, head },
            "warning"
          )
          for (const listener of listeners) listener()
        })
  }
  let anvil = await keptAnvil(statePath, blockTime, onEvent)
  if (!(await holds(anvil.url, manifest.stateHead))) {
    await anvil.stop()
    const aside = `${statePath}.${Date.now()}.set-aside`
    renameSync(statePath, aside)
    options.log("devnet state does not hold the committed chain; set aside, starting a fresh chain", { set_aside: aside })
    unpackLiveState(LIVE_STATE, statePath)
    fresh = true
    anvil = await keptAnvil(statePath, blockTime, onEvent)
  }
  url = anvil.url
  const deploymentFile = Path.join(dir, "deployment.json")
  writeFileSync(deploymentFile, `${JSON.stringify(manifest.devnet.deployment, null, 2)}\n`)
  const head = Number(await rpc(anvil.url, "eth_blockNumber"))
  options.log(fresh ? "devnet: a fresh chain from the committed state" : "devnet: continuing the chain of the previous run", { head })
  return { url: anvil.url, manifest, deploymentFile, fresh, stop: anvil.stop, onRestart: (listener) => void listeners.push(listener) }
}
