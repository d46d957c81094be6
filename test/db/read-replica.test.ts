/**
 * Read replicas (`DATABASE_READ_URL`) against real streaming replication: a fresh embedded primary
 * and one hot standby made from it (`test/support/standby.ts`); the fixture indexed into the
 * primary by the real indexer, a few blocks at a time. The service under test is the compiled
 * `start --only api`; the rotation over more than one target is checked on the layer itself.
 *
 * What it checks: rows committed on the primary reach the API only once the replica replayed them,
 * with headers naming the replica's block; a sign-in (a write) and the session read after it work
 * on the primary while the replica is paused; with two targets reads alternate and the head
 * claimed is the lower one; a replica that lags past the bound or stops leaves rotation, /health
 * lists it, and reads go on from the other target, or from the primary (health degraded only
 * then). Lag is made with `pg_wal_replay_pause()` on the real standby. The lag figures of the
 * deployment notes come from `npm run bench:replica`, not from here.
 */
import { Effect, Exit, Layer, Logger, LogLevel, Redacted, Scope } from "effect"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { IndexedHeadsLive } from "../../http/core/indexed-heads.js"
import { ReadTargets } from "../../http/core/read-targets.js"
import { makeIndexer } from "../../pipeline/run.js"
import { makeRpc } from "../../pipeline/source/rpc.js"
import { FIXTURE_RECORDING } from "../../src/fixture-recording.js"
import { pgClientLayer } from "../../src/db/database.js"
import { runMigrations } from "../../src/db/migrations.js"
import { ReadReplicasLive } from "../../src/db/read-replicas.js"
import { ReplayChain } from "../../tools/replay/chain.js"
import { serveReplay } from "../../tools/replay/server.js"
import { tempDir } from "../support/postgres.js"
import { eventually } from "../support/probes.js"
import { type Running, runCli } from "../support/process.js"
import { signInAt } from "../support/sign-in.js"
import {
  checkpointOf,
  makeStandby,
  type Primary,
  replayPaused,
  scalar,
  type Standby,
  startPrimary,
  streamingStandbys
} from "../support/standby.js"

const CHAIN_ID = 130
const MAX_LAG_BLOCKS = 3
const KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d" as const

const run = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>, scope: Scope.Scope) =>
  Effect.runPromise(Scope.extend(effect, scope).pipe(Logger.withMinimumLogLevel(LogLevel.Warning)))

const tradesOf = async (url: string) => Number((await scalar(url, "select total_trades from protocol_stats where id = 1")) ?? 0)

