/**
 * Export benchmark: full exports of large indexed databases, timed as a user runs them
 * (`predix export` in its own process), with its rows/s and peak RSS, at several database sizes
 * to show that memory does not grow with the tables. Then an incremental refresh of the largest.
 *
 * The databases are the pipeline benchmark's kind: a synthetic chain of N events (with reorgs)
 * indexed into Postgres (TEST_DATABASE_URL's server, default 127.0.0.1:5432), one database per
 * size, named predix_bench_export_<N> and kept for the next run (`--fresh` rebuilds them).
 * BENCH_DATABASE_URL exports that database instead (one size, nothing built).
 *
 * Usage: npm run bench:export [-- <events> ...] [--fresh]   (default 250000 1000000)
 */
import { Effect, Logger, LogLevel, Redacted } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { makeIndexer } from "../pipeline/run.js"
import { makeRpc } from "../pipeline/source/rpc.js"
import { pgClientLayer } from "../src/db/database.js"
import { runMigrations } from "../src/db/migrations.js"
import { generateSynthetic } from "../tools/recording/synthetic.js"
import { ReplayChain } from "../tools/replay/chain.js"
import { serveReplay } from "../tools/replay/server.js"

const ROOT = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
const SERVER = process.env["TEST_DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"
const args = process.argv.slice(2)
const fresh = args.includes("--fresh")
const sizes = args.filter((a) => /^\d+$/.test(a)).map(Number)

const withClient = async <A>(url: string, f: (client: pg.Client) => Promise<A>) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

const urlOf = (name: string) => {
  const url = new URL(SERVER)
  url.pathname = `/${name}`
  return url.toString()
}

/** A database holding `events` synthetic events indexed to the head; reused when complete. */
const benchDatabase = async (events: number) => {
  const name = `predix_bench_export_${events}`
  const url = urlOf(name)
  const ready = await withClient(SERVER, async (c) => {
    const exists = (await c.query("select 1 from pg_database where datname = $1", [name])).rowCount === 1
    if (exists && fresh) await c.query(`drop database ${name} with (force)`)
    if (!exists || fresh) {
      await c.query(`create database ${name}`)
      return false
    }
    return withClient(url, async (db) => (await db.query("select 1 from pg_tables where tablename = 'bench_complete'")).rowCount === 1)
  })
  if (ready) return url
  const dir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-bench-export-"))
  try {
    const out = Path.join(dir, "chain.ndjson.gz")
    let t = performance.now()
    const summary = await generateSynthetic({ out, seed: 7, events })
    console.log(
      `  generated ${summary.logs} events (${summary.blocks} blocks, ${summary.reorgs} reorgs) in ${((performance.now() - t) / 1000).toFixed(1)} s`
    )
    const chain = await ReplayChain.load(out)
    chain.advanceAll()
    const server = await serveReplay(chain)
    t = performance.now()
    try {
      await Effect.runPromise(
        Effect.provide(
          Effect.gen(function* () {
            yield* runMigrations()
            const indexer = yield* makeIndexer({ rpc: makeRpc({ url: server.url }), deployment: summary.deployment, chainId: 130 })
            // Backfill to the finalized head, then follow the tip: the window holds undo rows.
            yield* indexer.step(yield* indexer.loadWindow)
          }),
          pgClientLayer(Redacted.make(url))
        ).pipe(Logger.withMinimumLogLevel(LogLevel.Warning))
      )
    } finally {
      await server.close()
    }
    console.log(`  indexed in ${((performance.now() - t) / 1000).toFixed(1)} s`)
    await withClient(url, (db) => db.query("create table bench_complete ()"))
    return url
  } finally {
    await fs.rm(dir, { recursive: true, force: true })
  }
}

interface Summary {
  readonly rows: number
  readonly rows_written: number
  readonly seconds: number
  readonly rows_per_s: number
  readonly peak_rss_mib: number
  readonly cpu_s: number
  readonly mode: string
}

/**
 * Runs a tsx script of this repository as its own process (so its peak RSS is its own) and
 * returns the first line of its output that `pick` accepts; fails with the whole output if it
 * exits non-zero or prints no such line.
 */
const runScript = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, pick: (line: string) => boolean) =>
  new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stdout.on("data", (d: Buffer) => (output += d.toString()))
    child.stderr.on("data", (d: Buffer) => (output += d.toString()))
    child.once("exit", (code) => {
      const line = output.split("\n").find(pick)
      if (code !== 0 || line === undefined) reject(new Error(`${args[0]} failed (${code}):\n${output}`))
      else resolve(line)
    })
  })

