/**
 * Replication lag of read replicas under the indexer's write load: a fresh embedded primary and
 * STANDBYS hot standbys streaming from it (`test/support/standby.ts`: real streaming replication),
 * the committed fixture recording served by a loopback node and indexed into the primary by the
 * real indexer, while a sampler reads, as fast as it can, each standby's distance from the primary:
 *
 * - WAL bytes not yet replayed (`pg_current_wal_lsn() - replay_lsn` of `pg_stat_replication`);
 * - `replay_lag` (the time from a commit on the primary to its replay on the standby);
 * - index checkpoint blocks behind (the figure `DATABASE_READ_MAX_LAG_BLOCKS` bounds).
 *
 * Three phases: a backfill (the first 80 % of the events in BATCHES commits), following the tip
 * (the rest, one head event a commit), and a blue-green re-index of the whole index
 * (`requestBuild` and `followGenerations`, what `predix reindex` and `predix start` do: a new
 * generation built from the log store, then switched to), its checkpoint figure read in the
 * generation being built; then how long the standbys took to replay the switch. Prints each phase's maxima, the WAL it wrote, the bench
 * process's CPU time per event (the indexer and the sampler run in it) and the load average:
 * latency-like figures on a busy machine are noise, so read them with the load. The numbers
 * quoted in docs/read-replicas.md and docs/deployment.md come from this.
 *
 * Usage: npm run bench:replica [-- --standbys 1 --batches 10]
 */
