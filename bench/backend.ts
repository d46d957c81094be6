/**
 * Backend API benchmark: the committed fixture indexed into a scratch database (DATABASE_URL's
 * server, else 127.0.0.1:5432), the indexer API and the backend served by a separate process on
 * loopback, and autocannon against the market list, market detail, pricing view, quote and the
 * portfolio (`/api/trading/:address/portfolio` over the 1,000 traders with the most positions, asked
 * in turn, so consecutive requests never share an answer). Prints
 * requests/s and latency percentiles per endpoint, then fixed-rate runs on every endpoint (1,000
 * req/s cached, 200 req/s uncached; an open-loop load, bench/open-loop.ts, latency counted from
 * when each request was due) against the targets p99 < 25 ms and p99 < 50 ms.
 *
 * Two configurations: as served (the tiered cache, see http/backend/edge/cache.ts) and with the cache
 * off (every request reads Postgres).
 *
 * `--recording <file.ndjson.gz>` indexes that recording (e.g. the 1M-event synthetic chain `npm run
 * bench` generates into .data/bench) instead of the fixture. The detail, pricing and quote targets
 * are the busiest live market with a pool, whatever the chain.
 *
 * Before the latency runs, each configuration prints what a request costs: the backend process's
 * CPU time per request, the CPU time of the Postgres backends serving it, the database
 * transactions per request and the answer's size, over a fixed number of requests (comparable
 * between runs on a busy machine, where latencies are not).
 *
 * Usage: npm run bench:backend [-- --duration 10 --fixed-duration 20 --rate 1000 --connections 10 --only cached|uncached --recording <file> --keep-db <name>
 *   --targets list,detail,view,quote,portfolio --cost-only --profile <dir>]
 */
import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import autocannon from "autocannon"
import { Context, Effect, Exit, Layer, Logger, LogLevel, Redacted, Scope } from "effect"
import { fork, type ChildProcess } from "node:child_process"
import { createServer } from "node:http"
import * as os from "node:os"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { backendHttpLayer } from "../http/backend/api.js"
import { indexerServerLayer } from "../http/indexer/api.js"
import { API_V8_FLAGS, withoutApiV8Flags } from "../src/api-heap.js"
import { FIXTURE_RECORDING } from "../src/app.js"
import { BuildInfoLive } from "../src/build-info.js"
import { PG_APPLICATION_NAME, pgClientLayer } from "../src/db/database.js"
import { indexRecording, ms } from "./index-recording.js"
import { openLoopApart } from "./open-loop.js"
import { postgresCpuBetween, samplePostgresCpu } from "./postgres-cpu.js"

