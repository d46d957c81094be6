/**
 * Backfill over a replayed synthetic chain, directly and through a proxy that refuses large
 * ranges (in several providers' wordings) and throws in 429s and 5xx: the same logs, each once,
 * in order, and batches that tile the range.
 */
import { Effect } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { COMPONENTS } from "../../schema/components.js"
import { announcedTokens } from "../../pipeline/decode.js"
import { backfill, collectBatches, type Watchlist } from "../../pipeline/source/backfill.js"
import { makeRpc } from "../../pipeline/source/rpc.js"
import { generateSynthetic, type SyntheticSummary } from "../../tools/recording/synthetic.js"
import { ReplayChain } from "../../tools/replay/chain.js"
import { serveReplay, type ReplayServer } from "../../tools/replay/server.js"

let dir: string
let summary: SyntheticSummary
let chain: ReplayChain
let replay: ReplayServer

const watchlistFor = (s: SyntheticSummary): Watchlist => {
  const watched = new Set<string>(COMPONENTS.map((c) => s.deployment[c]))
  return {
    addresses: () => [...watched],
    watching: (a) => watched.has(a),
    announced: announcedTokens,
    watch: (a) => void watched.add(a)
  }
}

/** Refuses ranges wider than 40 blocks with rotating provider wordings; every 7th request gets a 429 or 503. */
const hostileProxy = async (target: string) => {
  let n = 0
  const wordings = [
    (from: number) => ({
      code: -32005,
      message: `query returned more than 10000 results. Try with this block range [0x${from.toString(16)}, 0x${(from + 30).toString(16)}].`
    }),
    () => ({ code: -32614, message: "eth_getLogs is limited to a 40 range" }),
    () => ({ code: -32600, message: "block range is too wide" })
  ]
  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", async () => {
      n++
      const body = JSON.parse(Buffer.concat(chunks).toString()) as {
        id: number
        method: string
        params: Array<{ fromBlock: string; toBlock: string }>
      }
      if (n % 7 === 0) return res.writeHead(n % 14 === 0 ? 429 : 503).end("busy")
      if (!Array.isArray(body) && body.method === "eth_getLogs") {
        const from = Number.parseInt(body.params[0]!.fromBlock, 16)
        const to = Number.parseInt(body.params[0]!.toBlock, 16)
        if (to - from + 1 > 40) {
          const error = wordings[n % wordings.length]!(from)
          return res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: body.id, error }))
        }
      }
      const upstream = await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body: Buffer.concat(chunks) })
      res.writeHead(upstream.status, { "content-type": "application/json" }).end(await upstream.text())
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections()
        server.close(() => r())
      })
  }
}

beforeAll(async () => {
  dir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-backfill-"))
  const out = Path.join(dir, "chain.ndjson.gz")
  summary = await generateSynthetic({ out, seed: 21, events: 6_000, users: 30, reorgEvery: 300, maxReorgDepth: 4 })
  chain = await ReplayChain.load(out)
  chain.advanceAll()
  replay = await serveReplay(chain)
})
afterAll(async () => {
  await replay.close()
  await fs.rm(dir, { recursive: true, force: true })
})

const expectedLogs = () => {
  const out: Array<string> = []
  for (let n = summary.deployment.deployBlock; n <= chain.headNumber; n++) {
    for (const log of chain.blockAt(n)!.logs) out.push(`${n}:${log.logIndex}:${log.transactionHash}`)
  }
  return out
}

const run = (url: string, concurrency: number, initial: number) =>
  Effect.runPromise(
    collectBatches(
      backfill(makeRpc({ url }), watchlistFor(summary), {
        from: summary.deployment.deployBlock,
        to: chain.headNumber,
        concurrency,
        policy: { initial, max: 5_000, forgetAfter: 16, targetLogs: 400 }
      })
    )
  )

describe("backfill", () => {
  it("fetches every log of the watched and announced contracts once, in order, in batches that tile the range", async () => {
    const batches = await run(replay.url, 4, 64)
    expect(batches[0]!.from).toBe(summary.deployment.deployBlock)
    expect(batches[batches.length - 1]!.to).toBe(chain.headNumber)
    batches.forEach((b, i) => i > 0 && expect(b.from).toBe(batches[i - 1]!.to + 1))
    const logs = batches.flatMap((b) => b.logs.map((l) => `${l.blockNumber}:${l.logIndex}:${l.transactionHash}`))
    expect(logs).toEqual(expectedLogs())
    for (const b of batches) expect(b.blocks.get(b.to)?.hash).toBe(chain.blockAt(b.to)!.hash)
  })

  it("gives the same answer through range limits in several wordings, 429s and 503s", async () => {
    const proxy = await hostileProxy(replay.url)
    try {
      const batches = await run(proxy.url, 3, 500)
      const logs = batches.flatMap((b) => b.logs.map((l) => `${l.blockNumber}:${l.logIndex}:${l.transactionHash}`))
      expect(logs).toEqual(expectedLogs())
    } finally {
      await proxy.close()
    }
  }, 60_000)
})
