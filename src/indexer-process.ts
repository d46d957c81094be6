/**
 * The indexer in its own process, so that no request load on the APIs can slow indexing: the
 * default `start` serves the APIs in its own process and runs the indexer as a child (the entry
 * `indexer-child.ts`: what `start --only indexer` runs, from a bundle of its own) against the
 * same database (its URL passed as DATABASE_URL; an embedded Postgres stays owned by
 * the parent, which stops it after the child has exited).
 *
 * Invariants:
 * - the child lives no longer than the parent's scope: closing the scope (SIGINT, SIGTERM, any
 *   failure) sends it SIGTERM and waits for it to exit (SIGKILL after 30 s), before anything
 *   acquired earlier (the database) is released;
 * - the child has its own process group, so signals meant for the service (Ctrl+C in a
 *   terminal, a kill of the group) reach the parent, which stops the child as above;
 * - a parent that dies without closing its scope (SIGKILL) closes the child's IPC channel, and
 *   the child kills itself on that (`stopWithParent`): a killed service dies whole, as the one
 *   process did (every commit is atomic, so an indexer killed at any point resumes exactly from
 *   its checkpoint), and no process is left behind to race the next start's indexer;
 * - a child that exits on its own (a configuration error, a reorg deeper than the window, a
 *   crash, a kill) fails the parent with `IndexerProcessExited`, so `start` stops the APIs and
 *   exits 1 rather than serve an index nobody updates; whatever restarts the service (systemd,
 *   a container runtime) restarts both. Transient faults are retried inside the pipeline.
 */
import { Data, Effect, Option, Redacted } from "effect"
import { spawn, type ChildProcess } from "node:child_process"
import { fileURLToPath } from "node:url"
import { RUNS_COMPILED } from "../schema/io/project-root.js"
import { indexerChildOptions } from "./api-heap.js"
import { LOG_TO_PARENT_ENV, Screen, showForwarded } from "./screen/output.js"

export class IndexerProcessExited extends Data.TaggedError("IndexerProcessExited")<{
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}> {
  override get message() {
    return `the indexer process exited (${this.signal === null ? `code ${this.code}` : `signal ${this.signal}`}); stopping`
  }
}

/** Resolves when `child` has exited (at once when it already has). */
const exitOf = (child: ChildProcess) =>
  Effect.async<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null)
      return resume(Effect.succeed({ code: child.exitCode, signal: child.signalCode }))
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => resume(Effect.succeed({ code, signal }))
    child.once("exit", onExit)
    return Effect.sync(() => void child.off("exit", onExit))
  })

/** SIGTERM, then SIGKILL if it is still running after 30 s; returns once it has exited. */
const stop = (child: ChildProcess) =>
  Effect.gen(function* () {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill("SIGTERM")
    const exited = yield* exitOf(child).pipe(Effect.timeout("30 seconds"), Effect.option)
    if (exited._tag === "None") {
      yield* Effect.logWarning("indexer process did not stop on SIGTERM; killing it").pipe(Effect.annotateLogs("pid", child.pid))
      child.kill("SIGKILL")
      yield* exitOf(child)
    }
  })

/**
 * The child's entry, beside this code: the compiled bundle next to the main one, or the source
 * file (run through tsx, which the inherited `--import tsx` provides).
 */
const CHILD_ENTRY = fileURLToPath(new URL(RUNS_COMPILED ? "./indexer-child.mjs" : "./indexer-child.ts", import.meta.url))

/**
 * Runs the indexer child (`indexer-child.ts`, with this process's Node flags but the API's own,
 * and the indexer's: `indexerChildOptions`)
 * against `databaseUrl` (and `env` on top of ours: the live devnet's RPC_URL, say) until it
 * exits, which is a failure; interrupting stops it.
 */
export const runIndexerProcess = (databaseUrl: Redacted.Redacted<string>, env: Readonly<Record<string, string>> = {}) =>
  Effect.gen(function* () {
    // With a start screen here, the child sends its records over the IPC channel to be shown on it.
    const screen = yield* Effect.serviceOption(Screen)
    const toScreen = Option.isSome(screen) ? { [LOG_TO_PARENT_ENV]: "1" } : {}
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        spawn(process.execPath, [...indexerChildOptions(process.execArgv), CHILD_ENTRY], {
          env: { ...process.env, ...env, ...toScreen, DATABASE_URL: Redacted.value(databaseUrl) },
          // Its logs go where ours go; the IPC channel tells it when we are gone.
          stdio: ["ignore", "inherit", "inherit", "ipc"],
          // Its own process group: a terminal's Ctrl+C reaches only us, and we stop it in order.
          detached: true
        })
      ),
      stop
    )
    if (Option.isSome(screen)) child.on("message", showForwarded(screen.value))
    yield* Effect.logInfo("indexer process started").pipe(Effect.annotateLogs("pid", child.pid))
    const { code, signal } = yield* exitOf(child)
    return yield* new IndexerProcessExited({ code, signal })
  }).pipe(Effect.scoped)

/**
 * In a process started by `runIndexerProcess`: die as soon as the parent is gone without having
 * stopped us (it was killed). A parent that stops normally sends SIGTERM first and outlives us.
 */
export const stopWithParent = Effect.sync(() => {
  if (process.channel === undefined) return
  // The channel alone must not keep this process alive once its work has ended.
  process.channel.unref()
  process.once("disconnect", () => process.kill(process.pid, "SIGKILL"))
})
