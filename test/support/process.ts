/**
 * Runs this project's command line as a real child process, compiled, the way `npm start` does,
 * and watches its log lines.
 */
import { Effect } from "effect"
import { spawn, type ChildProcess } from "node:child_process"
import * as net from "node:net"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

export const ROOT = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../..")

export interface Running {
  readonly child: ChildProcess
  readonly output: () => string
  /** Resolves with the first log line matching `pattern`; rejects if the process exits first. */
  readonly waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<string>
  readonly exited: Promise<number | null>
}

/** The compiled service, as `npm start` runs it; the test run's global setup builds it. */
export const MAIN = ".build/main.mjs"

export const runCli = (args: ReadonlyArray<string>, env: Record<string, string>): Running =>
  watchOutput(
    spawn(process.execPath, [MAIN, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
  )

/** `runCli` while the scope lasts: a process still running at its end is killed (SIGKILL) and awaited. */
export const runningCli = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.acquireRelease(
    Effect.sync(() => runCli(args, env)),
    (app) =>
      Effect.promise(async () => {
        if (app.child.exitCode === null) app.child.kill("SIGKILL")
        await app.exited
      })
  )

/** Collects `child`'s stdout and stderr, seen through `normalize` (the text a pattern is matched against). */
export const watchOutput = (child: ChildProcess, normalize: (raw: string) => string = (raw) => raw): Running => {
  let raw = ""
  let output = ""
  const listeners = new Set<() => void>()
  const onData = (chunk: Buffer) => {
    raw += chunk.toString("utf8")
    output = normalize(raw)
    listeners.forEach((listener) => listener())
  }
  child.stdout?.on("data", onData)
  child.stderr?.on("data", onData)
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  const waitFor = (pattern: RegExp, timeoutMs = 60_000) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const line = output.split("\n").find((l) => pattern.test(l))
        if (line !== undefined) {
          cleanup()
          resolve(line)
        }
      }
      const timer = setTimeout(() => {
        cleanup()
        reject(new Error(`timed out waiting for ${pattern}; output:\n${output}`))
      }, timeoutMs)
      const cleanup = () => {
        clearTimeout(timer)
        listeners.delete(check)
      }
      listeners.add(check)
      void exited.then((code) => {
        if (listeners.has(check)) {
          cleanup()
          reject(new Error(`process exited (${code}) before ${pattern}; output:\n${output}`))
        }
      })
      check()
    })
  return { child, output: () => output, waitFor, exited }
}

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

export const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
