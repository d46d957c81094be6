/**
 * End-to-end pipeline benchmark: a generated chain served over local JSON-RPC by a separate
 * replay process, indexed into Postgres (DATABASE_URL, or an embedded cluster in a temporary
 * directory). Prints events/s end to end, the time split, and peak memory.
 *
 * Usage: npm run bench [-- <logs>] [--start]   (default 1,500,000 logs)
 *
 * `--start` runs the whole service instead, as `npm start` runs it (API process, notification
 * consumer, indexer child; `bench/start.ts`), until the finalized block is indexed, and prints
 * its time and each process's Postgres work. Without it the indexer alone runs in this process
 * and the split below is printed, with its Postgres work counted at the wire.
 *
 * The argument is the number of logs generated. About two thirds of them are logs of the
 * contracts the indexer watches; the rest are collateral-token transfers, which it does not
 * fetch. The default 1.5 million therefore gives just over a million indexed events.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Logger, LogLevel, Redacted } from "effect"
import { spawn } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { SINK_TABLES } from "../pipeline/tables.js"
import { makeIndexer } from "../pipeline/run.js"
import { makeRpc } from "../pipeline/source/rpc.js"
import { embeddedPostgres } from "../src/db/embedded-postgres.js"
import { pgClientLayer } from "../src/db/database.js"
import { WireCounters } from "../src/db/wire-counters.js"
import { benchStart } from "./start.js"
import { runMigrations } from "../src/db/migrations.js"
import type { Deployment } from "../schema/deployment.js"

const args = process.argv.slice(2)
const startMode = args.includes("--start")
const events = Number(args.find((a) => a !== "--start") ?? 1_500_000)
const dir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-bench-"))
await fs.chmod(dir, 0o755)
// Generated chains are kept in .data/bench, named by size and by the generator's source, so a
// second run skips the generation (about 40 s per million events) and a changed generator does not.
const generator = createHash("sha256")
for (const file of [
  "tools/recording/synthetic.ts",
  "tools/recording/encode.ts",
  "tools/recording/format.ts",
  "tools/recording/io.ts",
  "schema/catalog.ts"
])
  generator.update(await fs.readFile(file))
const chains = Path.resolve(".data/bench")
const chainName = `chain-${events}-seed1-${generator.digest("hex").slice(0, 12)}`
const out = Path.join(chains, `${chainName}.ndjson.gz`)
/** Runs the CLI in a child process (so its memory is not the indexer's); resolves when it exits 0. */
const cli = (args: ReadonlyArray<string>) =>
  new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts", ...args], { stdio: ["ignore", "ignore", "inherit"] })
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`predix ${args[0]} exited with ${code}`))))
  })

let t = performance.now()
const deploymentFile = Path.join(chains, `${chainName}.deployment.json`)
if (
  await fs.access(deploymentFile).then(
    () => false,
    () => true
  )
) {
  await fs.mkdir(chains, { recursive: true })
  const partial = Path.join(dir, "chain.ndjson.gz")
  await cli(["synthetic", "--out", partial, "--events", String(events), "--seed", "1"])
  // The recording first, the deployment last: a deployment file means a whole chain.
  await fs.copyFile(partial, out)
  await fs.copyFile(Path.join(dir, "chain.deployment.json"), deploymentFile)
  console.log(
    `generated ${events.toLocaleString("en")} logs in ${((performance.now() - t) / 1000).toFixed(1)} s (kept in ${Path.relative(".", chains)})`
  )
} else console.log(`generated chain of ${events.toLocaleString("en")} logs reused from ${Path.relative(".", out)}`)
const deployment = JSON.parse(await fs.readFile(deploymentFile, "utf8")) as Deployment

/**
 * Starts the replay node on a port it picks itself and resolves with its URL once its
 * `replaying` line names it; rejects if it exits first (a fixed port could be taken).
 */
const startReplay = (recording: string) =>
  new Promise<{ readonly url: string; readonly child: ReturnType<typeof spawn> }>((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts", "replay", "--recording", recording, "--port", "0"], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    let seen = ""
    child.stdout!.setEncoding("utf8")
    child.stdout!.on("data", (chunk: string) => {
      seen += chunk
      const url = /message=replaying\b.*?\burl=(http:\/\/\S+)/.exec(seen)?.[1]
      if (url !== undefined) {
        child.stdout!.removeAllListeners("data")
        child.stdout!.resume()
        resolve({ url, child })
      }
    })
    child.on("exit", (code) => reject(new Error(`the replay node exited (${code}) before serving: ${seen.slice(-500)}`)))
  })

