/**
 * Read replicas (`DATABASE_READ_URL`) against real streaming replication: a fresh embedded primary
 * (the machine's Postgres cannot be reconfigured), and two hot standbys made from it with the
 * embedded package's own binaries (no pg_basebackup: a file copy between `pg_backup_start()` and
 * `pg_backup_stop()`, plus `backup_label`, `standby.signal` and `primary_conninfo`), so it runs on
 * a fresh machine. The service under test is the compiled `start --only api`.
 *
 * What it checks: rows committed on the primary reach the API only once a replica replayed them,
 * with headers naming the replica's block; a sign-in (a write) lands on the primary; a replica
 * that lags past the bound or stops leaves rotation, /health lists it, reads go on from the other
 * replica, then from the primary (health degraded only then). It also prints the replication lag
 * measured while the fixture is indexed (the figure the deployment notes quote).
 */
import { Effect, Exit, Layer, Logger, LogLevel, Redacted, Scope } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs/promises"
import * as Path from "node:path"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeIndexer } from "../../pipeline/run.js"
import { makeRpc } from "../../pipeline/source/rpc.js"
import { FIXTURE_RECORDING } from "../../src/app.js"
import { pgClientLayer } from "../../src/db/database.js"
import { embeddedPostgres } from "../../src/db/embedded-postgres.js"
import { runMigrations } from "../../src/db/migrations.js"
import { ReplayChain } from "../../tools/replay/chain.js"
import { serveReplay } from "../../tools/replay/server.js"
import { tempDir } from "../support/postgres.js"
import { eventually } from "../support/probes.js"
import { type Running, runCli } from "../support/process.js"
import { signInAt } from "../support/sign-in.js"

const DATABASE = "predix_test"
const MAX_LAG_BLOCKS = 3
const KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d" as const

const run = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>, scope: Scope.Scope) =>
  Effect.runPromise(Scope.extend(effect, scope).pipe(Logger.withMinimumLogLevel(LogLevel.Warning)))

const withClient = async <A>(url: string, f: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: url })
  client.on("error", () => undefined)
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

const scalar = async (url: string, text: string): Promise<string | null> =>
  withClient(url, async (c) => {
    const rows = (await c.query(text)).rows as Array<Record<string, unknown>>
    const value = rows[0] === undefined ? null : Object.values(rows[0])[0]
    return value === null || value === undefined ? null : String(value)
  })

const checkpointOf = async (url: string) => Number((await scalar(url, "select block_number from indexer_checkpoint")) ?? -1)
const tradesOf = async (url: string) => Number((await scalar(url, "select total_trades from protocol_stats where id = 1")) ?? 0)

interface Standby {
  readonly url: string
  readonly scope: Scope.CloseableScope
}

/**
 * A hot standby of the primary in `primaryDir` (its `postgres/` directory), made by a file copy
 * inside a non-exclusive backup, started on a free port with `embeddedPostgres`.
 */
const makeStandby = async (primaryDir: string, primaryUrl: string, into: string): Promise<Standby> => {
  const primary = new URL(primaryUrl)
  const target = Path.join(into, "postgres")
  await withClient(primaryUrl, async (client) => {
    await client.query("select pg_backup_start('predix replica test', true)")
    await fs.mkdir(target, { recursive: true })
    await fs.cp(Path.join(primaryDir, "cluster"), Path.join(target, "cluster"), {
      recursive: true,
      // The server's own run files, and the WAL (the standby streams what it needs from the primary).
      filter: (source) => !/(postmaster\.pid|postmaster\.opts)$/.test(source) && !/\/pg_wal\/./.test(source)
    })
    const stop = await client.query<{ labelfile: string }>("select labelfile from pg_backup_stop(true)")
    await fs.writeFile(Path.join(target, "cluster", "backup_label"), stop.rows[0]!.labelfile)
  })
  await fs.mkdir(Path.join(target, "cluster", "pg_wal", "archive_status"), { recursive: true })
  await fs.copyFile(Path.join(primaryDir, "password"), Path.join(target, "password"))
  await fs.writeFile(Path.join(target, "cluster", "standby.signal"), "")
  const conninfo = `host=${primary.hostname} port=${primary.port} user=${primary.username} password=${decodeURIComponent(primary.password)}`
  await fs.appendFile(Path.join(target, "cluster", "postgresql.auto.conf"), `\nprimary_conninfo = '${conninfo}'\n`)
  if (process.getuid?.() === 0) execFileSync("chown", ["-R", "postgres:postgres", into])
  const scope = Effect.runSync(Scope.make())
  const server = await run(embeddedPostgres({ dir: target, port: 0, database: DATABASE }), scope)
  return { url: Redacted.value(server.url), scope }
}