describe("read replicas over real streaming replication", () => {
  const scope = Effect.runSync(Scope.make())
  let primary: Primary = { dir: "", url: "" }
  let standby: Standby | undefined
  let api: Running | undefined
  let indexerBase = ""
  let backendBase = ""
  const chainPromise = ReplayChain.load(FIXTURE_RECORDING)
  let indexTo: (events: number) => Promise<void> = async () => undefined

  beforeAll(async () => {
    const dir = await run(tempDir("predix-replica"), scope)
    // The recording loads while the primary initialises.
    const [chain, started] = await Promise.all([chainPromise, run(startPrimary(dir), scope)])
    primary = started
    // The standby is copied while the migrations run: it streams them like any later write.
    const [made] = await Promise.all([
      makeStandby(primary, Path.join(dir, "replica")),
      run(Effect.provide(runMigrations(), pgClientLayer(Redacted.make(primary.url))), scope)
    ])
    standby = made
    await eventually("the standby streams from the primary", async () => (await streamingStandbys(primary.url)) === 1)

    // The API starts while the first part of the fixture is indexed into the primary.
    api = runCli(["start", "--only", "api"], {
      DATABASE_URL: primary.url,
      DATABASE_READ_URL: standby.url,
      DATABASE_READ_MAX_LAG_BLOCKS: String(MAX_LAG_BLOCKS),
      INDEXER_PORT: "0",
      BACKEND_PORT: "0",
      LOG_FORMAT: "logfmt",
      LOG_LEVEL: "info"
    })
    const node = await run(
      Effect.acquireRelease(
        Effect.promise(() => serveReplay(chain)),
        (s) => Effect.promise(() => s.close())
      ),
      scope
    )
    // One pool for the whole file (a layer provided to one effect closes with it).
    const database = await run(Layer.buildWithScope(pgClientLayer(Redacted.make(primary.url)), scope), scope)
    const indexer = await run(
      Effect.provide(makeIndexer({ rpc: makeRpc({ url: node.url }), deployment: chain.meta.deployment, chainId: CHAIN_ID }), database),
      scope
    )
    indexTo = async (events) => {
      chain.advance(events)
      await run(Effect.provide(Effect.flatMap(indexer.loadWindow, indexer.step), database), scope)
    }
    // Up to the first trades: the stats the checks read then move with the chain.
    while ((await tradesOf(primary.url)) === 0 && chain.remaining > 0) await indexTo(100)
    const urlOf = async (server: string) =>
      /url="?([^"\s]+)/.exec(await api!.waitFor(new RegExp(`listening[^\\n]*server=${server}`), 60_000))![1]!
    indexerBase = await urlOf("indexer")
    backendBase = await urlOf("backend")
  })

  afterAll(async () => {
    api?.child.kill("SIGTERM")
    if (api !== undefined) await api.exited
    if (standby !== undefined) await Effect.runPromise(Scope.close(standby.scope, Exit.void))
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

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

  /** The primary's checkpoint and trades, once the standby replayed them. */
  const caughtUp = async () => {
    const head = await checkpointOf(primary.url)
    await eventually("the standby replays the primary's checkpoint", async () => (await checkpointOf(standby!.url)) === head)
    return { block: head, trades: await tradesOf(primary.url) }
  }

  it("serves the API from the replica: its rows, its block; writes and own reads on the primary", async () => {
    const start = await caughtUp()
    await eventually("the replica in rotation at the primary's head", async () => {
      const h = await health()
      return h.httpStatus === 200 && h.readReplicas?.[0]?.inRotation === true && (await stats()).block === start.block
    })
    expect(await stats()).toEqual(start)

    // Replay paused: a commit on the primary is not the replica's yet, and the API does not show it.
    // One head event at a time (the replica catching up in between) until one brings new trades.
    const chain = await chainPromise
    let before = start
    for (;;) {
      await replayPaused(standby!.url, true)
      await indexTo(1)
      if ((await tradesOf(primary.url)) > before.trades || chain.remaining === 0) break
      await replayPaused(standby!.url, false)
      before = await caughtUp()
    }
    const after = { block: await checkpointOf(primary.url), trades: await tradesOf(primary.url) }
    expect(after.block - before.block).toBeGreaterThan(0)
    expect(after.block - before.block).toBeLessThanOrEqual(MAX_LAG_BLOCKS)
    expect(after.trades).toBeGreaterThan(before.trades)
    // A poll has seen the primary move past the paused replica (health shows the lag), and the
    // answers still name the replica's block and hold its rows.
    await eventually(
      "a poll sees the replica trail",
      async () => (await health()).readReplicas?.[0]?.lagBlocks === after.block - before.block
    )
    expect((await health()).readReplicas?.[0]?.inRotation).toBe(true)
    for (let i = 0; i < 3; i++) expect(await stats()).toEqual(before)

    // A sign-in writes a session: it lands on the primary (the standby is read-only and paused),
    // and the next request, which reads the session (an own table), finds it.
    const cookie = await signInAt(backendBase, KEY)
    const me = await fetch(`${backendBase}/api/auth/me`, { headers: { cookie } })
    expect(me.status).toBe(200)
    expect(Number(await scalar(primary.url, "select count(*) from auth_session"))).toBeGreaterThan(0)
    expect(Number(await scalar(standby!.url, "select count(*) from auth_session"))).toBe(0)

    // Replay resumed: the rows and the header move together to the primary's block.
    await replayPaused(standby!.url, false)
    await eventually("the API shows the replica's new block", async () => (await stats()).block === after.block)
    expect(await stats()).toEqual(after)
  })

  it("rotates over two targets: reads alternate, the head claimed is the lower one, a lagging target leaves", async () => {
    // The primary named as a second read target stands in for a replica that keeps up. Its own
    // scope: its polls end with this test (the next one stops the standby).
    const local = Effect.runSync(Scope.make())
    try {
      await rotation(local)
    } finally {
      await Effect.runPromise(Scope.close(local, Exit.void))
    }
  })

  const rotation = async (local: Scope.Scope) => {
    const targets = await run(
      Layer.buildWithScope(
        ReadReplicasLive({
          chainId: CHAIN_ID,
          urls: [Redacted.make(standby!.url), Redacted.make(primary.url)],
          maxLagBlocks: MAX_LAG_BLOCKS,
          pollEveryMs: 100
        }).pipe(Layer.provide(IndexedHeadsLive(CHAIN_ID)), Layer.provideMerge(pgClientLayer(Redacted.make(primary.url)))),
        local
      ),
      local
    )
    const use = <A>(effect: Effect.Effect<A, never, ReadTargets>) => Effect.runPromise(Effect.provide(effect, targets))
    /** Whether each of `n` picks ran on the standby (`pg_is_in_recovery`), and the head it came with. */
    const picks = (n: number) =>
      use(
        Effect.forEach(Array.from({ length: n }), () =>
          Effect.flatMap(ReadTargets, (t) => Effect.orDie(t.pick)).pipe(
            Effect.flatMap(({ sql, head }) =>
              Effect.map(Effect.orDie(sql<{ standby: boolean }>`select pg_is_in_recovery() as standby`), (rows) => ({
                standby: rows[0]!.standby,
                block: head?.block ?? null
              }))
            )
          )
        )
      )
    const state = () => use(Effect.map(ReadTargets, (t) => ({ head: t.head()?.block ?? null, replicas: t.replicas() })))

    const start = await caughtUp()
    await eventually("both targets in rotation", async () => (await state()).replicas.every((r) => r.inRotation))
    const both = await picks(4)
    expect(both.filter((p) => p.standby)).toHaveLength(2)
    expect(both.every((p) => p.block === start.block)).toBe(true)

    // The standby paused one block behind: the head claimed stays its block, whichever target answers.
    await replayPaused(standby!.url, true)
    await indexTo(1)
    const ahead = await checkpointOf(primary.url)
    expect(ahead).toBeGreaterThan(start.block)
    await eventually("a poll sees the primary's new block", async () =>
      (await state()).replicas.some((r) => r.indexedBlock === ahead && r.inRotation)
    )
    expect((await state()).head).toBe(start.block)
    expect((await picks(4)).every((p) => p.block === start.block)).toBe(true)

    // Past the bound: the standby leaves rotation and the other target serves at its own head.
    while ((await checkpointOf(primary.url)) - start.block <= MAX_LAG_BLOCKS) await indexTo(MAX_LAG_BLOCKS)
    const head = await checkpointOf(primary.url)
    await eventually("the paused standby is out", async () => (await state()).replicas.filter((r) => r.inRotation).length === 1)
    const out = (await state()).replicas.find((r) => !r.inRotation)!
    expect(out.problem).toMatch(/trails the primary by \d+ blocks/)
    await eventually("the head is the other target's", async () => (await state()).head === head)
    expect((await picks(4)).every((p) => !p.standby && p.block === head)).toBe(true)

    await replayPaused(standby!.url, false)
    await eventually("the standby is back", async () => (await state()).replicas.every((r) => r.inRotation))
  }

  it("takes a lagging replica out of rotation, then a stopped one: the primary reads, health degraded", async () => {
    const start = await caughtUp()
    await eventually("the replica in rotation", async () => (await health()).httpStatus === 200)
    await replayPaused(standby!.url, true)
    while ((await checkpointOf(primary.url)) - start.block <= MAX_LAG_BLOCKS) await indexTo(MAX_LAG_BLOCKS)
    const head = { block: await checkpointOf(primary.url), trades: await tradesOf(primary.url) }

    await eventually("health says no read replica is in rotation", async () => (await health()).httpStatus === 503)
    const lagging = await health()
    expect(lagging.problems).toContain("no read replica is in rotation: the primary serves the reads")
    expect(lagging.readReplicas![0]!.problem).toMatch(/trails the primary by \d+ blocks/)
    // The primary answers now, at its own block.
    await eventually("the primary serves the head", async () => (await stats()).block === head.block)
    expect(await stats()).toEqual(head)

    // Caught up, it comes back; stopped, it leaves again and the primary reads on.
    await replayPaused(standby!.url, false)
    await eventually("the caught-up replica is back", async () => (await health()).httpStatus === 200)
    expect(await stats()).toEqual(head)
    await Effect.runPromise(Scope.close(standby!.scope, Exit.void))
    standby = undefined
    await eventually("the stopped replica is out", async () => (await health()).httpStatus === 503)
    const stopped = await health()
    expect(stopped.readReplicas![0]!.problem).toMatch(/does not answer|in time/)
    expect(await stats()).toEqual(head)
  })
})