const { url, child: replay } = await startReplay(out)

/** CPU seconds (user + system) a local process has used so far, from /proc; 0 where unreadable. */
const processCpu = async (pid: number) => {
  const stat = await fs.readFile(`/proc/${pid}/stat`, "utf8").catch(() => "")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) / 100
}

const program = Effect.gen(function* () {
  const dbUrl = process.env["DATABASE_URL"]
    ? process.env["DATABASE_URL"]
    : Redacted.value((yield* embeddedPostgres({ dir: Path.join(dir, "pg"), port: 0, database: "bench" })).url)
  if (startMode) {
    const rpc = makeRpc({ url })
    const finalized = (yield* rpc.header("finalized")).number
    return yield* Effect.promise(() => benchStart({ databaseUrl: dbUrl, rpcUrl: url, deploymentFile, finalized }))
  }
  const counters = new WireCounters()
  return yield* Effect.provide(
    Effect.gen(function* () {
      yield* runMigrations()
      // The chain lives in the replay process only, so the RSS below is the indexer's own.
      const rpc = makeRpc({ url })
      const finalized = (yield* rpc.header("finalized")).number
      const head = (yield* rpc.header("latest")).number
      const indexer = yield* makeIndexer({ rpc, deployment, chainId: 130, concurrency: 4, logStore: process.env["LOG_STORE"] !== "off" })
      let peak = 0
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 200)
      t = performance.now()
      const cpu = process.cpuUsage()
      const replayCpu = yield* Effect.promise(() => processCpu(replay.pid!))
      yield* indexer.indexTo(finalized, head)
      const seconds = (performance.now() - t) / 1000
      const cpuUsed = process.cpuUsage(cpu)
      const replayUsed = (yield* Effect.promise(() => processCpu(replay.pid!))) - replayCpu
      // The Postgres backends of this run (the pool keeps them open): their whole life is this run.
      const backends = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql.unsafe<{ pid: number }>(
          `select pid from pg_stat_activity where datname = current_database() and backend_type = 'client backend'`
        )
      )
      const postgresUsed = (yield* Effect.promise(() => Promise.all(backends.map((b) => processCpu(b.pid))))).reduce((a, b) => a + b, 0)
      clearInterval(sampler)
      const s = indexer.stats()
      console.log(
        `indexed ${s.events.toLocaleString("en")} events of the finalized chain (${(finalized - deployment.deployBlock + 1).toLocaleString("en")} blocks, ${s.batches} batches) in ${seconds.toFixed(1)} s`
      )
      console.log(`end to end: ${Math.round(s.events / seconds).toLocaleString("en")} events/s`)
      // Two threads: the backfill thread fetches and decodes (reading answers is timed where it
      // runs, decoding per range); the indexing thread folds each decoded range into the rows as
      // it arrives and writes a batch about every second, a batch's write (a span, with
      // Postgres's time) overlapping the next ranges' folds.
      console.log(
        `backfill thread: reading answers ${(s.readMs / 1000).toFixed(1)} s, decoding ${(s.decodeMs / 1000).toFixed(1)} s (HTTP and GC besides); ` +
          `indexing thread: folding ${((s.loadMs + s.reduceMs) / 1000).toFixed(1)} s, ` +
          `writes ${(s.writeMs / 1000).toFixed(1)} s (spans, Postgres's time included, overlapping the folds)`
      )
      console.log(
        `CPU: indexer ${((cpuUsed.user + cpuUsed.system) / 1e6).toFixed(1)} s (all its threads, GC included), Postgres backends ${postgresUsed.toFixed(1)} s, ` +
          `JSON-RPC replay node ${replayUsed.toFixed(1)} s (2 cores here)`
      )
      console.log(`peak RSS of the indexing process: ${Math.round(peak / 2 ** 20)} MiB`)
      const w = counters.snapshot()
      const per10k = (x: number) => Math.round((x * 10_000) / Math.max(s.events, 1)).toLocaleString("en")
      console.log(
        `Postgres work (migrations included, at the wire): ${w.statements.toLocaleString("en")} statements, ${w.rowsWritten.toLocaleString("en")} rows written, ` +
          `${(w.bytesSent / 2 ** 20).toFixed(1)} MiB sent; per 10k events: ${per10k(w.statements)} statements, ${per10k(w.rowsWritten)} rows, ${per10k(w.bytesSent)} bytes`
      )
      const sizes = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql.unsafe<{ db: string; store: string }>(
          `select pg_database_size(current_database())::text as db, coalesce(pg_total_relation_size(to_regclass('log_store')), 0)::text as store`
        )
      )
      console.log(
        `Postgres bytes: database ${(Number(sizes[0]!.db) / 2 ** 20).toFixed(1)} MiB, of which the log store ${(Number(sizes[0]!.store) / 2 ** 20).toFixed(1)} MiB`
      )
      if (process.env["REINDEX"] === "1") {
        // A re-index as a migration starts one: the derived tables and the checkpoint emptied, the
        // log store kept. With the store it replays it; with LOG_STORE=off it fetches everything
        // again from the replay node, the comparison.
        yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql.unsafe(`truncate ${[...SINK_TABLES, "undo_log", "indexed_block", "indexer_checkpoint"].join(", ")}`)
        )
        const backendCpu = Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql.unsafe<{ pid: number }>(
            `select pid from pg_stat_activity where datname = current_database() and backend_type = 'client backend'`
          )
        ).pipe(
          Effect.flatMap((rows) => Effect.promise(() => Promise.all(rows.map(async (b) => [b.pid, await processCpu(b.pid)] as const)))),
          Effect.map((pairs) => new Map(pairs))
        )
        const again = yield* makeIndexer({ rpc, deployment, chainId: 130, concurrency: 4, logStore: process.env["LOG_STORE"] !== "off" })
        const wireBefore = counters.snapshot()
        const postgresBefore = yield* backendCpu
        const replayBefore = yield* Effect.promise(() => processCpu(replay.pid!))
        const cpuBefore = process.cpuUsage()
        const r = performance.now()
        yield* again.indexTo(finalized, head)
        const reSeconds = (performance.now() - r) / 1000
        const reCpu = process.cpuUsage(cpuBefore)
        const replayCpuUsed = (yield* Effect.promise(() => processCpu(replay.pid!))) - replayBefore
        let postgresCpu = 0
        for (const [pid, total] of yield* backendCpu) postgresCpu += total - (postgresBefore.get(pid) ?? 0)
        const wire = counters.snapshot()
        const a = again.stats()
        console.log(
          `re-index (${process.env["LOG_STORE"] === "off" ? "from the JSON-RPC node" : "from the log store"}): ` +
            `${a.events.toLocaleString("en")} events in ${reSeconds.toFixed(1)} s = ${Math.round(a.events / reSeconds).toLocaleString("en")} events/s ` +
            `(decoding ${(a.decodeMs / 1000).toFixed(1)} s, folding ${((a.loadMs + a.reduceMs) / 1000).toFixed(1)} s, writes ${(a.writeMs / 1000).toFixed(1)} s)`
        )
        console.log(
          `re-index CPU: indexer ${((reCpu.user + reCpu.system) / 1e6).toFixed(1)} s (all its threads), Postgres backends ${postgresCpu.toFixed(1)} s, ` +
            `JSON-RPC replay node ${replayCpuUsed.toFixed(1)} s; Postgres work: ${(wire.statements - wireBefore.statements).toLocaleString("en")} statements, ` +
            `${((wire.bytesSent - wireBefore.bytesSent) / 2 ** 20).toFixed(1)} MiB sent, ${((wire.bytesReceived - wireBefore.bytesReceived) / 2 ** 20).toFixed(1)} MiB received`
        )
      }
    }),
    pgClientLayer(Redacted.make(dbUrl), counters)
  )
}).pipe(Effect.scoped, Logger.withMinimumLogLevel(LogLevel.Warning))

try {
  await Effect.runPromise(program)
} finally {
  replay.kill("SIGTERM")
  await fs.rm(dir, { recursive: true, force: true })
}