describe("read replicas over real streaming replication", () => {
  const scope = Effect.runSync(Scope.make())
  let primaryUrl = ""
  let replicas: Array<Standby> = []
  let api: Running | undefined
  let indexerBase = ""
  let backendBase = ""
  const chainPromise = ReplayChain.load(FIXTURE_RECORDING)
  let indexTo: (events: number) => Promise<void> = async () => undefined

  beforeAll(async () => {
    const dir = await run(tempDir("predix-replica"), scope)
    const primaryDir = Path.join(dir, "primary", "postgres")
    const primary = await run(embeddedPostgres({ dir: primaryDir, port: 0, database: DATABASE }), scope)
    primaryUrl = Redacted.value(primary.url)
    // wal_level=replica, max_wal_senders and the loopback `replication` line of pg_hba.conf are
    // Postgres's defaults (initdb); kept WAL covers a standby that starts streaming late.
    await withClient(primaryUrl, async (c) => {
      await c.query("alter system set wal_keep_size = '512MB'")
      await c.query("select pg_reload_conf()")
    })
    await run(Effect.provide(runMigrations(), pgClientLayer(primary.url)), scope)

    replicas = [
      await makeStandby(primaryDir, primaryUrl, Path.join(dir, "replica-1")),
      await makeStandby(primaryDir, primaryUrl, Path.join(dir, "replica-2"))
    ]
    await eventually("both standbys stream from the primary", async () =>
      withClient(primaryUrl, async (c) => (await c.query("select 1 from pg_stat_replication where state = 'streaming'")).rowCount === 2)
    )

    // The fixture, played on a loopback node and indexed into the primary in stages by the real indexer.
    const chain = await chainPromise
    const node = await run(
      Effect.acquireRelease(
        Effect.promise(() => serveReplay(chain)),
        (s) => Effect.promise(() => s.close())
      ),
      scope
    )
    // One pool for the whole file (a layer provided to one effect closes with it).
    const database = await run(Layer.buildWithScope(pgClientLayer(primary.url), scope), scope)
    const indexer = await run(
      Effect.provide(makeIndexer({ rpc: makeRpc({ url: node.url }), deployment: chain.meta.deployment, chainId: 130 }), database),
      scope
    )
    indexTo = async (events) => {
      chain.advance(events)
      await run(Effect.provide(Effect.flatMap(indexer.loadWindow, indexer.step), database), scope)
    }
  })

  afterAll(async () => {
    api?.child.kill("SIGTERM")
    if (api !== undefined) await api.exited
    for (const replica of replicas) await Effect.runPromise(Scope.close(replica.scope, Exit.void))
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  const replayPaused = (url: string, paused: boolean) =>
    withClient(url, (c) => c.query(paused ? "select pg_wal_replay_pause()" : "select pg_wal_replay_resume()"))

  const health = async () => {
    const response = await fetch(`${backendBase}/health`)
    const body = (await response.json()) as {
      data: {
        status: string
        problems: Array<string>
        readReplicas?: Array<{ name: string; inRotation: boolean; lagBlocks: number | null; problem: string | null }>
      }
    }
    return { ...body.data, httpStatus: response.status }
  }

  const stats = async () => {
    const response = await fetch(`${indexerBase}/api/stats`)
    expect(response.status).toBe(200)
    const body = (await response.json()) as { data: { totalTrades: number } }
    return { block: Number(response.headers.get("x-indexed-block")), trades: body.data.totalTrades }
  }

  it("measures replication lag while the fixture is indexed", async () => {
    const chain = await chainPromise
    const total = chain.remaining
    let maxBytes = 0
    let maxReplayMs = 0
    let maxBlocks = 0
    let sampling = true
    const samples = (async () => {
      while (sampling) {
        await withClient(primaryUrl, async (c) => {
          const rows = (
            await c.query<{ bytes: string | null; replay_ms: string | null }>(
              `select pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::bigint::text as bytes,
                      (extract(epoch from replay_lag) * 1000)::text as replay_ms
                 from pg_stat_replication`
            )
          ).rows
          for (const row of rows) {
            maxBytes = Math.max(maxBytes, Number(row.bytes ?? 0))
            maxReplayMs = Math.max(maxReplayMs, Number(row.replay_ms ?? 0))
          }
        })
        const [p, r] = await Promise.all([checkpointOf(primaryUrl), checkpointOf(replicas[0]!.url)])
        if (p >= 0) maxBlocks = Math.max(maxBlocks, p - Math.max(r, 0))
      }
    })()
    const started = Date.now()
    // All but the last fifth of the recording, in ten batches (the later stages index the rest).
    for (let i = 0; i < 10; i++) await indexTo(Math.floor((total * 0.8) / 10))
    const elapsed = Date.now() - started
    sampling = false
    await samples
    const head = await checkpointOf(primaryUrl)
    console.log(
      `replica lag while indexing ${Math.floor(total * 0.8)} head events of the fixture up to block ${head} in ${elapsed} ms: ` +
        `max ${maxBytes} WAL bytes behind, max replay_lag ${maxReplayMs.toFixed(1)} ms, max ${maxBlocks} checkpoint blocks behind`
    )
    await eventually("the replicas replay the primary's checkpoint", async () =>
      (await Promise.all(replicas.map((r) => checkpointOf(r.url)))).every((block) => block === head)
    )
  })

  it("serves the API from a replica: its rows, its block; writes on the primary", async () => {
    api = runCli(["start", "--only", "api"], {
      DATABASE_URL: primaryUrl,
      DATABASE_READ_URL: replicas.map((r) => r.url).join(","),
      DATABASE_READ_MAX_LAG_BLOCKS: String(MAX_LAG_BLOCKS),
      INDEXER_PORT: "0",
      BACKEND_PORT: "0",
      LOG_FORMAT: "logfmt",
      LOG_LEVEL: "info"
    })
    const urlOf = async (server: string) =>
      /url="?([^"\s]+)/.exec(await api!.waitFor(new RegExp(`listening[^\\n]*server=${server}`), 60_000))![1]!
    indexerBase = await urlOf("indexer")
    backendBase = await urlOf("backend")
    await eventually("both replicas in rotation", async () => (await health()).readReplicas?.every((r) => r.inRotation) === true)

    // Replay paused on both: a commit on the primary is not theirs yet, and the API does not show it.
    // One head event at a time (the replicas catching up in between) until one brings new trades.
    const chain = await chainPromise
    let before = await checkpointOf(primaryUrl)
    let tradesBefore = await tradesOf(primaryUrl)
    for (;;) {
      for (const r of replicas) await replayPaused(r.url, true)
      await indexTo(1)
      if ((await tradesOf(primaryUrl)) > tradesBefore || chain.remaining === 0) break
      for (const r of replicas) await replayPaused(r.url, false)
      const head = await checkpointOf(primaryUrl)
      await eventually("the replicas catch up", async () =>
        (await Promise.all(replicas.map((r) => checkpointOf(r.url)))).every((b) => b === head)
      )
      before = head
      tradesBefore = await tradesOf(primaryUrl)
    }
    const after = await checkpointOf(primaryUrl)
    expect(after - before).toBeLessThanOrEqual(MAX_LAG_BLOCKS)
    expect(await tradesOf(primaryUrl)).toBeGreaterThan(tradesBefore)
    // Polls come every second: a few answers after that, still the replicas' block and rows.
    await new Promise((resolve) => setTimeout(resolve, 2_500))
    const paused = await stats()
    expect(paused).toEqual({ block: before, trades: tradesBefore })

    // A sign-in writes a session: it lands on the primary (the standbys are read-only and paused),
    // and the next request, which reads the session, finds it.
    const cookie = await signInAt(backendBase, KEY)
    const me = await fetch(`${backendBase}/api/auth/me`, { headers: { cookie } })
    expect(me.status).toBe(200)
    expect(Number(await scalar(primaryUrl, "select count(*) from auth_session"))).toBeGreaterThan(0)

    // Replay resumed: the rows and the header move together to the primary's block.
    for (const r of replicas) await replayPaused(r.url, false)
    await eventually("the API shows the replicas' new block", async () => (await stats()).block === after)
    expect(await stats()).toEqual({ block: after, trades: await tradesOf(primaryUrl) })
  })

  it("takes a lagging replica out of rotation, then a stopped one, and reads on", async () => {
    const [first, second] = replicas as [Standby, Standby]
    await replayPaused(first.url, true)
    const pausedAt = await checkpointOf(first.url)
    const chain = await chainPromise
    while ((await checkpointOf(primaryUrl)) - pausedAt <= MAX_LAG_BLOCKS && chain.remaining > 0) await indexTo(1)
    const head = await checkpointOf(primaryUrl)
    expect(head - pausedAt).toBeGreaterThan(MAX_LAG_BLOCKS)

    await eventually("the lagging replica is out of rotation", async () => {
      const h = await health()
      return h.readReplicas?.filter((r) => !r.inRotation).length === 1
    })
    const lagging = await health()
    expect(lagging.httpStatus).toBe(200)
    expect(lagging.readReplicas!.find((r) => !r.inRotation)!.problem).toMatch(/trails the primary by \d+ blocks/)
    // Every answer now comes from the other replica, at its block (the primary's): never the paused one's.
    await eventually("the other replica serves the head", async () => (await stats()).block === head)
    for (let i = 0; i < 6; i++) expect((await stats()).block).toBe(head)

    // The second stops: no replica is left, health is degraded, and the primary serves the reads.
    await Effect.runPromise(Scope.close(second.scope, Exit.void))
    await eventually("health says no replica is in rotation", async () => (await health()).httpStatus === 503)
    const none = await health()
    expect(none.problems).toContain("no read replica is in rotation: the primary serves the reads")
    expect(none.readReplicas!.every((r) => !r.inRotation)).toBe(true)
    expect(none.readReplicas!.some((r) => r.problem !== null && /does not answer|in time/.test(r.problem))).toBe(true)
    expect(await stats()).toEqual({ block: head, trades: await tradesOf(primaryUrl) })

    // The lagging one catches up and comes back.
    await replayPaused(first.url, false)
    await eventually("the caught-up replica is back", async () => (await health()).httpStatus === 200)
    expect((await stats()).block).toBe(head)
  })
})
