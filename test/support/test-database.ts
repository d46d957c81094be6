/**
 * The Postgres server of a test run, chosen once by global-setup.ts and handed to every test
 * file (provide/inject "databaseUrl"; support/postgres.ts reads it):
 *
 * - `TEST_DATABASE_URL` set: that server, as given (the run never starts one of its own);
 * - else `TEST_EMBEDDED_POSTGRES=1`: an embedded cluster, even if the machine has a Postgres
 *   (to check the path a fresh machine takes, without stopping the machine's server);
 * - else the machine's Postgres at `postgres://postgres@127.0.0.1:5432/postgres` when it accepts
 *   a connection (faster: nothing to initialise);
 * - else an embedded cluster, started in a temporary directory for the run and removed with it.
 *
 * Invariant: one embedded cluster per run at most. Vitest runs the global setup once per project
 * in the same process (with a module cache per project), so the cluster is kept on `globalThis`
 * with a count of its users; the last teardown stops it (and orphan-guard.mjs does if the run
 * dies without its teardowns). Tests never stop or kill it: the tests that take a database away
 * stop only a Postgres they started themselves (`predix start`'s own) or cut a proxy in front
 * of this one.
 */
import { Effect, Exit, Logger, LogLevel, Redacted, Scope } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { embeddedPostgres } from "../../src/db/embedded-postgres.js"

const HERE = Path.dirname(fileURLToPath(import.meta.url))

export const MACHINE_URL = "postgres://postgres@127.0.0.1:5432/postgres"

export type ServerChoice =
  | { readonly kind: "given"; readonly url: string }
  | { readonly kind: "machine"; readonly url: string }
  | { readonly kind: "embedded"; readonly reason: string }

export interface ChoiceEnv {
  readonly TEST_DATABASE_URL?: string | undefined
  readonly TEST_EMBEDDED_POSTGRES?: string | undefined
}

/**
 * Which server the run uses. `machineAnswers` is asked only when neither variable decides (a
 * given URL is never probed: if it is down, the tests should say so, not quietly go elsewhere).
 */
export const chooseServer = async (env: ChoiceEnv, machineAnswers: (url: string) => Promise<boolean>): Promise<ServerChoice> => {
  const given = env.TEST_DATABASE_URL
  if (given !== undefined && given !== "") return { kind: "given", url: given }
  if (env.TEST_EMBEDDED_POSTGRES === "1") return { kind: "embedded", reason: "TEST_EMBEDDED_POSTGRES=1" }
  if (await machineAnswers(MACHINE_URL)) return { kind: "machine", url: MACHINE_URL }
  return { kind: "embedded", reason: `nothing accepts ${new URL(MACHINE_URL).host} as postgres without a password` }
}

/** Whether a Postgres at `url` accepts a connection (and answers a query). Never throws. */
export const postgresAnswers = async (url: string): Promise<boolean> => {
  // Generous: a loaded machine answers late, and a false "no" only costs a needless embedded start.
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 15_000 })
  client.on("error", () => undefined)
  try {
    await client.connect()
    await client.query("select 1")
    return true
  } catch {
    return false
  } finally {
    await client.end().catch(() => undefined)
  }
}

/**
 * An embedded cluster in a new temporary directory; `close` stops it and removes the directory.
 * A throwaway cluster need not survive a crash of the machine, so it skips fsync (reloadable
 * settings, no restart): tests then wait on the CPU rather than on the disk.
 */
const startEmbedded = async (): Promise<{ readonly url: string; readonly close: () => Promise<void> }> => {
  const scope = Effect.runSync(Scope.make())
  const dir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-test-pg-"))
  // Postgres runs as the OS user `postgres` when we are root: it must be able to reach the cluster.
  await fs.chmod(dir, 0o755)
  // Vitest answers Ctrl+C with process.exit() and runs no teardown, and a SIGKILL runs nothing:
  // the server, in its own process group, would outlive the run. A detached watcher stops it then.
  const guard = spawn(process.execPath, [Path.join(HERE, "orphan-guard.mjs"), String(process.pid), dir], {
    detached: true,
    stdio: "ignore"
  })
  guard.unref()
  const close = async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await fs.rm(dir, { recursive: true, force: true })
    guard.kill("SIGKILL")
  }
  try {
    const server = await Effect.runPromise(
      embeddedPostgres({ dir: Path.join(dir, "postgres"), port: 0, database: "postgres" }).pipe(
        Scope.extend(scope),
        Logger.withMinimumLogLevel(LogLevel.Warning)
      )
    )
    const url = Redacted.value(server.url)
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      for (const setting of ["fsync", "synchronous_commit", "full_page_writes"]) await client.query(`alter system set ${setting} = off`)
      await client.query("select pg_reload_conf()")
    } finally {
      await client.end()
    }
    return { url, close }
  } catch (error) {
    await close()
    throw error
  }
}

interface Shared {
  readonly url: Promise<string>
  readonly close: () => Promise<void>
  users: number
}

const KEY = Symbol.for("predix.test-database")
const registry = globalThis as { [KEY]?: Shared }

/** The run's server URL; the first caller chooses (and starts an embedded cluster if needed). Pair with `releaseTestDatabase`. */
export const acquireTestDatabase = (log: (line: string) => void = () => undefined): Promise<string> => {
  const existing = registry[KEY]
  if (existing !== undefined) {
    existing.users += 1
    return existing.url
  }
  let stop: () => Promise<void> = async () => undefined
  const url = chooseServer(process.env, postgresAnswers).then(async (choice) => {
    if (choice.kind !== "embedded") return choice.url
    log(`tests: starting an embedded Postgres for this run (${choice.reason})`)
    const server = await startEmbedded()
    stop = server.close
    return server.url
  })
  registry[KEY] = { url, users: 1, close: () => stop() }
  return url
}

/**
 * One user fewer. The last one runs `lastOut` on the server (while it still runs: the run's
 * shared databases are dropped there, never by a user while another may still use them), then
 * stops the embedded cluster, if the run started one.
 */
export const releaseTestDatabase = async (lastOut: (url: string) => Promise<void> = async () => undefined): Promise<void> => {
  const shared = registry[KEY]
  if (shared === undefined) return
  shared.users -= 1
  if (shared.users > 0) return
  delete registry[KEY]
  const url = await shared.url.catch(() => undefined)
  try {
    if (url !== undefined) await lastOut(url)
  } finally {
    await shared.close()
  }
}
