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
 * then). A re-index (`followGenerations`, what `predix start` runs, and `requestBuild`, what
 * `predix reindex` does) builds and switches to a new generation on the primary while requests
 * run: the replica, held before the switch, is out with a reason naming the generations and the
 * primary's new generation answers; once replayed, the replica serves the new generation; no
 * request fails and no answer goes back to the old generation. Lag is made with
 * `pg_wal_replay_pause()` on the real standby. The lag figures of the
 * deployment notes come from `npm run bench:replica`, not from here.
 */
import type { SqlClient } from "@effect/sql"
import type { PgClient } from "@effect/sql-pg"
import { Context, Duration, Effect, Exit, Layer, Logger, LogLevel, Redacted, Scope } from "effect"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { IndexedHeadsLive } from "../../http/core/indexed-heads.js"
import { ReadTargets } from "../../http/core/read-targets.js"
import { makeIndexer } from "../../pipeline/run.js"
import { makeRpc } from "../../pipeline/source/rpc.js"
import { FIXTURE_RECORDING } from "../../src/fixture-recording.js"
import { followGenerations } from "../../src/blue-green.js"
import { pgClientLayer } from "../../src/db/database.js"
import { GenerationsLive } from "../../src/db/generation-targets.js"
import { generationSearchPath, requestBuild } from "../../src/db/generations.js"
import { runMigrations } from "../../src/db/migrations.js"
import { ReadReplicasLive } from "../../src/db/read-replicas.js"
import { ReplayChain } from "../../tools/replay/chain.js"
import { serveReplay } from "../../tools/replay/server.js"
import { tempDir } from "../support/postgres.js"
import { eventually } from "../support/probes.js"
import { type Running, runCli } from "../support/process.js"
import { signInAt } from "../support/sign-in.js"
import {
  makeStandby,
  type Primary,
  replayPaused,
  scalar,
  type Standby,
  startPrimary,
  streamingStandbys,
  withClient
} from "../support/standby.js"

const CHAIN_ID = 130
const MAX_LAG_BLOCKS = 3
const KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d" as const

const run = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>, scope: Scope.Scope) =>
  Effect.runPromise(Scope.extend(effect, scope).pipe(Logger.withMinimumLogLevel(LogLevel.Warning)))

/** The active generation on `url` (a replica: the one it has replayed). */
const activeOf = async (url: string) => (await scalar(url, "select schema_name from index_generation where state = 'active'")) ?? "public"

/** The first column of the first row of `text`, read in the active generation of `url`. */
const activeScalar = (url: string, text: string) =>
  withClient(url, async (c) => {
    const generation = (await c.query("select schema_name from index_generation where state = 'active'")).rows[0]?.schema_name ?? "public"
    await c.query(
      `set search_path = ${generationSearchPath(generation)
        .map((s) => `"${s}"`)
        .join(", ")}`
    )
    const value = ((await c.query(text)).rows as Array<Record<string, unknown>>)[0]
    const first = value === undefined ? null : Object.values(value)[0]
    return first === null || first === undefined ? null : String(first)
  })

const tradesOf = async (url: string) => Number((await activeScalar(url, "select total_trades from protocol_stats where id = 1")) ?? 0)
const checkpointOf = async (url: string) => Number((await activeScalar(url, "select block_number from indexer_checkpoint")) ?? -1)