const quiet = Logger.withMinimumLogLevel(LogLevel.Warning)
const BENCH_RATE_LIMITS = {
  publicPerMinute: 1_000_000_000,
  userPerMinute: 1_000_000_000,
  perDay: 1_000_000_000,
  authPerMinute: 1_000_000_000
}

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`)
  const value = i < 0 ? undefined : Number(process.argv[i + 1])
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : fallback
}

/**
 * The bench database: a scratch one dropped at the end, or with `--keep-db <name>` one kept
 * between runs (`fresh` false when it already exists: indexed by an earlier run, not again).
 */
async function scratchDatabase(keep: string | undefined): Promise<{ url: string; fresh: boolean; drop: () => Promise<void> }> {
  const server = process.env["DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"
  if (keep !== undefined && !/^[a-z_][a-z0-9_]*$/.test(keep)) throw new Error(`--keep-db: ${keep} is not a plain database name`)
  const name = keep ?? `predix_bench_backend_${process.pid}`
  const admin = new pg.Client({ connectionString: server })
  await admin.connect()
  const exists = (await admin.query("select 1 from pg_database where datname = $1", [name])).rowCount === 1
  if (!exists) await admin.query(`create database ${name}`)
  await admin.end()
  const url = new URL(server)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    fresh: !exists,
    drop: async () => {
      if (keep !== undefined) return
      const c = new pg.Client({ connectionString: server })
      await c.connect()
      await c.query(`drop database if exists ${name} with (force)`)
      await c.end()
    }
  }
}

interface Target {
  /** What `--targets` names it by. */
  readonly key: string
  readonly name: string
  readonly path: string
  readonly body?: string
  /** Paths asked in turn (`path` is the first): one endpoint over many distinct keys, so no answer is asked twice in a row. */
  readonly paths?: ReadonlyArray<string>
}

const targets = (id: string, traders: ReadonlyArray<string>): ReadonlyArray<Target> => {
  const portfolios = traders.map((address) => `/api/trading/${address}/portfolio`)
  return [
    { key: "list", name: "markets list", path: "/api/markets?sortBy=volume&limit=20" },
    { key: "detail", name: "market detail", path: `/api/markets/${id}` },
    { key: "view", name: "pricing view", path: `/api/markets/${id}/pricing/view` },
    {
      key: "quote",
      name: "quote",
      path: `/api/markets/${id}/pricing/quote`,
      body: JSON.stringify({ tradeType: "BUY_NO", amountIn: "25" })
    },
    {
      key: "portfolio",
      name: "portfolio",
      path: portfolios[0] ?? "/api/trading/0x0000000000000000000000000000000000000000/portfolio",
      paths: portfolios
    }
  ]
}

/** Traders for the portfolio case: up to `n` addresses with the most positions (the heaviest portfolios), in a fixed order. */
async function busiestTraders(url: string, n: number): Promise<ReadonlyArray<string>> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query<{ address: string }>(
      `select user_address as address from position group by user_address order by count(*) desc, user_address limit $1`,
      [n]
    )
    return rows.map((row) => row.address)
  } finally {
    await client.end()
  }
}

/**
 * The busiest market that still trades and has a pool with liquidity. A chain that ends paused
 * (the synthetic one can) is unpaused in this scratch copy, so the quote is measured at all.
 */
async function indexedHead(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return Number((await client.query<{ n: string }>("select block_number as n from indexer_checkpoint limit 1")).rows[0]?.n ?? 0)
  } finally {
    await client.end()
  }
}

async function busiestLiveMarket(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const unpaused = await client.query(`update pause_state set paused = false where paused`)
    if ((unpaused.rowCount ?? 0) > 0)
      console.log(`(the chain ends paused: ${unpaused.rowCount} pause flags cleared in the scratch database)`)
    const { rows } = await client.query<{ id: string }>(`
      select m.id from market m join amm_pool p on p.market_id = m.id
      where not m.is_resolved and not m.refund_mode and p.initialized and p.liquidity > 0
        and m.end_time > (select coalesce(max(timestamp), 0) from indexed_block)
      order by m.trade_count desc, m.id limit 1`)
    if (rows[0] === undefined) throw new Error("no live market with a pool to benchmark")
    return rows[0].id
  } finally {
    await client.end()
  }
}

const request = (base: string, t: Target) =>
  t.body === undefined
    ? { url: `${base}${t.path}`, ...(t.paths === undefined ? {} : { requests: t.paths.map((path) => ({ path })) }) }
    : { url: `${base}${t.path}`, method: "POST", body: t.body, headers: { "content-type": "application/json" } }

/** The backend process's CPU time so far (user + system, microseconds), asked over IPC. */
const serverCpu = (server: ChildProcess) =>
  new Promise<number>((resolve) => {
    server.once("message", (message) => resolve((message as { cpu: number }).cpu))
    server.send("cpu")
  })

/** Statements the database has run (commits of the bench database: each plain statement is one). */
async function statements(dbUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: dbUrl })
  await client.connect()
  try {
    const { rows } = await client.query<{ n: string }>(
      "select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()"
    )
    return Number(rows[0]!.n)
  } finally {
    await client.end()
  }
}

const COST_REQUESTS = 2_000

/** Distinct traders the portfolio case cycles through (the issue's measurement used 1,000). */
const TRADERS = 1_000

/**
 * What one request costs, the figure that does not depend on how busy the machine is: the backend
 * process's CPU time per request (process.cpuUsage over a fixed number of requests), the CPU time
 * of the Postgres backends serving its pools (`postgres-cpu.ts`) and the database transactions
 * per request (pg_stat_database, which lags by up to its flush interval: read after a pause).
 */
async function costPerRequest(server: ChildProcess, base: string, dbUrl: string, targets: ReadonlyArray<Target>) {
  console.log(
    `cost per request (${COST_REQUESTS} requests, 10 connections): CPU of the backend process and of its Postgres backends, database transactions; load ${loadText()}`
  )
  for (const t of targets) {
    await autocannon({ ...request(base, t), connections: 10, amount: 200 } as unknown as Parameters<typeof autocannon>[0])
    await new Promise((r) => setTimeout(r, 1_000))
    const [cpu0, pg0, tx0] = [await serverCpu(server), await samplePostgresCpu(dbUrl, PG_APPLICATION_NAME), await statements(dbUrl)]
    const result = await autocannon({ ...request(base, t), connections: 10, amount: COST_REQUESTS } as unknown as Parameters<
      typeof autocannon
    >[0])
    const [cpu1, pg1] = [await serverCpu(server), await samplePostgresCpu(dbUrl, PG_APPLICATION_NAME)]
    await new Promise((r) => setTimeout(r, 1_500))
    const tx1 = await statements(dbUrl)
    const backendMs = (cpu1 - cpu0) / 1000 / COST_REQUESTS
    const postgres = postgresCpuBetween(pg0, pg1)
    const postgresMs = postgres.micros / 1000 / COST_REQUESTS
    const bytes = result.throughput.total / COST_REQUESTS
    console.log(
      `  ${t.name.padEnd(15)} backend ${backendMs.toFixed(3)} ms + postgres ${postgresMs.toFixed(3)} ms = ${(backendMs + postgresMs).toFixed(3)} ms CPU/request, ${((tx1 - tx0 - 2) / COST_REQUESTS).toFixed(2)} db transactions/request, ${Math.round(bytes)} bytes/answer${postgres.lost > 0 ? ` (${postgres.lost} Postgres backends ended during the run: their CPU is not counted)` : ""}${result.non2xx + result.errors > 0 ? ` (${result.non2xx} non-2xx, ${result.errors} errors)` : ""}`
    )
  }
}

const loadText = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")

/** What `main` runs against each configuration (the command line's options). */
interface Runs {
  readonly duration: number
  readonly fixedDuration: number
  readonly connections: number
  readonly rate: number
  /** `--targets list,detail,view,quote,portfolio`: these endpoints only (default all). */
  readonly only: ReadonlyArray<string> | undefined
  /** `--cost-only`: the cost per request alone, no throughput or fixed-rate runs. */
  readonly costOnly: boolean
  /** `--profile <dir>`: a CPU profile of the backend process per configuration, written there. */
  readonly profileDir: string | undefined
}

async function suite(label: string, dbUrl: string, cacheBytes: number, o: Runs & { market: string; traders: ReadonlyArray<string> }) {
  const TARGETS = targets(o.market, o.traders).filter((t) => o.only === undefined || o.only.includes(t.key))
  const server = fork(fileURLToPath(import.meta.url), ["--serve", dbUrl, String(cacheBytes)], {
    // With --profile the backend process writes a V8 CPU profile there as it exits.
    // The API process's V8 flags, as `npm start` gives them (src/api-heap.ts).
    execArgv: [
      ...withoutApiV8Flags(process.execArgv),
      ...API_V8_FLAGS,
      ...(o.profileDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${o.profileDir}`])
    ],
    stdio: ["ignore", "inherit", "inherit", "ipc"]
  })
  try {
    const base = await new Promise<string>((resolve, reject) => {
      server.once("message", (message) => resolve((message as { url: string }).url))
      server.once("exit", (code) => reject(new Error(`server exited with ${code}`)))
    })
    for (const t of TARGETS) {
      const response = await fetch(
        request(base, t).url,
        t.body === undefined ? {} : { method: "POST", body: t.body, headers: { "content-type": "application/json" } }
      )
      if (response.status !== 200) throw new Error(`${t.path} answered ${response.status}: ${await response.text()}`)
    }
    console.log(`\n== ${label} (backend in its own process at ${base})`)
    await costPerRequest(server, base, dbUrl, TARGETS)
    if (o.costOnly) return
    console.log(`throughput: ${o.connections} connections, ${o.duration} s per endpoint after a 2 s warm-up`)
    console.log("endpoint        req/s     p50        p90        p99        max        non-2xx/errors")
    for (const t of TARGETS) {
      await autocannon({ ...request(base, t), connections: o.connections, duration: 2 })
      const r = await autocannon({ ...request(base, t), connections: o.connections, duration: o.duration })
      console.log(
        `${t.name.padEnd(15)} ${Math.round(r.requests.average).toString().padStart(6)}    ${ms(r.latency.p50).padEnd(10)} ${ms(r.latency.p90).padEnd(10)} ${ms(r.latency.p99).padEnd(10)} ${ms(r.latency.max).padEnd(10)} ${r.non2xx}/${r.errors}`
      )
    }
    // The issue's targets: p99 < 25 ms at 1,000 req/s cached, p99 < 50 ms at 200 req/s uncached.
    const target = cacheBytes > 0 ? { rate: o.rate, p99: 25 } : { rate: 200, p99: 50 }
    console.log(
      `fixed rate (open loop, bench/open-loop.ts, in its own process): ${target.rate} req/s for ${o.fixedDuration} s per endpoint after 2 s at that rate; latency from when each request was due`
    )
    console.log("endpoint        achieved   p50        p90        p99        max        non-2xx/errors  p99 < " + target.p99 + " ms")
    for (const t of TARGETS) {
      const load = {
        url: `${base}${t.path}`,
        ...(t.paths === undefined ? {} : { paths: t.paths }),
        rate: target.rate,
        ...(t.body === undefined ? {} : { method: "POST" as const, body: t.body })
      }
      // In a process of its own: this one serves the indexer API (see bench/open-loop.ts).
      await openLoopApart({ ...load, durationS: 2 })
      const r = await openLoopApart({ ...load, durationS: o.fixedDuration })
      const met = r.p99 < target.p99 && r.achievedRate >= target.rate * 0.98 && r.non2xx + r.errors === 0
      console.log(
        `${t.name.padEnd(15)} ${Math.round(r.achievedRate).toString().padStart(5)}/s    ${ms(r.p50).padEnd(10)} ${ms(r.p90).padEnd(10)} ${ms(r.p99).padEnd(10)} ${ms(r.max).padEnd(10)} ${`${r.non2xx}/${r.errors}`.padEnd(15)} ${met ? "met" : "NOT met"}`
      )
    }
  } finally {
    server.disconnect()
    await new Promise((resolve) => (server.exitCode === null ? server.once("exit", resolve) : resolve(undefined)))
  }
}

