/**
 * The devnet's ERC-4337 bundler: Pimlico's alto (`@pimlico/alto` from npm) for the EntryPoint
 * v0.7, on loopback next to the live devnet's anvil, under `keeper.ts` so that it never
 * outlives the process that started it (SIGKILL included).
 *
 * - `--safe-mode false`: anvil has no debug_traceCall tracer, so alto cannot enforce the
 *   ERC-7562 storage and opcode rules; it still simulates every operation (validation and
 *   execution) against the EntryPoint before it accepts it, and the EntryPoint checks everything
 *   again on chain.
 * - Keys: the executor sends the bundles, the utility account deploys alto's simulation
 *   contracts on first start (CREATE2, so once per chain) and is the refill source; both are
 *   funded mnemonic accounts nothing else uses (`aa-deploy.ts`). Wallet refilling is off:
 *   the executor holds 100,000 ETH.
 * - alto binds every interface (0.0.0.0, not configurable); the URL we use is loopback.
 */
import { createRequire } from "node:module"
import * as Path from "node:path"
import type { Hex } from "viem"
import { startKept } from "./kept.js"

export class BundlerError extends Error {
  override readonly name = "BundlerError"
}

export interface Bundler {
  readonly url: string
  readonly stop: () => Promise<void>
}

const altoCli = (): string => {
  const require = createRequire(import.meta.url)
  // The package exports only its library entry (esm/index.js); the CLI sits beside it.
  return Path.join(Path.dirname(require.resolve("@pimlico/alto")), "cli", "alto.js")
}

const rpc = async (url: string, method: string): Promise<unknown> => {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: [] }),
    signal: AbortSignal.timeout(2_000)
  })
  const body = (await response.json()) as { result?: unknown; error?: { message: string } }
  if (body.error !== undefined) throw new BundlerError(`${method}: ${body.error.message}`)
  return body.result
}

/** Starts alto for `entryPoint` on the chain at `rpcUrl`; resolves once it answers eth_supportedEntryPoints with it. */
export const startBundler = async (options: {
  readonly rpcUrl: string
  readonly entryPoint: string
  readonly executorKey: Hex
  readonly utilityKey: Hex
}): Promise<Bundler> => {
  const args = [
    "--entrypoints",
    options.entryPoint,
    "--rpc-url",
    options.rpcUrl,
    "--port",
    "0",
    "--safe-mode",
    "false",
    "--executor-private-keys",
    options.executorKey,
    "--utility-private-key",
    options.utilityKey,
    "--refilling-wallets",
    "false",
    "--utility-wallet-monitor",
    "false",
    "--json",
    "--log-level",
    "info",
    "--public-client-log-level",
    "warn",
    "--wallet-client-log-level",
    "warn"
  ]
  // alto loads slowly (~5 s on a quiet machine) and deploys its simulation contracts on a fresh chain.
  const { port, stop } = await startKept({
    name: "alto",
    executable: process.execPath,
    args: [altoCli(), ...args],
    listenTimeoutMs: 120_000,
    stopTimeoutMs: 10_000
  }).catch((error: Error) => {
    throw new BundlerError(error.message)
  })
  const url = `http://127.0.0.1:${port}`
  for (let attempt = 0; ; attempt++) {
    const entryPoints = await rpc(url, "eth_supportedEntryPoints").catch(() => undefined)
    if (Array.isArray(entryPoints) && entryPoints.some((e) => String(e).toLowerCase() === options.entryPoint.toLowerCase()))
      return { url, stop }
    if (attempt >= 200) {
      await stop()
      throw new BundlerError(`alto did not answer on ${url}`)
    }
    await new Promise((r) => setTimeout(r, 50))
  }
}
