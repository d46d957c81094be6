/**
 * A JSON-RPC proxy that stands in front of a real endpoint (the replay server here) and injects
 * the faults providers produce, on a seeded schedule: 429s, 5xx, answers slower than the client's
 * timeout, range-limit errors in several providers' wordings (with and without a suggested range),
 * truncated bodies, logs naming another block, empty bodies and null results. Everything else
 * passes through unchanged.
 *
 * With `dropLogs`, it is also a node that leaves logs out: that share of the eth_getLogs answers
 * holding logs lose every log of one of their blocks (chosen at random), the answer otherwise
 * well formed. Receipts pass through: they are how a client can tell.
 */
import * as http from "node:http"
import { prng } from "../../tools/prng.js"

export type Fault =
  "rateLimited" | "serverError" | "slow" | "rangeLimit" | "truncated" | "wrongBlock" | "emptyBody" | "nullResult" | "droppedLogs"

export interface FaultProxy {
  readonly url: string
  readonly injected: ReadonlyMap<Fault, number>
  readonly close: () => Promise<void>
}

interface Call {
  readonly id?: unknown
  readonly method?: string
  readonly params?: ReadonlyArray<Record<string, unknown> | unknown>
}

const RANGE_WORDINGS: ReadonlyArray<(from: number, to: number) => { code: number; message: string }> = [
  () => ({ code: -32005, message: "query returned more than 10000 results" }),
  () => ({ code: -32602, message: "eth_getLogs block range is too wide" }),
  () => ({ code: -32000, message: "exceed maximum block range: 50" }),
  (from, to) => ({
    code: -32602,
    message: `Log response size exceeded. this block range should work: [0x${from.toString(16)}, 0x${(from + Math.max(0, Math.floor((to - from) / 3))).toString(16)}]`
  })
]

const isRangeQuery = (call: Call) => {
  const filter = call.params?.[0] as Record<string, unknown> | undefined
  return call.method === "eth_getLogs" && typeof filter?.["fromBlock"] === "string" && typeof filter?.["toBlock"] === "string"
}

export interface FaultOptions {
  readonly seed: number
  /** Share of the requests answered with one of the faults above. */
  readonly rate: number
  readonly slowMs: number
  /** Half the range queries hit a range limit (default true). */
  readonly rangeLimits?: boolean
  /** Share of the eth_getLogs answers with logs that lose one block's logs (default 0). */
  readonly dropLogs?: number
}

/** `text` (a JSON-RPC answer or batch) with every log of one block of one eth_getLogs result removed, or undefined when it holds no log. */
const dropOneBlock = (text: string, random: () => number): string | undefined => {
  const answers = JSON.parse(text) as unknown
  const list = (Array.isArray(answers) ? answers : [answers]) as Array<{ result?: unknown }>
  const withLogs = list.filter(
    (a) => Array.isArray(a.result) && a.result.length > 0 && typeof (a.result[0] as Record<string, unknown>)["logIndex"] === "string"
  )
  if (withLogs.length === 0) return undefined
  const answer = withLogs[Math.floor(random() * withLogs.length)]!
  const logs = answer.result as Array<{ blockNumber: string }>
  const blocks = [...new Set(logs.map((l) => l.blockNumber))]
  const victim = blocks[Math.floor(random() * blocks.length)]
  answer.result = logs.filter((l) => l.blockNumber !== victim)
  return JSON.stringify(answers)
}

export const startFaultProxy = (target: string, options: FaultOptions): Promise<FaultProxy> => {
  const random = prng(options.seed)
  const injected = new Map<Fault, number>()
  const count = (fault: Fault) => injected.set(fault, (injected.get(fault) ?? 0) + 1)
  const forward = async (body: string) => {
    const response = await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body })
    return response.text()
  }
  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      void (async () => {
        const body = Buffer.concat(chunks).toString("utf8")
        const parsed = JSON.parse(body) as Call | ReadonlyArray<Call>
        const calls = Array.isArray(parsed) ? parsed : [parsed as Call]
        const send = (status: number, text: string) => {
          res.writeHead(status, { "content-type": "application/json" })
          res.end(text)
        }
        if (options.dropLogs !== undefined && calls.some((c) => c.method === "eth_getLogs") && random() < options.dropLogs) {
          const text = await forward(body)
          const dropped = dropOneBlock(text, random)
          if (dropped !== undefined) count("droppedLogs")
          return send(200, dropped ?? text)
        }
        // Range queries are few (the backfill grows its ranges fast): half of them hit a limit.
        if (options.rangeLimits !== false && calls.some(isRangeQuery) && random() < 0.5) {
          count("rangeLimit")
          const errors = calls.map((call) => {
            const filter = call.params?.[0] as Record<string, string>
            const from = Number(filter?.["fromBlock"] ?? 0)
            const to = Number(filter?.["toBlock"] ?? 0)
            return { jsonrpc: "2.0", id: call.id, error: RANGE_WORDINGS[Math.floor(random() * RANGE_WORDINGS.length)]!(from, to) }
          })
          return send(200, JSON.stringify(Array.isArray(parsed) ? errors : errors[0]))
        }
        if (random() >= options.rate) return send(200, await forward(body))
        const roll = random()
        if (roll < 0.12) {
          count("rateLimited")
          return send(429, JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: 429, message: "Too Many Requests" } }))
        }
        if (roll < 0.24) {
          count("serverError")
          return send(503, "Service Unavailable")
        }
        if (roll < 0.32) {
          count("slow")
          const text = await forward(body)
          setTimeout(() => send(200, text), options.slowMs)
          return
        }
        if (roll < 0.62) {
          count("truncated")
          const text = await forward(body)
          return send(200, text.slice(0, Math.floor(text.length / 2)))
        }
        if (roll < 0.8) {
          const text = await forward(body)
          const answers = JSON.parse(text) as unknown
          const list = (Array.isArray(answers) ? answers : [answers]) as Array<{ result?: unknown }>
          const withLogs = list.find(
            (a) =>
              Array.isArray(a.result) && a.result.length > 0 && typeof (a.result[0] as Record<string, unknown>)["blockHash"] === "string"
          )
          if (withLogs !== undefined) {
            count("wrongBlock")
            const log = (withLogs.result as Array<Record<string, string>>)[0]!
            log["blockHash"] = `0x${"e".repeat(64)}`
            return send(200, JSON.stringify(answers))
          }
          const block = list.find((a) => a.result !== null && typeof a.result === "object" && !Array.isArray(a.result))
          if (block !== undefined) {
            count("nullResult")
            block.result = null
            return send(200, JSON.stringify(answers))
          }
          return send(200, text)
        }
        count("emptyBody")
        return send(200, "")
      })().catch(() => {
        res.destroy()
      })
    })
  })
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      resolve({
        url: `http://127.0.0.1:${port}`,
        injected,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })
}
