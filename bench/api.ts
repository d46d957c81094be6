/**
 * Indexer API benchmark: the committed fixture indexed into Postgres (a scratch database on
 * DATABASE_URL's server, else on 127.0.0.1:5432, else an embedded cluster in a temporary
 * directory), the API served by a separate process on loopback, and autocannon against the
 * market list, market detail, trades, orderbook and candles. Prints requests/s and latency
 * percentiles per endpoint, then a fixed-rate run at 1,000 requests/s on market detail (latency
 * corrected for coordinated omission) against the target p99 < 20 ms.
 *
 * Two configurations: as served (answers cached per indexed head, see
 * http/indexer/response-cache.ts) and with the cache off (every request reads Postgres).
 *
 * Usage: npm run bench:api [-- --duration 10 --connections 10 --rate 1000 --only cached|uncached]
 */
import { HttpServer } from "@effect/platform"
import autocannon from "autocannon"
import { Context, Effect, Exit, Layer, Logger, LogLevel, Redacted, Scope } from "effect"
import { fork } from "node:child_process"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { indexerServerLayer } from "../http/indexer/api.js"
import { FIXTURE_RECORDING } from "../src/app.js"
import { pgClientLayer } from "../src/db/database.js"
import { embeddedPostgres } from "../src/db/embedded-postgres.js"
import { indexRecording, ms } from "./index-recording.js"

const quiet = Logger.withMinimumLogLevel(LogLevel.Warning)

// ---------------------------------------------------------------------------------------------
// The driver.

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`)
  const value = i < 0 ? undefined : Number(process.argv[i + 1])
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : fallback
}

/** A database for the run and how to get rid of it. */
async function database(): Promise<{ url: string; where: string; drop: () => Promise<void> }> {
  const server = process.env["DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"
  const name = `predix_bench_api_${process.pid}`
  const admin = new pg.Client({ connectionString: server, connectionTimeoutMillis: 2_000 })
  try {
    await admin.connect()
    await admin.query(`create database ${name}`)
    await admin.end()
    const url = new URL(server)
    url.pathname = `/${name}`
    return {
      url: url.toString(),
      where: `${url.hostname}:${url.port || 5432} (scratch database ${name})`,
      drop: async () => {
        const c = new pg.Client({ connectionString: server })
        await c.connect()
        await c.query(`drop database if exists ${name} with (force)`)
        await c.end()
      }
    }
  } catch {
    await admin.end().catch(() => undefined)
    const dir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-bench-api-"))
    await fs.chmod(dir, 0o755)
    const scope = Effect.runSync(Scope.make())
    const embedded = await Effect.runPromise(
      Scope.extend(embeddedPostgres({ dir: Path.join(dir, "pg"), port: 0, database: "bench" }), scope).pipe(quiet)
    )
    return {
      url: Redacted.value(embedded.url),
      where: `embedded Postgres on port ${embedded.port}`,
      drop: async () => {
        await Effect.runPromise(Scope.close(scope, Exit.void))
        await fs.rm(dir, { recursive: true, force: true })
      }
    }
  }
}

async function main() {
  const duration = option("duration", 10)
  const connections = option("connections", 10)
  const rate = option("rate", 1_000)
  const onlyAt = process.argv.indexOf("--only")
  const only = onlyAt < 0 ? undefined : process.argv[onlyAt + 1]
  const db = await database()
  try {
    const started = performance.now()
    const head = await indexRecording(db.url, FIXTURE_RECORDING)
    console.log(`database: ${db.where}; fixture indexed to block ${head} in ${((performance.now() - started) / 1000).toFixed(1)} s`)
    console.log(
      `machine: ${os.cpus().length} cores, load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")} (before the runs)`
    )
    const configurations: Array<[string, number]> = [
      ["as served: answers cached per indexed head", 64 << 20],
      ["cache off: every request reads Postgres", 0]
    ]
    for (const [label, cacheBytes] of configurations) {
      if (only !== undefined && !label.startsWith(only === "cached" ? "as served" : "cache off")) continue
      await suite(label, db.url, cacheBytes, { duration, connections, rate })
    }
  } finally {
    await db.drop()
  }
}

