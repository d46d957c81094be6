/**
 * WebSocket stream benchmark: a fresh devnet (anvil, the protocol deployed, 4 markets), the indexer
 * stepped by the bench, and three processes sharing the machine:
 * - this one: anvil's driver and the indexer;
 * - the server (`bench/ws/server.ts`): the backend with /ws/realtime, as `npm start` serves it;
 * - the clients (`bench/ws/clients.ts`): CLIENTS lean `ws` clients, each following trades, prices
 *   and the order book of one of the markets, and a LISTEN that timestamps each commit (Postgres
 *   delivering the indexer's `predix_indexed` NOTIFY: the commit becoming visible) on the clients' clock.
 * Each round makes a router trade on one market and indexes it; a client's latency is its receipt
 * of the trades delta minus the commit's NOTIFY. Prints p50/p99/max over all receipts; the time
 * split (NOTIFY -> the server's feeds woken -> read of the market's feeds -> encode and write to
 * every socket -> the client's receipt), from the server's refresh traces; CPU per commit and per
 * message of the server and of the client generator (`process.cpuUsage()` of each), the messages
 * and bytes the server wrote, its heap per connection after GC, and the load average.
 *
 * Usage: npm run bench:ws [-- --clients 1000 --rounds 20]; BENCH_WS_PROFILE=<dir> writes the
 * server's CPU profile there (`--cpu-prof`).
 */