async function main() {
  const text = (name: string) => {
    const at = process.argv.indexOf(`--${name}`)
    return at < 0 ? undefined : process.argv[at + 1]
  }
  const runs: Runs = {
    duration: option("duration", 10),
    connections: option("connections", 10),
    rate: option("rate", 1_000),
    fixedDuration: option("fixed-duration", 20),
    only: text("targets")?.split(","),
    costOnly: process.argv.includes("--cost-only"),
    profileDir: text("profile")
  }
  const only = text("only")
  const recording = text("recording") ?? FIXTURE_RECORDING
  const keep = text("keep-db")
  const db = await scratchDatabase(keep)
  try {
    const started = performance.now()
    const head = db.fresh ? await indexRecording(db.url, recording) : await indexedHead(db.url)
    const market = await busiestLiveMarket(db.url)
    const traders = await busiestTraders(db.url, TRADERS)
    console.log(
      `${db.fresh ? (recording === FIXTURE_RECORDING ? "fixture" : recording) : "kept database (indexed by an earlier run)"} indexed to block ${head} in ${((performance.now() - started) / 1000).toFixed(1)} s; target market ${market}; portfolios of ${traders.length} traders; ${os.cpus().length} cores, load ${loadText()}`
    )
    if (only !== "uncached") await suite("as served: tiered cache", db.url, 64 << 20, { ...runs, market, traders })
    if (only !== "cached") await suite("cache off: every request reads Postgres", db.url, 0, { ...runs, market, traders })
  } finally {
    await db.drop()
  }
}