const TARGETS: ReadonlyArray<readonly [string, string]> = [
  ["market list", "/api/markets?sort=volume&limit=20"],
  ["market detail", "/api/markets/15"],
  ["trades", "/api/markets/15/trades?limit=50"],
  ["orderbook", "/api/markets/23/orderbook"],
  ["candles", "/api/markets/15/candles?timeframe=1m&limit=100"]
]

/** One server process with `cacheBytes`, every target at full speed, then market detail at a fixed rate. */
async function suite(label: string, dbUrl: string, cacheBytes: number, o: { duration: number; connections: number; rate: number }) {
  const server = fork(fileURLToPath(import.meta.url), ["--serve", dbUrl, String(cacheBytes)], {
    execArgv: process.execArgv,
    stdio: ["ignore", "inherit", "inherit", "ipc"]
  })
  try {
    const base = await new Promise<string>((resolve, reject) => {
      server.once("message", (message) => resolve((message as { url: string }).url))
      server.once("exit", (code) => reject(new Error(`API server exited with ${code}`)))
    })
    for (const [, path] of TARGETS) {
      const response = await fetch(`${base}${path}`)
      if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${await response.text()}`)
    }
    console.log(`\n== ${label} (API in its own process at ${base})`)
    console.log(`throughput: ${o.connections} connections, ${o.duration} s per endpoint after a 2 s warm-up`)
    console.log("endpoint        req/s     p50        p90        p99        max        non-2xx/errors")
    for (const [name, path] of TARGETS) {
      await autocannon({ url: `${base}${path}`, connections: o.connections, duration: 2 })
      const r = await autocannon({ url: `${base}${path}`, connections: o.connections, duration: o.duration })
      console.log(
        `${name.padEnd(15)} ${Math.round(r.requests.average).toString().padStart(6)}    ${ms(r.latency.p50).padEnd(10)} ${ms(r.latency.p90).padEnd(10)} ${ms(r.latency.p99).padEnd(10)} ${ms(r.latency.max).padEnd(10)} ${r.non2xx}/${r.errors}`
      )
    }
    const fixedDuration = Math.max(o.duration, 20)
    // 20 connections at 50 req/s each: autocannon paces each connection with its own timer, so
    // many slow connections fire in bursts that measure its scheduler more than the server.
    const fixed = await autocannon({ url: `${base}/api/markets/15`, connections: 20, duration: fixedDuration, overallRate: o.rate })
    const sent = fixed.requests.total / fixed.duration
    console.log(
      `fixed rate: market detail at ${o.rate} req/s for ${fixedDuration} s (20 connections, latency corrected for coordinated omission)`
    )
    console.log(
      `  achieved ${Math.round(sent)} req/s; p50 ${ms(fixed.latency.p50)}, p90 ${ms(fixed.latency.p90)}, p99 ${ms(fixed.latency.p99)}, p99.9 ${ms(fixed.latency.p99_9)}, max ${ms(fixed.latency.max)}; non-2xx ${fixed.non2xx}, errors ${fixed.errors}`
    )
    console.log(`  target p99 < 20 ms at ${o.rate} req/s: ${fixed.latency.p99 < 20 && sent >= o.rate * 0.98 ? "met" : "NOT met"}`)
    console.log(
      `  load average after: ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")}`
    )
  } finally {
    server.disconnect()
    await new Promise((resolve) => (server.exitCode === null ? server.once("exit", resolve) : resolve(undefined)))
  }
}

// ---------------------------------------------------------------------------------------------
// The server process: `api.ts --serve <database url>` serves the API and reports its URL over IPC.

if (process.argv[2] === "--serve") {
  const database = pgClientLayer(Redacted.make(process.argv[3] ?? ""))
  const layer = indexerServerLayer(130, { port: 0, host: "127.0.0.1", cacheBytes: Number(process.argv[4] ?? 64 << 20) }).pipe(
    Layer.provide(database)
  )
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope).pipe(quiet))
  const address = Context.get(context, HttpServer.HttpServer).address
  process.send?.({ url: address._tag === "TcpAddress" ? `http://127.0.0.1:${address.port}` : "" })
  process.on("disconnect", () => void Effect.runPromise(Scope.close(scope, Exit.void)).finally(() => process.exit(0)))
} else {
  await main()
}