import { Duration, Effect, Exit, Layer, Logger, LogLevel, Redacted, Scope } from "effect"
import * as os from "node:os"
import * as Path from "node:path"
import { makeIndexer } from "../pipeline/run.js"
import { makeRpc } from "../pipeline/source/rpc.js"
import { FIXTURE_RECORDING } from "../src/app.js"
import { followGenerations } from "../src/blue-green.js"
import { pgClientLayer } from "../src/db/database.js"
import { requestBuild } from "../src/db/generations.js"
import { runMigrations } from "../src/db/migrations.js"
import { ReplayChain } from "../tools/replay/chain.js"
import { serveReplay } from "../tools/replay/server.js"
import { tempDir } from "../test/support/postgres.js"
import { makeStandby, scalar, type Standby, startPrimary, streamingStandbys, withClient } from "../test/support/standby.js"

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`)
  return i < 0 ? fallback : Number(process.argv[i + 1])
}
const STANDBYS = arg("standbys", 1)
const BATCHES = arg("batches", 10)

const scope = Effect.runSync(Scope.make())
const run = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) =>
  Effect.runPromise(Scope.extend(effect, scope).pipe(Logger.withMinimumLogLevel(LogLevel.Warning)))

const wait = async (condition: () => Promise<boolean>) => {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 100))
}

/** The generation whose checkpoint the figures follow: public, then the one a re-index builds. */
let generation = "public"
/** Its checkpoint block on `url`; -1 before its first batch (or before its schema exists there). */
const checkpointOf = (url: string) =>
  withClient(url, async (c) => {
    const table = `"${generation}".indexer_checkpoint`
    if ((await c.query("select to_regclass($1) as t", [table])).rows[0]?.t === null) return -1
    return Number((await c.query(`select block_number::text as b from ${table}`)).rows[0]?.b ?? -1)
  })
/** The active generation on `url`. */
const activeOf = async (url: string) => (await scalar(url, "select schema_name from index_generation where state = 'active'")) ?? "public"

const standbys: Array<Standby> = []
try {
  const dir = await run(tempDir("predix-replica-bench"))
  const [chain, primary] = await Promise.all([ReplayChain.load(FIXTURE_RECORDING), run(startPrimary(dir))])
  await run(Effect.provide(runMigrations(), pgClientLayer(Redacted.make(primary.url))))
  for (let i = 0; i < STANDBYS; i++) standbys.push(await makeStandby(primary, Path.join(dir, `replica-${i + 1}`)))
  await wait(async () => (await streamingStandbys(primary.url)) === STANDBYS)

  const node = await run(
    Effect.acquireRelease(
      Effect.promise(() => serveReplay(chain)),
      (s) => Effect.promise(() => s.close())
    )
  )
  const database = await run(Layer.buildWithScope(pgClientLayer(Redacted.make(primary.url)), scope))
  const indexer = await run(
    Effect.provide(makeIndexer({ rpc: makeRpc({ url: node.url }), deployment: chain.meta.deployment, chainId: 130 }), database)
  )

  const total = chain.remaining
  /** Maxima of one phase. */
  const phase = () => ({ bytes: 0, replayMs: 0, blocks: 0, samples: 0 })
  let current = phase()
  let sampling = true
  const sampler = (async () => {
    while (sampling) {
      const into = current
      await withClient(primary.url, async (c) => {
        const rows = (
          await c.query<{ bytes: string | null; replay_ms: string | null }>(
            `select pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::bigint::text as bytes,
                    (extract(epoch from replay_lag) * 1000)::text as replay_ms
               from pg_stat_replication`
          )
        ).rows
        for (const row of rows) {
          into.bytes = Math.max(into.bytes, Number(row.bytes ?? 0))
          into.replayMs = Math.max(into.replayMs, Number(row.replay_ms ?? 0))
        }
      })
      const [p, ...replicas] = await Promise.all([checkpointOf(primary.url), ...standbys.map((s) => checkpointOf(s.url))])
      for (const r of replicas) if (p! >= 0) into.blocks = Math.max(into.blocks, p! - Math.max(r, 0))
      into.samples++
    }
  })()

  const walAt = async () =>
    withClient(primary.url, async (c) => (await c.query<{ lsn: string }>("select pg_current_wal_lsn()::text as lsn")).rows[0]!.lsn)
  const walSince = async (lsn: string) =>
    withClient(primary.url, async (c) =>
      Number(
        (await c.query<{ bytes: string }>("select pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::bigint::text as bytes", [lsn])).rows[0]!.bytes
      )
    )
  const step = (events: number) => {
    chain.advance(events)
    return run(Effect.provide(Effect.flatMap(indexer.loadWindow, indexer.step), database))
  }
  /** Runs `steps` and reports its phase's figures. */
  const measure = async (name: string, events: number, steps: () => Promise<number>) => {
    current = phase()
    const lsn = await walAt()
    const cpuStart = process.cpuUsage()
    const from = await checkpointOf(primary.url)
    const commits = await steps()
    const cpu = process.cpuUsage(cpuStart)
    const figures = current
    const head = await checkpointOf(primary.url)
    const wal = await walSince(lsn)
    await wait(async () => (await Promise.all(standbys.map((s) => checkpointOf(s.url)))).every((b) => b === head))
    const cpuMs = (cpu.user + cpu.system) / 1000
    // `commits` 0: not counted (the re-index commits on its own).
    console.log(`${name}: ${events} head events, blocks ${from + 1}..${head}${commits === 0 ? "" : `, ${commits} commits`}`)
    console.log(`  WAL written            ${wal} bytes${commits === 0 ? "" : ` (${(wal / commits).toFixed(0)} per commit)`}`)
    console.log(`  max WAL behind         ${figures.bytes} bytes`)
    console.log(`  max replay_lag         ${figures.replayMs.toFixed(1)} ms`)
    console.log(`  max checkpoint behind  ${figures.blocks} blocks`)
    console.log(`  samples                ${figures.samples}`)
    console.log(
      `  bench process CPU      ${cpuMs.toFixed(0)} ms (${((cpuMs * 1000) / Math.max(1, events)).toFixed(0)} µs per head event; indexer and sampler)`
    )
  }

  console.log(`primary with ${STANDBYS} hot standby(s), the fixture's ${total} head events`)
  const backfill = Math.floor(total * 0.8)
  await measure(`backfill (${BATCHES} commits)`, backfill, async () => {
    for (let i = 0; i < BATCHES; i++)
      await step(i === BATCHES - 1 ? backfill - Math.ceil(backfill / BATCHES) * (BATCHES - 1) : Math.ceil(backfill / BATCHES))
    return BATCHES
  })
  const rest = chain.remaining
  await measure("following the tip (one head event a commit)", rest, async () => {
    let commits = 0
    while (chain.remaining > 0) {
      await step(1)
      commits++
    }
    return commits
  })

  const reindex = Effect.runSync(Scope.make())
  try {
    // The serving indexer (the chain at its end, it only watches) and a build requested of it.
    await run(
      Effect.forkIn(
        Effect.provide(
          followGenerations({
            rpc: makeRpc({ url: node.url }),
            deployment: chain.meta.deployment,
            chainId: 130,
            pollInterval: 100,
            prepare: Effect.void
          }),
          database
        ),
        reindex
      )
    )
    let switchedAt = 0
    // The first re-index of a fresh database builds index_2 (public is generation 1).
    generation = "index_2"
    await measure("blue-green re-index (build and switch)", total, async () => {
      const { generation: target } = await run(Effect.provide(requestBuild(Duration.hours(1)), database))
      if (target.schema !== generation) throw new Error(`the build is ${target.schema}, not ${generation}`)
      await wait(async () => (await activeOf(primary.url)) === target.schema)
      switchedAt = performance.now()
      return 0
    })
    await wait(async () => (await Promise.all(standbys.map((s) => activeOf(s.url)))).every((g) => g === generation))
    console.log(
      `  switch replayed by every standby ${(performance.now() - switchedAt).toFixed(0)} ms after the primary's was seen (100 ms polls)`
    )
  } finally {
    await Effect.runPromise(Scope.close(reindex, Exit.void))
  }
  sampling = false
  await sampler
  console.log(
    `load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`
  )
} finally {
  for (const standby of standbys) await Effect.runPromise(Scope.close(standby.scope, Exit.void))
  await Effect.runPromise(Scope.close(scope, Exit.void))
}
