/**
 * The chain source against a replayed recording over real HTTP, and against a proxy that injects
 * failures in front of it.
 */
import { Effect, Exit } from "effect"
import * as http from "node:http"
import * as zlib from "node:zlib"
import type { AddressInfo } from "node:net"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeRpc } from "../../pipeline/source/rpc.js"
import { generateSynthetic, type SyntheticSummary } from "../../tools/recording/synthetic.js"
import { ReplayChain } from "../../tools/replay/chain.js"
import { serveReplay, type ReplayServer } from "../../tools/replay/server.js"

let dir: string
let summary: SyntheticSummary
let replay: ReplayServer

/** A proxy answering the next `failures` requests itself, then forwarding to the replay. */
const faultProxy = async (target: string, failures: Array<(res: http.ServerResponse) => void>) => {
  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", async () => {
      const fault = failures.shift()
      if (fault !== undefined) return fault(res)
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
  dir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-rpc-"))
  const out = Path.join(dir, "chain.ndjson.gz")
  summary = await generateSynthetic({ out, seed: 5, events: 3_000, users: 20, reorgEvery: 0 })
  const chain = await ReplayChain.load(out)
  chain.advanceAll()
  replay = await serveReplay(chain)
})
afterAll(async () => {
  await replay.close()
  await fs.rm(dir, { recursive: true, force: true })
})

