/**
 * anvil from npm (`@foundry-rs/anvil`, the binary ships inside the platform package, so no install
 * script runs) on loopback with chain id 130. Genesis time and the block time step are fixed, so
 * the same transactions give the same blocks, hashes and timestamps on every run.
 */
import { spawn, type ChildProcess } from "node:child_process"
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"

export const DEVNET_CHAIN_ID = 130
export const DEVNET_MNEMONIC = "test test test test test test test test test test test junk"
/** 2026-01-01T00:00:00Z. */
export const GENESIS_TIMESTAMP = 1_767_225_600
/** Seconds between consecutive blocks. */
export const BLOCK_TIME_STEP = 2
export const DEVNET_ACCOUNTS = 24

export class AnvilError extends Error {
  override readonly name = "AnvilError"
}

export interface Anvil {
  readonly url: string
  readonly port: number
  readonly stop: () => Promise<void>
}

export const anvilBinary = (): string => {
  const require = createRequire(import.meta.url)
  const candidates = [
    "@foundry-rs/anvil-linux-amd64",
    "@foundry-rs/anvil-linux-arm64",
    "@foundry-rs/anvil-darwin-arm64",
    "@foundry-rs/anvil-darwin-amd64"
  ]
  for (const name of candidates) {
    try {
      const bin = join(dirname(require.resolve(`${name}/package.json`)), "bin", "anvil")
      if (existsSync(bin)) return bin
    } catch {
      // not installed for this platform
    }
  }
  throw new AnvilError("anvil binary not found: run npm install (package @foundry-rs/anvil)")
}

const rpc = async (url: string, method: string, params: ReadonlyArray<unknown> = []): Promise<unknown> => {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    // Something else listening on the port may never answer.
    signal: AbortSignal.timeout(2_000)
  })
  const body = (await response.json()) as { result?: unknown; error?: { message: string } }
  if (body.error !== undefined) throw new AnvilError(`${method}: ${body.error.message}`)
  return body.result
}

/**
 * Starts anvil and waits until it answers; `stop` kills it and waits for the exit.
 *
 * Without a port, anvil binds port 0 itself and the URL comes from its own "Listening on" line:
 * a port chosen free and released before anvil binds it is not reserved, and a concurrent test's
 * anvil that took it would then answer on our URL (its reorgs dropping our transactions). Anvil
 * logs every request to stdout; that stream is drained and dropped.
 */
export const startAnvil = async (options: { readonly port?: number; readonly host?: string } = {}): Promise<Anvil> => {
  const host = options.host ?? "127.0.0.1"
  const args = [
    "--host",
    host,
    "--port",
    String(options.port ?? 0),
    "--chain-id",
    String(DEVNET_CHAIN_ID),
    "--mnemonic",
    DEVNET_MNEMONIC,
    "--accounts",
    String(DEVNET_ACCOUNTS),
    "--balance",
    "100000",
    "--timestamp",
    String(GENESIS_TIMESTAMP)
  ]
  const child: ChildProcess = spawn(anvilBinary(), args, { stdio: ["ignore", "pipe", "pipe"] })
  let stderr = ""
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  let banner = ""
  let port: number | undefined
  child.stdout?.on("data", (chunk: Buffer) => {
    if (port !== undefined) return
    banner += chunk.toString()
    const listening = /Listening on [^\s:]+:(\d+)/.exec(banner)
    if (listening !== null) port = Number(listening[1])
  })
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
    await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))])
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  }
  for (let attempt = 0; attempt < 200; attempt++) {
    if (child.exitCode !== null) throw new AnvilError(`anvil exited with code ${child.exitCode}: ${stderr.trim()}`)
    if (port !== undefined) {
      const url = `http://${host}:${port}`
      if (
        await rpc(url, "eth_chainId").then(
          () => true,
          () => false
        )
      ) {
        await rpc(url, "anvil_setBlockTimestampInterval", [BLOCK_TIME_STEP])
        return { url, port, stop }
      }
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  await stop()
  throw new AnvilError(`anvil did not answer within 10 s${port === undefined ? " (no listening line)" : ` on port ${port}`}`)
}