describe("read replicas over real streaming replication", () => {
  const scope = Effect.runSync(Scope.make())
  let primary: Primary = { dir: "", url: "" }
  let standby: Standby | undefined
  let api: Running | undefined
  let indexerBase = ""
  let backendBase = ""
  const chainPromise = ReplayChain.load(FIXTURE_RECORDING)
  let indexTo: (events: number) => Promise<void> = async () => undefined
  /** The primary's pool of `generation`, for the length of the file. */
  let databaseOf: (generation: string) => Promise<Context.Context<SqlClient.SqlClient | PgClient.PgClient>> = () =>
    Promise.reject(new Error("not started"))
  /** Makes `indexTo` index into `generation` (after a re-index switched to it). */
  let indexInto: (generation: string) => Promise<void> = async () => undefined
  let node = { url: "" }

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
    node = await run(
      Effect.acquireRelease(
        Effect.promise(() => serveReplay(chain)),
        (s) => Effect.promise(() => s.close())
      ),
      scope
    )
    // One pool a generation for the whole file (a layer provided to one effect closes with it).
    databaseOf = (generation) =>
      run(Layer.buildWithScope(pgClientLayer(Redacted.make(primary.url), undefined, generationSearchPath(generation)), scope), scope)
    indexInto = async (generation) => {
      const database = await databaseOf(generation)
      const indexer = await run(
        Effect.provide(makeIndexer({ rpc: makeRpc({ url: node.url }), deployment: chain.meta.deployment, chainId: CHAIN_ID }), database),
        scope
      )
      indexTo = async (events) => {
        chain.advance(events)
        await run(Effect.provide(Effect.flatMap(indexer.loadWindow, indexer.step), database), scope)
      }
    }
    await indexInto("public")
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

  const statsAnswer = async () => {
    const response = await fetch(`${indexerBase}/api/stats`)
    expect(response.status).toBe(200)
    const body = (await response.json()) as { data: { totalTrades: number } }
    return {
      block: Number(response.headers.get("x-indexed-block")),
      trades: body.data.totalTrades,
      generation: response.headers.get("x-indexed-generation")
    }
  }
  const stats = async () => {
    const { block, trades } = await statsAnswer()
    return { block, trades }
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
        }).pipe(
          Layer.provide(GenerationsLive),
          Layer.provide(IndexedHeadsLive(CHAIN_ID)),
          Layer.provideMerge(pgClientLayer(Redacted.make(primary.url)))
        ),
        local
      ),
      local
    )
    const use = <A>(effect: Effect.Effect<A, never, ReadTargets>) => Effect.runPromise(Effect.provide(effect, targets))
    /** Whether each of `n` picks ran on the standby (`pg_is_in_recovery`), and the head it came with. */
    const picks = (n: number) =>
      use(
        Effect.forEach(Array.from({ length: n }), () =>
          Effect.flatMap(ReadTargets, (t) =>
            Effect.orDie(
              t.pick(({ sql, head }) =>
                Effect.map(Effect.orDie(sql<{ standby: boolean }>`select pg_is_in_recovery() as standby`), (rows) => ({
                  standby: rows[0]!.standby,
                  block: head?.block ?? null
                }))
              )
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

  /**
   * A re-index on the primary, the chain standing still at the head indexed so far: the indexer
   * of a database with generations (`followGenerations`, what `predix start` runs) is asked for a
   * build (`requestBuild`, what `predix reindex` does) and runs until it has switched. Returns
   * the new generation; `indexTo` goes on in it.
   */
  const reindex = async () => {
    const chain = await chainPromise
    const building = Effect.runSync(Scope.make())
    try {
      const database = await databaseOf("public")
      await run(
        Effect.forkIn(
          Effect.provide(
            followGenerations({
              rpc: makeRpc({ url: node.url }),
              deployment: chain.meta.deployment,
              chainId: CHAIN_ID,
              pollInterval: 100,
              prepare: Effect.void
            }),
            database
          ),
          building
        ),
        scope
      )
      const { generation } = await run(Effect.provide(requestBuild(Duration.hours(1)), database), scope)
      await eventually(
        "the primary switched to the new generation",
        async () => (await activeOf(primary.url)) === generation.schema,
        120_000
      )
    } finally {
      // Its follower stops; the file's indexer goes on in the new generation.
      await Effect.runPromise(Scope.close(building, Exit.void))
    }
    const next = await activeOf(primary.url)
    await indexInto(next)
    return next
  }

  it("follows a re-index: a replica that has not replayed the switch is out, then serves the new generation; no request fails", async () => {
    const start = await caughtUp()
    await eventually("the replica serves public at the primary's head", async () => {
      const h = await health()
      const answer = await statsAnswer()
      return h.httpStatus === 200 && answer.block === start.block && answer.generation === "public"
    })

    // Requests one after another all along, each answer's status and generation kept in order.
    const answers: Array<{ status: number; generation: string | null }> = []
    let requesting = true
    const requests = (async () => {
      while (requesting) {
        try {
          const response = await fetch(`${indexerBase}/api/markets?limit=5`)
          await response.arrayBuffer()
          answers.push({ status: response.status, generation: response.headers.get("x-indexed-generation") })
        } catch (error) {
          answers.push({ status: 0, generation: String(error) })
        }
        await new Promise((r) => setTimeout(r, 20))
      }
    })()

    // The replica held before the build: it replays neither the new generation nor the switch.
    await replayPaused(standby!.url, true)
    const next = await reindex()
    expect(next).not.toBe("public")
    const head = { block: await checkpointOf(primary.url), trades: await tradesOf(primary.url) }

    // Still on public, the held replica is out, named with the generations; the primary's new one serves.
    await eventually("the held replica is out until it replays the switch", async () => {
      const replica = (await health()).readReplicas?.[0]
      return replica?.inRotation === false && (replica.problem ?? "").includes(next)
    })
    const held = await health()
    expect(held.httpStatus).toBe(503)
    expect(held.readReplicas![0]!.problem).toBe(`on generation public, the primary's is ${next}: out until it replays the switch`)
    expect(await activeOf(standby!.url)).toBe("public")
    await eventually("the primary's new generation answers", async () => (await statsAnswer()).generation === next)
    expect(await statsAnswer()).toEqual({ ...head, generation: next })

    // Replayed, the replica serves the new generation at its own head.
    await replayPaused(standby!.url, false)
    await eventually("the replica is back, on the new generation", async () => {
      const h = await health()
      return h.httpStatus === 200 && h.readReplicas?.[0]?.inRotation === true
    })
    expect(await activeOf(standby!.url)).toBe(next)
    expect(await statsAnswer()).toEqual({ ...head, generation: next })

    // Held again and the index moved on in the new generation: the answers stay the replica's.
    await replayPaused(standby!.url, true)
    await indexTo(1)
    expect(await checkpointOf(primary.url)).toBeGreaterThan(head.block)
    expect(await checkpointOf(standby!.url)).toBe(head.block)
    for (let i = 0; i < 3; i++) expect(await statsAnswer()).toEqual({ ...head, generation: next })
    await replayPaused(standby!.url, false)
    await caughtUp()

    requesting = false
    await requests
    expect(answers.length).toBeGreaterThan(0)
    expect(answers.filter((a) => a.status !== 200)).toEqual([])
    // public until some answer, the new generation from then on, never back.
    const first = answers.findIndex((a) => a.generation === next)
    expect(first).toBeGreaterThan(0)
    expect(answers.slice(0, first).every((a) => a.generation === "public")).toBe(true)
    expect(answers.slice(first).every((a) => a.generation === next)).toBe(true)
  })

  it("keeps a request on its generation's pool across a switch to its end, then closes that pool", async () => {
    // The layer itself over the standby, polling every 100 ms; its own scope.
    const local = Effect.runSync(Scope.make())
    try {
      await poolAcrossSwitch(local)
    } finally {
      await Effect.runPromise(Scope.close(local, Exit.void))
    }
  })

  const poolAcrossSwitch = async (local: Scope.Scope) => {
    const targets = await run(
      Layer.buildWithScope(
        ReadReplicasLive({ chainId: CHAIN_ID, urls: [Redacted.make(standby!.url)], maxLagBlocks: MAX_LAG_BLOCKS, pollEveryMs: 100 }).pipe(
          Layer.provide(GenerationsLive),
          Layer.provide(IndexedHeadsLive(CHAIN_ID)),
          Layer.provideMerge(pgClientLayer(Redacted.make(primary.url)))
        ),
        local
      ),
      local
    )
    const use = <A, E>(effect: Effect.Effect<A, E, ReadTargets>) => Effect.runPromise(Effect.provide(effect, targets))
    const schemaOn = (sql: SqlClient.SqlClient) =>
      Effect.map(Effect.orDie(sql<{ schema: string }>`select current_schema() as schema`), (rows) => rows[0]!.schema)
    /** One request: the generation its head names and the schema its statements read. */
    const request = (during: Effect.Effect<unknown> = Effect.void) =>
      use(
        Effect.flatMap(ReadTargets, (t) =>
          t.pick(({ sql, head }) =>
            Effect.gen(function* () {
              const first = yield* schemaOn(sql)
              yield* during
              return { sql, generation: head?.generation, first, last: yield* schemaOn(sql) }
            })
          )
        )
      )

    await caughtUp()
    const before = await activeOf(primary.url)
    expect(before).not.toBe("public")
    await eventually("the replica in rotation on the active generation", async () => {
      const served = await request()
      return served.generation === before && served.first === before
    })
    // A request that started on it waits until the switch was replayed and polled.
    let release = () => {}
    const gate = new Promise<void>((resolve) => (release = resolve))
    const held = request(Effect.promise(() => gate))
    const next = await reindex()
    await caughtUp()
    await eventually("new requests read the new generation on the replica", async () => {
      const served = await request()
      return served.generation === next && served.first === next && served.last === next
    })
    expect(await use(Effect.map(ReadTargets, (t) => t.replicas()[0]!.inRotation))).toBe(true)
    // The held request read its own generation to the end; its pool closed after it.
    release()
    const ended = await held
    expect(ended).toMatchObject({ generation: before, first: before, last: before })
    const after = await Effect.runPromise(Effect.exit(Effect.orDie(schemaOn(ended.sql))))
    expect(Exit.isFailure(after)).toBe(true)
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