describe("chain source", () => {
  it("reads headers in batches and logs by range, checked and parsed", async () => {
    const rpc = makeRpc({ url: replay.url })
    const from = summary.deployment.deployBlock
    const headers = await Effect.runPromise(rpc.headers(from, from + 250))
    expect(headers).toHaveLength(251)
    expect(headers[250]!.parentHash).toBe(headers[249]!.hash)
    const logs = await Effect.runPromise(rpc.logs([summary.deployment.diamond, summary.deployment.router], from, from + 250))
    expect(logs.length).toBeGreaterThan(0)
    for (const log of logs) expect(headers[log.blockNumber - from]!.hash).toBe(log.blockHash)
    expect(await Effect.runPromise(rpc.chainId)).toBe(130)
  })

  it("retries 429s, 5xx and truncated bodies, then answers", async () => {
    const proxy = await faultProxy(replay.url, [
      (res) => res.writeHead(429).end("Too Many Requests"),
      (res) => res.writeHead(503).end("Service Unavailable"),
      (res) => res.writeHead(200, { "content-type": "application/json" }).end('{"jsonrpc":"2.0","id":1,"res'),
      (res) =>
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ jsonrpc: "2.0", id: 1, error: { code: -32000, message: "header not found" } }))
    ])
    try {
      const rpc = makeRpc({ url: proxy.url })
      const header = await Effect.runPromise(rpc.header(summary.deployment.deployBlock))
      expect(header.number).toBe(summary.deployment.deployBlock)
    } finally {
      await proxy.close()
    }
  })

  it("surfaces range errors at once, with the provider's suggestion, and rejects bad requests without retrying", async () => {
    const proxy = await faultProxy(replay.url, [
      (res) =>
        res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            error: { code: -32005, message: "query returned more than 10000 results. Try with this block range [0x3e8, 0x3f0]." }
          })
        ),
      (res) =>
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ jsonrpc: "2.0", id: 1, error: { code: -32602, message: "invalid argument" } }))
    ])
    try {
      const rpc = makeRpc({ url: proxy.url })
      const range = await Effect.runPromise(Effect.flip(rpc.logs([summary.deployment.diamond], 1000, 5000)))
      expect(range).toMatchObject({ _tag: "RangeTooLarge", suggested: { from: 1000, to: 1008 } })
      const rejected = await Effect.runPromise(Effect.flip(rpc.logs([summary.deployment.diamond], 1000, 1001)))
      expect(rejected._tag).toBe("RequestRejected")
    } finally {
      await proxy.close()
    }
  })

  it("treats a missing block as UnknownBlock after its retries, and logs of the wrong shape as inconsistent", async () => {
    const rpc = makeRpc({ url: replay.url, retries: 1 })
    const exit = await Effect.runPromiseExit(rpc.header(10_000_000))
    expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toMatch(/UnknownBlock/)
    const proxy = await faultProxy(replay.url, [
      (res) =>
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ jsonrpc: "2.0", id: 1, result: [{ address: "0x00", topics: [], data: "0x" }] })),
      (res) =>
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ jsonrpc: "2.0", id: 1, result: [{ address: "0x00", topics: [], data: "0x" }] }))
    ])
    try {
      const broken = makeRpc({ url: proxy.url, retries: 1 })
      const error = await Effect.runPromise(Effect.flip(broken.logs([summary.deployment.diamond], 1000, 1001)))
      expect(error._tag).toBe("InconsistentAnswer")
    } finally {
      await proxy.close()
    }
  })

  it("answers a node without a finalized block with RequestRejected at once, not after retries", async () => {
    let requests = 0
    const nullFinalized = http.createServer((req, res) => {
      requests++
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        const request = JSON.parse(Buffer.concat(chunks).toString()) as { id: number }
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: request.id, result: null }))
      })
    })
    await new Promise<void>((resolve) => nullFinalized.listen(0, "127.0.0.1", resolve))
    try {
      const rpc = makeRpc({ url: `http://127.0.0.1:${(nullFinalized.address() as AddressInfo).port}` })
      const exit = await Effect.runPromiseExit(rpc.header("finalized"))
      expect(exit).toMatchObject({ _tag: "Failure", cause: { error: { _tag: "RequestRejected" } } })
      expect(requests).toBe(1)
    } finally {
      nullFinalized.close()
    }
  })

  it("reads answers a node compresses (gzip, deflate, br, as fetch would ask for) exactly as plain ones, and refuses an encoding it cannot read", async () => {
    const from = summary.deployment.deployBlock
    const plain = makeRpc({ url: replay.url })
    const logs = await Effect.runPromise(plain.logs([summary.deployment.diamond], from, from + 200))
    const headers = await Effect.runPromise(plain.headersAt([from, from + 1, from + 2]))
    expect(logs.length).toBeGreaterThan(0)
    const asked: Array<string | undefined> = []
    // In front of the replay node: compresses each answer as the request's next encoding says.
    const encodings = ["gzip", "br", "deflate", "gzip", "br", "deflate", "compress"]
    const compressing = http.createServer((req, res) => {
      asked.push(req.headers["accept-encoding"])
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", async () => {
        const upstream = await fetch(replay.url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: Buffer.concat(chunks)
        })
        const body = Buffer.from(await upstream.arrayBuffer())
        const encoding = encodings.shift()!
        const compressed =
          encoding === "gzip"
            ? zlib.gzipSync(body)
            : encoding === "br"
              ? zlib.brotliCompressSync(body)
              : encoding === "deflate"
                ? zlib.deflateSync(body)
                : body
        res.writeHead(upstream.status, { "content-type": "application/json", "content-encoding": encoding }).end(compressed)
      })
    })
    await new Promise<void>((resolve) => compressing.listen(0, "127.0.0.1", resolve))
    try {
      const rpc = makeRpc({ url: `http://127.0.0.1:${(compressing.address() as AddressInfo).port}`, retries: 0 })
      for (let i = 0; i < 3; i++) {
        expect(await Effect.runPromise(rpc.logs([summary.deployment.diamond], from, from + 200))).toEqual(logs)
        expect(await Effect.runPromise(rpc.headersAt([from, from + 1, from + 2]))).toEqual(headers)
      }
      expect(asked.every((a) => a === "gzip, deflate, br")).toBe(true)
      const refused = await Effect.runPromise(Effect.flip(rpc.logs([summary.deployment.diamond], from, from + 200)))
      expect(refused).toMatchObject({ _tag: "ServerError", message: expect.stringContaining("compress") })
    } finally {
      compressing.closeAllConnections()
      compressing.close()
    }
  })
})