/** Runs `predix export` as its own process and returns its summary line's figures. */
const runExport = async (url: string, out: string, extra: ReadonlyArray<string>): Promise<Summary> => {
  const env = { ...process.env, DATABASE_URL: url, LOG_LEVEL: "info" }
  const line = await runScript(["src/main.ts", "export", "--out", out, ...extra], env, (l) => l.includes('message="export written"'))
  const field = (key: string) => /^"?(.*?)"?$/.exec(new RegExp(`${key}=(\\S+)`).exec(line)?.[1] ?? "")![1]!
  return {
    rows: Number(field("rows")),
    rows_written: Number(field("rows_written")),
    seconds: Number(field("seconds")),
    rows_per_s: Number(field("rows_per_s")),
    peak_rss_mib: Number(field("peak_rss_mib")),
    cpu_s: Number(field("cpu_s")),
    mode: field("mode")
  }
}

/** The largest table of the benchmark's databases. */
const LOAD_TABLE = "token_holder"

interface LoadMemory {
  readonly rows: number
  readonly rss_before_mib: number
  readonly peak_rss_mib: number
  readonly seconds: number
}

/** Runs `export-load-memory.ts` in its own process (its peak RSS is the load's alone). */
const runLoadMemory = async (url: string, repeat: number, dir: string) => {
  const work = Path.join(dir, `load-${repeat}`)
  await fs.mkdir(work, { recursive: true })
  try {
    const line = await runScript(["bench/export-load-memory.ts", url, LOAD_TABLE, String(repeat), work], process.env, (l) =>
      l.startsWith("{")
    )
    return JSON.parse(line) as LoadMemory
  } finally {
    await fs.rm(work, { recursive: true, force: true })
  }
}

const dir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-export-out-"))
try {
  const targets = process.env["BENCH_DATABASE_URL"]
    ? [{ label: "BENCH_DATABASE_URL", url: process.env["BENCH_DATABASE_URL"] }]
    : await (async () => {
        const list: Array<{ label: string; url: string }> = []
        for (const events of sizes.length > 0 ? sizes : [250_000, 1_000_000]) {
          console.log(`database with ${events.toLocaleString("en")} events`)
          list.push({ label: `${events.toLocaleString("en")} events`, url: await benchDatabase(events) })
        }
        return list
      })()
  const results: Array<{ label: string; full: Summary; refresh: Summary; size: number }> = []
  for (const target of targets) {
    const out = Path.join(dir, `${results.length}.duckdb`)
    const full = await runExport(target.url, out, ["--full"])
    const size = (await fs.stat(out)).size
    const refresh = await runExport(target.url, out, [])
    results.push({ label: target.label, full, refresh, size })
    console.log(
      `${target.label}: full export of ${full.rows.toLocaleString("en")} rows in ${full.seconds} s = ${full.rows_per_s.toLocaleString("en")} rows/s, ` +
        `peak RSS ${full.peak_rss_mib} MiB, CPU ${full.cpu_s} s, file ${Math.round(size / 2 ** 20)} MiB; refresh (${refresh.mode}, nothing new finalized) ${refresh.seconds} s, ${refresh.rows_written.toLocaleString("en")} rows rewritten, peak RSS ${refresh.peak_rss_mib} MiB`
    )
  }
  if (results.length > 1) {
    const [small, large] = [results[0]!, results[results.length - 1]!]
    console.log(
      `memory vs size: ${(large.full.rows / small.full.rows).toFixed(1)}x the rows, ${(large.full.peak_rss_mib / small.full.peak_rss_mib).toFixed(2)}x the peak RSS`
    )
  }
  // The part of the export's memory that could grow with a table is DuckDB's load; load the
  // largest table of the last database at up to 16 times its size to show where it levels off.
  const largest = targets[targets.length - 1]!
  console.log(`DuckDB load of ${LOAD_TABLE} (${largest.label}) repeated:`)
  for (const repeat of [1, 4, 16]) {
    const load = await runLoadMemory(largest.url, repeat, dir)
    console.log(
      `  x${repeat}: ${load.rows.toLocaleString("en")} rows in ${load.seconds} s, RSS ${load.rss_before_mib} MiB before, peak ${load.peak_rss_mib} MiB (+${load.peak_rss_mib - load.rss_before_mib})`
    )
  }
} finally {
  await fs.rm(dir, { recursive: true, force: true })
}
