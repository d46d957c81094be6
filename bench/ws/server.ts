/**
 * bench:ws's server process (`bench/ws.ts` forks it): the backend with /ws/realtime on loopback
 * over the bench's database, as `npm start` serves it, in a process of its own so that its CPU
 * and heap are measured alone. Sends `{port}` once listening; on `"stats"` answers its CPU time
 * (`process.cpuUsage()`), heap after GC, the stream's figures and the refresh traces since the
 * last answer (collected in memory: nothing is sent to the bench while it measures).
 *
 * The heartbeat is off (a ping every 10 minutes): the bench's CPU per commit is the stream's
 * work for a commit, not 5,000 pings and pongs every 30 s.
 *
 * Usage (by bench/ws.ts): node --expose-gc --import tsx bench/ws/server.ts <database url>
 */
import { HttpServer } from "@effect/platform"
import { Context, Effect, Layer, Logger, LogLevel, Redacted, Scope } from "effect"
import { backendHttpLayer } from "../../http/backend/api.js"
import type { RefreshTrace } from "../../http/ws/feeds.js"
import { httpServerWithRealtime, Realtime, type RealtimeStats } from "../../http/ws/server.js"
import { NoSessions } from "../../http/ws/sessions.js"
import { BuildInfoLive } from "../../src/build-info.js"
import { pgClientLayer } from "../../src/db/database.js"

export interface ServerStats {
  /** When the figures were taken (µs, monotonic clock: a CPU profile's sample times). */
  readonly at: number
  readonly cpu: NodeJS.CpuUsage
  readonly heapUsed: number
  readonly realtime: RealtimeStats
  readonly traces: ReadonlyArray<RefreshTrace>
}

const main = async () => {
  const databaseUrl = process.argv[2]!
  const traces: Array<RefreshTrace> = []
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(
    Layer.buildWithScope(
      backendHttpLayer({ chainId: 130, indexerUrl: "http://127.0.0.1:9", cacheBytes: 0 }).pipe(
        Layer.provideMerge(
          httpServerWithRealtime(
            { port: 0, host: "127.0.0.1" },
            { chainId: 130, pingIntervalMs: 600_000, trace: (trace) => void traces.push(trace) }
          )
        ),
        Layer.provide([pgClientLayer(Redacted.make(databaseUrl)), BuildInfoLive, NoSessions])
      ),
      scope
    ).pipe(Logger.withMinimumLogLevel(LogLevel.Error))
  )
  const address = Context.get(context, HttpServer.HttpServer).address
  const stats = Context.get(context, Realtime).stats
  const gc = (globalThis as { gc?: () => void }).gc
  process.on("message", (message) => {
    if (message !== "stats") return
    gc?.()
    const answer: ServerStats = {
      at: Number(process.hrtime.bigint() / 1_000n),
      cpu: process.cpuUsage(),
      heapUsed: process.memoryUsage().heapUsed,
      realtime: stats(),
      traces: traces.splice(0)
    }
    process.send!(answer)
  })
  process.on("disconnect", () => process.exit(0))
  process.send!({ port: address._tag === "TcpAddress" ? address.port : 0 })
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
