/**
 * anvil from npm (`@foundry-rs/anvil`, the binary ships inside the platform package, so no install
 * script runs) on loopback with chain id 130. Genesis time and the block time step are fixed, so
 * the same transactions give the same blocks, hashes and timestamps on every run.
 */
import { spawn, type ChildProcess } from "node:child_process"
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { createServer } from "node:net"

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
  const candidates = ["@foundry-rs/anvil-linux-amd64", "@foundry-rs/anvil-linux-arm64", "@foundry-rs/anvil-darwin-arm64", "@foundry-rs/anvil-darwin-amd64"]
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

export const freeLoopbackPort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

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
 * The port is free when chosen but not reserved: another process (another test's anvil) can take
 * it before this anvil binds. Then this anvil exits at once, while the other one answers on the
 * URL. So an answer counts only if this anvil is still running a moment later, and a start that
 * lost its port is retried on another one.
 */
export const startAnvil = async (options: { readonly port?: number; readonly host?: string } = {}): Promise<Anvil> => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startAnvilOn(options.port ?? (await freeLoopbackPort()), options.host ?? "127.0.0.1")
    } catch (error) {
      if (!(error instanceof PortTaken) || options.port !== undefined || attempt >= 5) throw error
    }
  }
}

class PortTaken extends AnvilError {}

const startAnvilOn = async (port: number, host: string): Promise<Anvil> => {
  const args = [
    "--host", host, "--port", String(port), "--chain-id", String(DEVNET_CHAIN_ID), "--mnemonic", DEVNET_MNEMONIC,
    "--accounts", String(DEVNET_ACCOUNTS), "--balance", "100000", "--timestamp", String(GENESIS_TIMESTAMP), "--silent"
  ]
  const child: ChildProcess = spawn(anvilBinary(), args, { stdio: ["ignore", "ignore", "pipe"] })
  let stderr = ""
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const url = `http://${host}:${port}`
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
    await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))])
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  }
  const failed = () => {
    const message = `anvil exited with code ${child.exitCode}: ${stderr.trim()}`
    return /in use|AddrInUse|address already/i.test(stderr) ? new PortTaken(message) : new AnvilError(message)
  }
  for (let attempt = 0; attempt < 200; attempt++) {
    if (child.exitCode !== null) throw failed()
    const up = await rpc(url, "eth_chainId").then(() => true, () => false)
    if (up) {
      // Whoever answered, this anvil must still be alive: one that lost the port exits at once.
      await Promise.race([exited, new Promise((r) => setTimeout(r, 250))])
      if (child.exitCode !== null || child.signalCode !== null) throw failed()
      await rpc(url, "anvil_setBlockTimestampInterval", [BLOCK_TIME_STEP])
      return { url, port, stop }
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  await stop()
  throw new AnvilError(`anvil did not answer on ${url} within 10 s`)
}
