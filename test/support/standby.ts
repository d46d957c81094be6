/**
 * Real streaming replication for the read-replica test and the replica lag bench: an embedded
 * primary (the machine's Postgres cannot be reconfigured) and hot standbys made from it with the
 * embedded package's own binaries. No pg_basebackup: a file copy between `pg_backup_start()` and
 * `pg_backup_stop()`, then `backup_label`, `standby.signal` and `primary_conninfo`, so it runs on a
 * fresh machine. wal_level=replica, max_wal_senders and the loopback `replication` line of
 * pg_hba.conf are Postgres's defaults (initdb).
 */
import { Effect, Logger, LogLevel, Redacted, Scope } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs/promises"
import * as Path from "node:path"
import pg from "pg"
import { embeddedPostgres } from "../../src/db/embedded-postgres.js"

export const REPLICATED_DATABASE = "predix_test"

/** `f` on a fresh connection to `url`, closed after. */
export const withClient = async <A>(url: string, f: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: url })
  client.on("error", () => undefined)
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

/** The first column of the first row of `text` on `url`, as text; null when there is none. */
export const scalar = async (url: string, text: string): Promise<string | null> =>
  withClient(url, async (c) => {
    const rows = (await c.query(text)).rows as Array<Record<string, unknown>>
    const value = rows[0] === undefined ? null : Object.values(rows[0])[0]
    return value === null || value === undefined ? null : String(value)
  })

/** The index checkpoint's block on `url`; -1 before the first commit. */
export const checkpointOf = async (url: string) => Number((await scalar(url, "select block_number from indexer_checkpoint")) ?? -1)

/** Pauses or resumes WAL replay on a standby: what it shows stays put, and its lag grows. */
export const replayPaused = (url: string, paused: boolean) =>
  withClient(url, (c) => c.query(paused ? "select pg_wal_replay_pause()" : "select pg_wal_replay_resume()"))

export interface Primary {
  /** Its `postgres/` directory (the cluster and its password). */
  readonly dir: string
  readonly url: string
}

/**
 * An embedded primary under `root/primary`, in `scope`; it keeps 512 MB of WAL, so a standby that
 * starts streaming late still finds what it needs.
 */
export const startPrimary = (root: string) =>
  Effect.gen(function* () {
    const dir = Path.join(root, "primary", "postgres")
    const server = yield* embeddedPostgres({ dir, port: 0, database: REPLICATED_DATABASE })
    const url = Redacted.value(server.url)
    yield* Effect.promise(() =>
      withClient(url, async (c) => {
        await c.query("alter system set wal_keep_size = '512MB'")
        await c.query("select pg_reload_conf()")
      })
    )
    return { dir, url } satisfies Primary
  })

export interface Standby {
  readonly url: string
  /** Stops the standby (closing it is how a test makes a replica vanish). */
  readonly scope: Scope.CloseableScope
}

/**
 * A hot standby of `primary` under `into`, made by a file copy inside a non-exclusive backup (the
 * primary may be written meanwhile: the standby replays from the backup's start), started on a
 * free port in a scope of its own.
 */
export const makeStandby = async (primary: Primary, into: string): Promise<Standby> => {
  const address = new URL(primary.url)
  const target = Path.join(into, "postgres")
  await withClient(primary.url, async (client) => {
    await client.query("select pg_backup_start('predix replica', true)")
    await fs.mkdir(target, { recursive: true })
    await fs.cp(Path.join(primary.dir, "cluster"), Path.join(target, "cluster"), {
      recursive: true,
      // The server's own run files, and the WAL (the standby streams what it needs from the primary).
      filter: (source) => !/(postmaster\.pid|postmaster\.opts)$/.test(source) && !/\/pg_wal\/./.test(source)
    })
    const stop = await client.query<{ labelfile: string }>("select labelfile from pg_backup_stop(true)")
    await fs.writeFile(Path.join(target, "cluster", "backup_label"), stop.rows[0]!.labelfile)
  })
  await fs.mkdir(Path.join(target, "cluster", "pg_wal", "archive_status"), { recursive: true })
  await fs.copyFile(Path.join(primary.dir, "password"), Path.join(target, "password"))
  await fs.writeFile(Path.join(target, "cluster", "standby.signal"), "")
  const conninfo = `host=${address.hostname} port=${address.port} user=${address.username} password=${decodeURIComponent(address.password)}`
  await fs.appendFile(Path.join(target, "cluster", "postgresql.auto.conf"), `\nprimary_conninfo = '${conninfo}'\n`)
  if (process.getuid?.() === 0) execFileSync("chown", ["-R", "postgres:postgres", into])
  const scope = Effect.runSync(Scope.make())
  const server = await Effect.runPromise(
    Scope.extend(embeddedPostgres({ dir: target, port: 0, database: REPLICATED_DATABASE }), scope).pipe(
      Logger.withMinimumLogLevel(LogLevel.Warning)
    )
  )
  return { url: Redacted.value(server.url), scope }
}

/** How many standbys stream from the primary at `url` now. */
export const streamingStandbys = async (url: string) =>
  withClient(url, async (c) => (await c.query("select 1 from pg_stat_replication where state = 'streaming'")).rowCount ?? 0)
