/**
 * How the backfill settles an empty answer for a block whose bloom says "maybe", against a
 * replayed synthetic chain behind a proxy that rewrites answers:
 * - a bloom "maybe" that is a false positive (the proxy sets every bit of every header's bloom)
 *   costs receipts requests and changes nothing;
 * - a block whose logs every eth_getLogs answer leaves out, while its receipts hold them, fails
 *   the backfill with LogsWithheld, as does the same node without eth_getBlockReceipts;
 * - a block whose logs only the range answers leave out is fetched again and comes out whole.
 */
import { Effect, Exit } from "effect"
import * as fs from "node:fs/promises"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { announcedTokens } from "../../pipeline/decode.js"
import { backfill, collectBatches, type Watchlist } from "../../pipeline/source/backfill.js"
import { makeRpc } from "../../pipeline/source/rpc.js"
import { COMPONENTS } from "../../schema/components.js"
import { generateSynthetic, type SyntheticSummary } from "../../tools/recording/synthetic.js"
import { ReplayChain } from "../../tools/replay/chain.js"
import { serveReplay, type ReplayServer } from "../../tools/replay/server.js"

interface Call {
  readonly id: number
  readonly method: string
  readonly params: ReadonlyArray<Record<string, unknown> | string>
}
type Answer = { id: number; result?: unknown; error?: { code: number; message: string } }

/** A proxy that hands each call and its real answer to `rewrite`; counts calls by method. */
const rewritingProxy = async (target: string, rewrite: (call: Call, answer: Answer) => Answer) => {
  const calls = new Map<string, number>()
  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", async () => {
      const body = JSON.parse(Buffer.concat(chunks).toString()) as Call | Array<Call>
      const list = Array.isArray(body) ? body : [body]
      for (const c of list) calls.set(c.method, (calls.get(c.method) ?? 0) + 1)
      const upstream = await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body: Buffer.concat(chunks) })
      const answers = (await upstream.json()) as Answer | Array<Answer>
      const rewritten = Array.isArray(answers) ? answers.map((a, i) => rewrite(list[i]!, a)) : rewrite(list[0]!, answers)
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(rewritten))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections()
        server.close(() => r())
      })
  }
}

let dir: string
let summary: SyntheticSummary
let chain: ReplayChain
let replay: ReplayServer

const watchlistFor = (s: SyntheticSummary): Watchlist => {
  const watched = [...new Set<string>(COMPONENTS.filter((c) => c !== "testUsdc").map((c) => s.deployment[c].toLowerCase()))]
  return {
    addresses: () => watched,
    watching: (a) => watched.includes(a),
    announced: announcedTokens,
    watch: (a) => void watched.push(a)
  }
}

const run = (url: string) =>
  Effect.runPromiseExit(
    collectBatches(
      backfill(makeRpc({ url, retries: 1 }), watchlistFor(summary), {
        from: summary.deployment.deployBlock,
        to: chain.finalizedNumber,
        concurrency: 2
      })
    )
  )

const logsOf = (exit: Exit.Exit<ReadonlyArray<{ readonly logs: ReadonlyArray<unknown> }>, unknown>) => {
  if (!Exit.isSuccess(exit)) throw new Error(`backfill failed: ${String(exit.cause)}`)
  return exit.value.flatMap((b) => b.logs)
}

const failureTag = (exit: Exit.Exit<unknown, { readonly _tag: string }>) =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail"
    ? exit.cause.error._tag
    : `not a failure: ${String(Exit.isFailure(exit) ? exit.cause : "success")}`

/** A block with watched logs below the finalized head, and the hex of its number. */
const victim = () => {
  for (let n = summary.deployment.deployBlock + 50; n < chain.finalizedNumber; n++) {
    const block = chain.blockAt(n)!
    const watched = new Set(watchlistFor(summary).addresses())
    if (block.logs.some((l) => watched.has(l.address.toLowerCase()))) return { number: n, hex: `0x${n.toString(16)}`, hash: block.hash }
  }
  throw new Error("no block with watched logs")
}

const withoutBlock = (answer: Answer, hex: string): Answer =>
  Array.isArray(answer.result)
    ? { ...answer, result: (answer.result as Array<{ blockNumber?: string }>).filter((l) => l.blockNumber !== hex) }
    : answer

beforeAll(async () => {
  dir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-withheld-"))
  const out = Path.join(dir, "chain.ndjson.gz")
  summary = await generateSynthetic({ out, seed: 9, events: 3_000, users: 20, reorgEvery: 0 })
  chain = await ReplayChain.load(out)
  chain.advanceAll()
  replay = await serveReplay(chain)
})
afterAll(async () => {
  await replay.close()
  await fs.rm(dir, { recursive: true, force: true })
})

describe("an empty answer where the bloom says maybe", () => {
  it("a false positive is settled by the receipts and changes nothing", async () => {
    const clean = logsOf(await run(replay.url))
    const proxy = await rewritingProxy(replay.url, (call, answer) => {
      const block = answer.result as { logsBloom?: string } | null
      if (call.method === "eth_getBlockByNumber" && block?.logsBloom !== undefined) {
        return { ...answer, result: { ...block, logsBloom: `0x${"f".repeat(512)}` } }
      }
      return answer
    })
    try {
      expect(logsOf(await run(proxy.url))).toEqual(clean)
      expect(proxy.calls.get("eth_getBlockReceipts") ?? 0).toBeGreaterThan(0)
    } finally {
      await proxy.close()
    }
  })

  it("logs every eth_getLogs answer leaves out, while the receipts hold them, stop the backfill with LogsWithheld", async () => {
    const { hex } = victim()
    const proxy = await rewritingProxy(replay.url, (call, answer) => (call.method === "eth_getLogs" ? withoutBlock(answer, hex) : answer))
    try {
      expect(failureTag(await run(proxy.url))).toBe("LogsWithheld")
    } finally {
      await proxy.close()
    }
  })

  it("a node without receipts cannot settle it: LogsWithheld", async () => {
    const { hex } = victim()
    const proxy = await rewritingProxy(replay.url, (call, answer) =>
      call.method === "eth_getLogs"
        ? withoutBlock(answer, hex)
        : call.method === "eth_getBlockReceipts"
          ? { id: answer.id, error: { code: -32601, message: "the method eth_getBlockReceipts does not exist/is not available" } }
          : answer
    )
    try {
      expect(failureTag(await run(proxy.url))).toBe("LogsWithheld")
    } finally {
      await proxy.close()
    }
  })

  it("logs only the range answers leave out come back: the range is fetched again, whole", async () => {
    const clean = logsOf(await run(replay.url))
    const { hex } = victim()
    let dropped = 0
    const proxy = await rewritingProxy(replay.url, (call, answer) => {
      const filter = call.params[0] as Record<string, unknown>
      if (call.method !== "eth_getLogs" || filter["blockHash"] !== undefined || dropped >= 2) return answer
      const before = (answer.result as Array<unknown>).length
      const rewritten = withoutBlock(answer, hex)
      if ((rewritten.result as Array<unknown>).length < before) dropped++
      return rewritten
    })
    try {
      expect(logsOf(await run(proxy.url))).toEqual(clean)
      expect(dropped).toBe(2)
    } finally {
      await proxy.close()
    }
  })
})
