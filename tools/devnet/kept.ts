/**
 * The parent side of `keeper.ts`: starts a devnet server under its keeper, in its own process
 * group (a terminal's Ctrl+C reaches only us, and we stop the child last), and resolves with the
 * port the child listens on. `stop` asks the keeper to stop the child (SIGTERM) and waits; a
 * child that does not exit within `stopTimeoutMs` is killed with its keeper (their process group).
 * With `restart`, the keeper starts a child that died again on the same port and says so (`onEvent`).
 */
import { spawn, type ChildProcess } from "node:child_process"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { PROJECT_ROOT, RUNS_COMPILED } from "../../schema/io/project-root.js"

/** Compiled, the keeper is `.build/keeper.mjs` beside us; from the sources it is TypeScript, run through tsx. */
const KEEPER = Path.join(Path.dirname(fileURLToPath(import.meta.url)), RUNS_COMPILED ? "keeper.mjs" : "keeper.ts")
const nodeArgs = () =>
  RUNS_COMPILED || process.execArgv.some((arg) => arg.includes("tsx")) ? process.execArgv : [...process.execArgv, "--import", "tsx"]

export class KeptProcessError extends Error {
  override readonly name = "KeptProcessError"
}

export interface Kept {
  readonly port: number
  readonly stop: () => Promise<void>
}

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
  })

/** What a keeper started with `restart` tells after the start (`keeper.ts`). */
export type KeeperEvent =
  | { readonly event: "died"; readonly code: number | null; readonly signal: string | null }
  | { readonly event: "restarted"; readonly port: number; readonly state: "saved" | "backup" }
  | { readonly event: "retrying"; readonly message: string }

export const startKept = async (options: {
  /** For messages: "anvil", "alto". */
  readonly name: string
  readonly executable: string
  readonly args: ReadonlyArray<string>
  readonly listenTimeoutMs: number
  readonly stopTimeoutMs: number
  /** Start the child again, on the same port, when it dies while not being stopped; `onEvent` hears of it. */
  readonly restart?: boolean
  readonly onEvent?: (event: KeeperEvent) => void
}): Promise<Kept> => {
  const keeperArgs = [KEEPER, ...(options.restart === true ? ["--restart"] : []), options.executable, ...options.args]
  const keeper = spawn(process.execPath, [...nodeArgs(), ...keeperArgs], {
    // The keeper resolves its modules (tsx, from the sources) from the project root.
    cwd: PROJECT_ROOT,
    stdio: ["ignore", "ignore", "pipe", "ipc"],
    detached: true
  })
  let stderr = ""
  keeper.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000)
  })
  const stop = async () => {
    if (keeper.exitCode === null && keeper.signalCode === null) keeper.kill("SIGTERM")
    // The timer is cleared once the keeper has exited: left running, it held the process alive for
    // the whole stop timeout after a prompt stop.
    let timer: ReturnType<typeof setTimeout> | undefined
    const done = await Promise.race([
      exited(keeper).then(() => true),
      new Promise<false>((r) => (timer = setTimeout(() => r(false), options.stopTimeoutMs)))
    ]).finally(() => clearTimeout(timer))
    if (!done) {
      // The keeper leads its own process group, the child in it: kill both, never orphan the child.
      try {
        if (keeper.pid !== undefined) process.kill(-keeper.pid, "SIGKILL")
      } catch {
        keeper.kill("SIGKILL")
      }
      await exited(keeper)
    }
  }
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new KeptProcessError(`${options.name} did not listen within ${options.listenTimeoutMs / 1000} s: ${stderr.trim()}`)),
      options.listenTimeoutMs
    )
    keeper.on("message", (message: { port: number } | KeeperEvent) => {
      if ("event" in message) return options.onEvent?.(message)
      clearTimeout(timer)
      resolve(message.port)
    })
    keeper.once("exit", (code) => {
      clearTimeout(timer)
      reject(new KeptProcessError(`${options.name} exited with code ${code}: ${stderr.trim()}`))
    })
  }).catch(async (error) => {
    await stop()
    throw error
  })
  return { port, stop }
}
