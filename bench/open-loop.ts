/**
 * A constant-rate ("open loop") load: request i is due at start + i / rate, sent then whether or
 * not earlier ones have been answered (on a new keep-alive connection if every open one is busy),
 * and its latency counts from when it was due, not from when it left. So a server that falls
 * behind is charged for the wait it causes, and a slow answer cannot slow the load down
 * (coordinated omission).
 *
 * Why not autocannon's `overallRate`: it gives each connection a budget per second that the
 * connection spends back to back at the start of the second, so "200 req/s over 20 connections"
 * is 20 bursts of 10 each second, and its correction for coordinated omission assumes a 1 ms
 * interval between requests whatever the rate, adding made-up samples to every answer slower
 * than 1 ms. Both inflate the tail it reports.
 *
 * `openLoopApart` runs the load in a process of its own (this module as the main script, the
 * options on stdin, the result on stdout). A bench that also serves something (bench/backend.ts
 * runs the indexer API in its own process) must use it: requests due while that process collects
 * its garbage or answers leave late, and their latency, counted from when they were due, is the
 * load generator's own pause. Seen: the bench process ran a full mark-compact about once a second
 * (its heap near 90 MB, little freed each time, 50-110 ms of marking and pauses), which is 1-2% of
 * the requests at 200 req/s: the p99.
 */
import { spawn } from "node:child_process"
import * as http from "node:http"
import { fileURLToPath } from "node:url"

export interface OpenLoopOptions {
  readonly url: string
  /** Paths (with their query) sent in turn instead of the url's own, request i to `paths[i % length]` (e.g. many distinct users). */
  readonly paths?: ReadonlyArray<string>
  readonly method?: "GET" | "POST"
  readonly body?: string
  readonly rate: number
  readonly durationS: number
}

export interface OpenLoopResult {
  readonly due: number
  readonly answered: number
  /** Answers per second over the run (requests due / duration when the server keeps up). */
  readonly achievedRate: number
  readonly p50: number
  readonly p90: number
  readonly p99: number
  readonly max: number
  readonly non2xx: number
  readonly errors: number
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!

export const openLoop = (o: OpenLoopOptions): Promise<OpenLoopResult> =>
  new Promise((resolve) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity })
    const target = new URL(o.url)
    const body = o.body === undefined ? undefined : Buffer.from(o.body)
    const total = Math.round(o.rate * o.durationS)
    const interval = 1000 / o.rate
    const latencies: Array<number> = []
    let non2xx = 0
    let errors = 0
    let sent = 0
    let settled = 0
    const start = performance.now()
    let lastAnswer = start

    const finish = () => {
      agent.destroy()
      const sorted = latencies.sort((a, b) => a - b)
      resolve({
        due: total,
        answered: latencies.length,
        achievedRate: latencies.length / ((lastAnswer - start) / 1000),
        p50: percentile(sorted, 50),
        p90: percentile(sorted, 90),
        p99: percentile(sorted, 99),
        max: sorted[sorted.length - 1] ?? NaN,
        non2xx,
        errors
      })
    }
    const settle = () => {
      if (++settled === total) finish()
    }
    const paths = o.paths !== undefined && o.paths.length > 0 ? o.paths : [target.pathname + target.search]
    const fire = (due: number, i: number) => {
      const request = http.request(
        {
          agent,
          host: target.hostname,
          port: target.port,
          path: paths[i % paths.length],
          method: o.method ?? "GET",
          headers: body === undefined ? {} : { "content-type": "application/json", "content-length": body.length }
        },
        (response) => {
          response.resume()
          response.once("end", () => {
            lastAnswer = performance.now()
            latencies.push(lastAnswer - due)
            if ((response.statusCode ?? 0) < 200 || (response.statusCode ?? 0) >= 300) non2xx++
            settle()
          })
        }
      )
      request.once("error", () => {
        errors++
        settle()
      })
      request.end(body)
    }
    const tick = () => {
      const now = performance.now()
      while (sent < total && start + sent * interval <= now) fire(start + sent * interval, sent++)
      if (sent < total) setTimeout(tick, Math.max(0, start + sent * interval - performance.now()))
    }
    tick()
  })

/** `openLoop` in a child process (see above): its pauses are its own, not the caller's. */
export const openLoopApart = (o: OpenLoopOptions): Promise<OpenLoopResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url)], { stdio: ["pipe", "pipe", "inherit"] })
    let out = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk))
    child.once("error", reject)
    child.once("exit", (code) => {
      if (code !== 0) return reject(new Error(`the open-loop process exited with ${code}`))
      try {
        resolve(JSON.parse(out) as OpenLoopResult)
      } catch (error) {
        reject(error as Error)
      }
    })
    child.stdin.end(JSON.stringify(o))
  })

// Run as the main script (by `openLoopApart`): options on stdin, the result as JSON on stdout.
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  let input = ""
  process.stdin.setEncoding("utf8").on("data", (chunk: string) => (input += chunk))
  process.stdin.once("end", () => {
    void openLoop(JSON.parse(input) as OpenLoopOptions).then((result) => process.stdout.write(JSON.stringify(result)))
  })
}