import { Effect, Exit, Logger, LogLevel, ManagedRuntime, Redacted, Scope } from "effect"
import { fork, type ChildProcess } from "node:child_process"
import { loadavg } from "node:os"
import { fileURLToPath } from "node:url"
import { maxUint256 } from "viem"
import { makeIndexer } from "../pipeline/run.js"
import { makeRpc } from "../pipeline/source/rpc.js"
import { pgClientLayer } from "../src/db/database.js"
import { runMigrations } from "../src/db/migrations.js"
import { startAnvil } from "../tools/devnet/anvil.js"
import { DevnetClient, type Address } from "../tools/devnet/client.js"
import { compileContracts } from "../tools/devnet/compile.js"
import { ADMIN, deployDevnet } from "../tools/devnet/deploy.js"
import { scratchDatabaseUrl } from "../test/support/postgres.js"
import type { ClientStats } from "./ws/clients.js"
import type { ServerStats } from "./ws/server.js"

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`)
  return i < 0 ? fallback : Number(process.argv[i + 1])
}
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")

/** The child's next message that `pick` accepts. */
const next = <A>(child: ChildProcess, pick: (message: any) => A | undefined, ms: number, what: string) =>
  new Promise<A>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.off("message", listen)
      reject(new Error(`no ${what} within ${ms} ms`))
    }, ms)
    const listen = (message: unknown) => {
      const picked = pick(message)
      if (picked === undefined) return
      clearTimeout(timer)
      child.off("message", listen)
      resolve(picked)
    }
    child.on("message", listen)
  })

const ask = <A>(child: ChildProcess, is: (message: any) => boolean) => {
  const answer = next<A>(child, (m) => (is(m) ? m : undefined), 60_000, "stats")
  child.send("stats")
  return answer
}
const serverStats = (child: ChildProcess) => ask<ServerStats>(child, (m) => "heapUsed" in m)
const clientStats = (child: ChildProcess) => ask<ClientStats>(child, (m) => "arrivals" in m)

/** Percentiles of `values` (sorted here), as text. */
const percentiles = (values: Array<number>, ps: ReadonlyArray<number>) => {
  values.sort((x, y) => x - y)
  if (values.length === 0) return ps.map(() => "-")
  return ps.map((p) => values[Math.min(values.length - 1, Math.floor((p / 100) * values.length))]!.toFixed(1))
}
const cpuMs = (a: NodeJS.CpuUsage, b: NodeJS.CpuUsage) => (b.user - a.user + b.system - a.system) / 1_000

const main = async () => {
  const clients = arg("clients", 1000)
  const rounds = arg("rounds", 20)
  const quiet = Logger.withMinimumLogLevel(LogLevel.Error)
  const scope = Effect.runSync(Scope.make())
  const anvil = await startAnvil()
  const chain = new DevnetClient(anvil.url, compileContracts())
  const devnet = await deployDevnet(chain, { deployedVariants: false })
  const dbUrl = await Effect.runPromise(Scope.extend(scratchDatabaseUrl, scope))
  const runtime = ManagedRuntime.make(pgClientLayer(Redacted.make(dbUrl)))
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

  const here = (file: string) => fileURLToPath(new URL(file, import.meta.url))
  const profile = process.env["BENCH_WS_PROFILE"]
  const server = fork(here("./ws/server.ts"), [dbUrl], {
    execArgv: ["--expose-gc", "--import", "tsx", ...(profile === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", profile])]
  })
  const port = await next<number>(server, (m) => m?.port, 120_000, "server port")
  const url = `ws://127.0.0.1:${port}/ws/realtime`

  const empty = await serverStats(server)
  const generator = fork(here("./ws/clients.ts"), [url, String(clients), markets.join(","), dbUrl], { execArgv: ["--import", "tsx"] })
  const opened = Date.now()
  await next(generator, (m) => m?.ready, 300_000, "ready clients")
  const connectSeconds = (Date.now() - opened) / 1_000
  let done = 0
  generator.on("message", (m: any) => void (m?.done !== undefined && done++))

  const before = { server: await serverStats(server), clients: await clientStats(generator), load: load() }
  for (let round = 0; round < rounds; round++) {
    const market = markets[round % markets.length]!
    const doneBefore = done
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
    while (done === doneBefore && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5))
  }
  const after = { server: await serverStats(server), clients: await clientStats(generator), load: load() }

  // Latency: each trades delta's arrival minus its commit's NOTIFY.
  const latencies: Array<number> = []
  const afterSent: Array<number> = []
  const committedAt = new Map(after.clients.commits)
  const traceOf = new Map(after.server.traces.filter((t) => t.deltas > 0 && t.block !== null).map((t) => [t.block!, t]))
  const split = {
    woken: [] as Array<number>,
    queued: [] as Array<number>,
    read: [] as Array<number>,
    write: [] as Array<number>,
    writeCpu: [] as Array<number>
  }
  for (const [block, times] of after.clients.arrivals) {
    const committed = committedAt.get(block)
    if (committed === undefined) continue
    for (const at of times) latencies.push(at - committed)
    const trace = traceOf.get(block)
    if (trace === undefined) continue
    split.woken.push(trace.woken - committed)
    split.queued.push(trace.readStart - trace.woken)
    split.read.push(trace.readEnd - trace.readStart)
    split.write.push(trace.sent - trace.readEnd)
    split.writeCpu.push(trace.sendCpu / 1_000)
    for (const at of times) afterSent.push(at - trace.sent)
  }
  const received = latencies.length
  const expected = rounds * (clients / markets.length)
  // (A server from before the `sent` figures and traces, for a comparison, leaves them out.)
  const sent = {
    messages: (after.server.realtime.sent?.messages ?? Number.NaN) - (before.server.realtime.sent?.messages ?? Number.NaN),
    bytes: (after.server.realtime.sent?.bytes ?? Number.NaN) - (before.server.realtime.sent?.bytes ?? Number.NaN)
  }
  const serverCpu = cpuMs(before.server.cpu, after.server.cpu)
  const clientCpu = cpuMs(before.clients.cpu, after.clients.cpu)
  const clientMessages = after.clients.received - before.clients.received
  const [p50, p99, max] = percentiles(latencies, [50, 99, 100])
  const row = (label: string, values: Array<number>) => `    ${label.padEnd(44)} ${percentiles(values, [50, 99]).join(" / ")}`

  console.log(
    `bench:ws: ${clients} clients x 3 subscriptions over ${markets.length} markets, ${rounds} commits, ${after.server.realtime.feeds} feeds; connected and subscribed in ${connectSeconds.toFixed(1)} s`
  )
  console.log(
    `  trades deltas received ${received} of ${expected} expected; client errors ${after.clients.errors}${after.clients.firstError === undefined ? "" : ` (${after.clients.firstError})`}; server closed ${JSON.stringify(after.server.realtime.closed)}`
  )
  console.log(`  commit -> client receipt (ms): p50 ${p50}, p99 ${p99}, max ${max} (target p99 < 50)`)
  console.log(`  where the time goes, per commit (ms, p50 / p99 over ${split.read.length} commits; receipt over every client):`)
  console.log(row("NOTIFY -> server feeds woken", split.woken))
  console.log(row("woken -> read begins (locks, other groups)", split.queued))
  console.log(row("read of the market's 3 feeds (1 transaction)", split.read))
  console.log(row("encode + write to every follower's socket", split.write))
  console.log(row("  of which CPU (encode + write)", split.writeCpu))
  console.log(row("written -> client receipt", afterSent))
  console.log(
    `  server: ${sent.messages} messages, ${(sent.bytes / 1024).toFixed(0)} KiB written; CPU ${(serverCpu / rounds).toFixed(1)} ms per commit, ${((serverCpu * 1_000) / Math.max(1, sent.messages)).toFixed(1)} us per message`
  )
  console.log(
    `  clients: ${clientMessages} messages received; CPU ${(clientCpu / rounds).toFixed(1)} ms per commit, ${((clientCpu * 1_000) / Math.max(1, clientMessages)).toFixed(1)} us per message`
  )
  console.log(
    `  server heap per connection after GC: ${((before.server.heapUsed - empty.heapUsed) / clients / 1024).toFixed(1)} KiB; load average before ${before.load}, after ${after.load}`
  )
  if (profile !== undefined)
    console.log(`  server profile in ${profile}; the rounds are its samples from ${before.server.at} to ${after.server.at} (µs)`)
  generator.kill()
  if (profile !== undefined) {
    // Node writes the CPU profile when the process exits (the server child exits on disconnect).
    server.disconnect()
    await new Promise((resolve) => server.once("exit", resolve))
  } else server.kill()
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await runtime.dispose()
  await anvil.stop()
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
