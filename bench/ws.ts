/**
 * WebSocket stream benchmark: a fresh devnet (anvil, the protocol deployed, 4 markets), the indexer
 * stepped by the bench, the backend with /ws/realtime on loopback, and CLIENTS `ws` clients in a
 * child process (so the server's heap is measured alone), each subscribed to trades, prices and the
 * order book of one market (from 127.0.0.x addresses, within the default 20 connections per IP).
 * Each round makes a router trade on one market and indexes it; the latency of a client is its
 * receipt of the trades delta minus the moment Postgres delivered the indexer's `predix_indexed`
 * NOTIFY to a separate listener (the commit becoming visible). Prints p50/p99/max over all
 * receipts and the server heap per connection (after GC).
 *
 * Usage: npm run bench:ws [-- --clients 1000 --rounds 20]
 */
import { HttpServer } from "@effect/platform"
import { Context, Effect, Exit, Layer, Logger, LogLevel, ManagedRuntime, Redacted, Scope } from "effect"
import { fork } from "node:child_process"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { maxUint256 } from "viem"
import WebSocket from "ws"
import { backendHttpLayer } from "../http/backend/api.js"
import { httpServerWithRealtime, Realtime } from "../http/ws/server.js"
import { NoSessions } from "../http/ws/sessions.js"
import { makeIndexer } from "../pipeline/run.js"
import { makeRpc } from "../pipeline/source/rpc.js"
import { INDEXED_CHANNEL } from "../schema/indexed-notify.js"
import { BuildInfoLive } from "../src/build-info.js"
import { pgClientLayer } from "../src/db/database.js"
import { runMigrations } from "../src/db/migrations.js"
import { startAnvil } from "../tools/devnet/anvil.js"
import { DevnetClient, type Address } from "../tools/devnet/client.js"
import { compileContracts } from "../tools/devnet/compile.js"
import { ADMIN, deployDevnet } from "../tools/devnet/deploy.js"
import { scratchDatabaseUrl } from "../test/support/postgres.js"

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`)
  return i < 0 ? fallback : Number(process.argv[i + 1])
}
const now = () => performance.timeOrigin + performance.now()

/** Child: opens the clients, reports when all have their snapshots, then every trades delta's receipt time. */
const runClients = async (url: string, count: number, markets: ReadonlyArray<string>) => {
  let ready = 0
  for (let i = 0; i < count; i++) {
    const ws = new WebSocket(url, { localAddress: `127.0.0.${2 + (i % 100)}` })
    const marketId = markets[i % markets.length]!
    let snapshots = 0
    ws.on("open", () => {
      for (const topic of ["trades", "prices", "orderbook"]) ws.send(JSON.stringify({ type: "subscribe", topic, marketId }))
    })
    ws.on("message", (data) => {
      const message = JSON.parse(data.toString())
      if (message.type === "ping") ws.send('{"type":"pong"}')
      else if (message.type === "snapshot" && ++snapshots === 3 && ++ready === count) process.send!({ ready: true })
      else if (message.type === "delta" && message.topic === "trades") process.send!({ at: now(), block: message.block, marketId })
      else if (message.type === "error") process.send!({ error: message })
    })
    ws.on("error", (error) => process.send!({ error: String(error) }))
    if (i % 50 === 49) await new Promise((r) => setTimeout(r, 5))
  }
}

const main = async () => {
  const clients = arg("clients", 1000)
  const rounds = arg("rounds", 20)
  const quiet = Logger.withMinimumLogLevel(LogLevel.Error)
  const scope = Effect.runSync(Scope.make())
  const anvil = await startAnvil()
  const chain = new DevnetClient(anvil.url, compileContracts())
  const devnet = await deployDevnet(chain, { deployedVariants: false })
  const dbUrl = await Effect.runPromise(Scope.extend(scratchDatabaseUrl, scope))
  const database = pgClientLayer(Redacted.make(dbUrl))
  const runtime = ManagedRuntime.make(database)
  await runtime.runPromise(runMigrations().pipe(quiet))
  const indexer = await runtime.runPromise(
    makeIndexer({
      rpc: makeRpc({ url: anvil.url }),
      deployment: devnet.deployment,
      chainId: 130,
      backfillThread: false,
      confirmations: 1_000
    }).pipe(quiet)
  )
  let window = await runtime.runPromise(indexer.loadWindow)
  const index = async () => {
    window = await runtime.runPromise(indexer.step(window).pipe(quiet) as Effect.Effect<any, any, any>)
  }
  const a = devnet.addresses
  const send = (contract: string, address: Address, fn: string, args: ReadonlyArray<unknown>) =>
    chain.send(ADMIN, contract, address, fn, args)
  await send("TestUsdc", a.testUsdc, "mint", [chain.address(ADMIN), 10_000_000n * 1_000_000n])
  for (const spender of [a.router, a.exchange, a.diamond, a.poolManager, a.marketFactory])
    await send("TestUsdc", a.testUsdc, "approve", [spender, maxUint256])
  const endTime = BigInt(await chain.timestamp()) + 30n * 86_400n
  const markets: Array<bigint> = []
  for (let i = 0; i < 4; i++) {
    await send("MarketFactory", a.marketFactory, "launch", [`Bench market ${i}?`, endTime, a.manualOracle, 50_000n * 1_000_000n])
    markets.push(await chain.read<bigint>("MarketFacet", a.diamond, "marketCount"))
  }
  await index()

  const context = await Effect.runPromise(
    Layer.buildWithScope(
      backendHttpLayer({ chainId: 130, indexerUrl: "http://127.0.0.1:9", cacheBytes: 0 }).pipe(
        Layer.provideMerge(httpServerWithRealtime({ port: 0, host: "127.0.0.1" }, { chainId: 130 })),
        Layer.provide([database, BuildInfoLive, NoSessions])
      ),
      scope
    ).pipe(quiet)
  )
  const address = Context.get(context, HttpServer.HttpServer).address
  const url = `ws://127.0.0.1:${address._tag === "TcpAddress" ? address.port : 0}/ws/realtime`
  const stats = Context.get(context, Realtime).stats

  const listener = new pg.Client({ connectionString: dbUrl })
  await listener.connect()
  const committedAt = new Map<number, number>()
  listener.on("notification", (n) => {
    const block = JSON.parse(n.payload ?? "{}").block as number
    if (!committedAt.has(block)) committedAt.set(block, now())
  })
  await listener.query(`listen ${INDEXED_CHANNEL}`)

  const gc = (globalThis as { gc?: () => void }).gc
  gc?.()
  const heapBefore = process.memoryUsage().heapUsed
  const child = fork(fileURLToPath(import.meta.url), ["--child", url, String(clients), markets.map(String).join(",")], {
    execArgv: ["--import", "tsx"]
  })
  const receipts: Array<{ at: number; block: number; marketId: string }> = []
  const errors: Array<unknown> = []
  const ready = new Promise<void>((resolve) =>
    child.on("message", (m: any) => {
      if (m.ready) resolve()
      else if (m.error) errors.push(m.error)
      else receipts.push(m)
    })
  )
  await ready
  gc?.()
  const heapAfter = process.memoryUsage().heapUsed
  const perMarket = clients / markets.length
  for (let round = 0; round < rounds; round++) {
    const market = markets[round % markets.length]!
    const before = receipts.length
    await send("Router", a.router, "trade", [
      round % 2 === 0 ? 0 : 2,
      market,
      100n * 1_000_000n,
      0n,
      chain.address(ADMIN),
      0n,
      maxUint256,
      "0x0000000000000000000000000000000000000000"
    ])
    await index()
    const deadline = Date.now() + 30_000
    while (receipts.length - before < perMarket && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5))
  }
  const latencies = receipts
    .map((r) => r.at - (committedAt.get(r.block) ?? Number.NaN))
    .filter((x) => Number.isFinite(x))
    .sort((x, y) => x - y)
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!.toFixed(1)
  console.log(`bench:ws: ${clients} clients x 3 subscriptions over ${markets.length} markets, ${rounds} commits, ${stats().feeds} feeds`)
  console.log(
    `  deltas received ${receipts.length} of ${rounds * perMarket} expected; errors ${errors.length}${errors.length > 0 ? ` (${JSON.stringify(errors[0])})` : ""}`
  )
  console.log(`  commit -> client receipt (ms): p50 ${pct(50)}, p99 ${pct(99)}, max ${pct(100)} (target p99 < 100)`)
  console.log(
    `  server heap per connection: ${((heapAfter - heapBefore) / clients / 1024).toFixed(1)} KiB${gc === undefined ? " (no --expose-gc: not collected)" : ""}; load average ${(
      await import("node:os")
    )
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`
  )
  child.kill()
  await listener.end()
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await runtime.dispose()
  await anvil.stop()
}

if (process.argv[2] === "--child") void runClients(process.argv[3]!, Number(process.argv[4]), process.argv[5]!.split(","))
else
  main().then(
    () => process.exit(0),
    (error) => {
      console.error(error)
      process.exit(1)
    }
  )
