/**
 * Serves a `ReplayChain` over loopback HTTP JSON-RPC (single and batch requests), so the
 * pipeline talks to a recording exactly as it talks to a node.
 *
 * Heads are played either on a timer (`blocksPerSecond`) or on demand; `replay_advance [n]` and
 * `replay_status` are extra methods for tests and demos that want to step the chain by hand.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { custom } from "viem"
import { ReplayChain, RpcError, type RpcRequest } from "./chain.js"

export interface ReplayServer {
  readonly url: string
  readonly chain: ReplayChain
  readonly close: () => Promise<void>
}

export interface ServeOptions {
  readonly host?: string
  /** 0 (default) picks a free port. */
  readonly port?: number
  /** Plays this many head events per second; unset plays nothing by itself. */
  readonly blocksPerSecond?: number
}

interface JsonRpcRequest {
  readonly jsonrpc?: unknown
  readonly id?: unknown
  readonly method?: unknown
  readonly params?: unknown
}

const answer = (chain: ReplayChain, request: JsonRpcRequest) => {
  const id = request.id ?? null
  try {
    if (typeof request.method !== "string") throw new RpcError(-32600, "invalid request: method must be a string")
    if (request.params !== undefined && !Array.isArray(request.params)) throw new RpcError(-32602, "params must be an array")
    const call: RpcRequest = { method: request.method, params: request.params as ReadonlyArray<unknown> | undefined }
    return { jsonrpc: "2.0", id, result: control(chain, call) ?? chain.request(call) }
  } catch (error) {
    const rpc = error instanceof RpcError ? error : new RpcError(-32603, (error as Error).message)
    return { jsonrpc: "2.0", id, error: { code: rpc.code, message: rpc.message } }
  }
}

/** Test-and-demo controls; undefined for every standard method. */
const control = (chain: ReplayChain, { method, params = [] }: RpcRequest) => {
  switch (method) {
    case "replay_advance": {
      const count = params[0] === undefined ? 1 : Number(params[0])
      if (!Number.isSafeInteger(count) || count < 0) throw new RpcError(-32602, "replay_advance takes a non-negative count")
      return { played: chain.advance(count), ...status(chain) }
    }
    case "replay_status":
      return status(chain)
    default:
      return undefined
  }
}

const status = (chain: ReplayChain) => ({
  head: chain.headNumber,
  finalized: chain.finalizedNumber,
  remaining: chain.remaining,
  reorgs: chain.reorgCount
})

export const serveReplay = (chain: ReplayChain, options: ServeOptions = {}): Promise<ReplayServer> =>
  new Promise((resolve, reject) => {
    const server = http.createServer((req, res) => {
      if (req.method !== "POST") {
        res.writeHead(405, { allow: "POST" }).end()
        return
      }
      const chunks: Array<Buffer> = []
      req.on("data", (chunk: Buffer) => chunks.push(chunk))
      req.on("end", () => {
        let body: unknown
        try {
          body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
        } catch {
          res.writeHead(200, { "content-type": "application/json" })
          res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error" } }))
          return
        }
        const result = Array.isArray(body)
          ? body.map((item) => answer(chain, (item ?? {}) as JsonRpcRequest))
          : answer(chain, (body ?? {}) as JsonRpcRequest)
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify(result))
      })
    })
    let timer: NodeJS.Timeout | undefined
    if (options.blocksPerSecond !== undefined && options.blocksPerSecond > 0) {
      timer = setInterval(() => chain.advance(1), 1000 / options.blocksPerSecond)
      timer.unref()
    }
    server.keepAliveTimeout = 5_000
    server.once("error", reject)
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      const { address, port } = server.address() as AddressInfo
      resolve({
        url: `http://${address}:${port}`,
        chain,
        close: () =>
          new Promise<void>((done) => {
            if (timer !== undefined) clearInterval(timer)
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })

/** The same chain as an in-process viem transport, for tests that need no socket. */
export const replayTransport = (chain: ReplayChain) =>
  custom({
    request: async ({ method, params }: { method: string; params?: unknown }) => {
      const call: RpcRequest = { method, params: Array.isArray(params) ? params : undefined }
      return control(chain, call) ?? chain.request(call)
    }
  })