if (process.argv[2] === "--serve") {
  const database = pgClientLayer(Redacted.make(process.argv[3] ?? ""))
  const cacheBytes = Number(process.argv[4] ?? 64 << 20)
  const scope = Effect.runSync(Scope.make())
  const tcp = (context: Context.Context<HttpServer.HttpServer>) => {
    const address = Context.get(context, HttpServer.HttpServer).address
    return address._tag === "TcpAddress" ? `http://127.0.0.1:${address.port}` : ""
  }
  const indexerUrl = tcp(
    await Effect.runPromise(
      Layer.buildWithScope(indexerServerLayer(130, { port: 0, host: "127.0.0.1" }).pipe(Layer.provide(database)), scope).pipe(quiet)
    )
  )
  // Rate limits raised far above any load this bench makes (the limiter still counts every request).
  const backend = backendHttpLayer({ chainId: 130, indexerUrl, cacheBytes, rateLimits: BENCH_RATE_LIMITS }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
    Layer.provide([database, BuildInfoLive])
  )
  process.send?.({ url: tcp(await Effect.runPromise(Layer.buildWithScope(backend, scope).pipe(quiet))) })
  process.on("message", (message) => {
    if (message !== "cpu") return
    const usage = process.cpuUsage()
    process.send?.({ cpu: usage.user + usage.system })
  })
  process.on("disconnect", () => void Effect.runPromise(Scope.close(scope, Exit.void)).finally(() => process.exit(0)))
} else {
  await main()
}
