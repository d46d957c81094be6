/**
 * Health that tells the truth, end to end on `predix start`: a real node (the replay server) behind
 * a TCP proxy that can cut it, the embedded Postgres, the indexer in its child process, real
 * signals. A frozen indexer while the chain moves, and a node nobody can reach, must each turn
 * `/api/health`, the backend's `/health` and `/ready`, and the `X-Indexed-*` headers degraded;
 * each recovers alone.
 *
 * Every wait polls for the state it needs; the bounds below are small so that the waits are
 * short, and nothing asserts how long anything took.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { generateSynthetic } from "../tools/recording/synthetic.js"
import { ReplayChain } from "../tools/replay/chain.js"
import { serveReplay } from "../tools/replay/server.js"
import { freePort, runCli } from "./support/process.js"
import { startTcpProxy } from "./support/tcp-proxy.js"

let dataDir: string
beforeAll(async () => {
  dataDir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-health-"))
  await fs.chmod(dataDir, 0o755)
})
afterAll(async () => {
  await fs.rm(dataDir, { recursive: true, force: true })
})

/** Polls `condition` every 200 ms until it holds; rejects with `what` after `timeoutMs` (a hang guard, not a measurement). */
const eventually = async <A>(what: string, probe: () => Promise<A | undefined>, timeoutMs = 90_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  for (;;) {
    try {
      const found = await probe()
      if (found !== undefined) return found
    } catch (error) {
      last = error
    }
    if (Date.now() > deadline) throw new Error(`never happened: ${what} (last error: ${String(last)})`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

const getJson = async (url: string) => {
  const response = await fetch(url)
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, any> }
}

const MAX_LAG = 5
const MAX_STALE = 3

describe("health on predix start", () => {
  it("turns degraded (503 for /health and /ready, X-Indexed-Status) while the indexer is frozen and the chain moves, and while the node is unreachable; recovers alone", async () => {
    const out = Path.join(dataDir, "chain.ndjson.gz")
    const summary = await generateSynthetic({ out, seed: 7, events: 2_000, users: 10 })
    const chain = await ReplayChain.load(out)
    const held = 40
    chain.advance(chain.remaining - held)
    const replay = await serveReplay(chain)
    const url = new URL(replay.url)
    const node = await startTcpProxy({ host: url.hostname, port: Number(url.port) })
    const deploymentFile = Path.join(dataDir, "deployment.json")
    await fs.writeFile(deploymentFile, JSON.stringify(summary.deployment))
    const ports = { INDEXER_PORT: String(await freePort()), BACKEND_PORT: String(await freePort()) }
    const app = runCli(["start"], {
      ...ports,
      DATA_DIR: dataDir,
      PG_PORT: "0",
      LOG_LEVEL: "info",
      RPC_URL: `http://127.0.0.1:${node.port}`,
      DEPLOYMENT: deploymentFile,
      HEALTH_MAX_LAG_BLOCKS: String(MAX_LAG),
      HEALTH_MAX_STALE_SECONDS: String(MAX_STALE)
    })
    const indexer = `http://127.0.0.1:${ports.INDEXER_PORT}`
    const backend = `http://127.0.0.1:${ports.BACKEND_PORT}`
    const health = () => getJson(`${indexer}/api/health`)
    /** The first /api/health answer whose data satisfies `test`. */
    const healthWhen = (what: string, test: (data: Record<string, any>) => boolean) =>
      eventually(what, async () => {
        const answer = await health()
        return answer.status === 200 && test(answer.body["data"]) ? answer.body["data"] : undefined
      })
    const backendWhen = (path: string, status: number) =>
      eventually(`backend ${path} answers ${status}`, async () => {
        const answer = await getJson(`${backend}${path}`)
        return answer.status === status ? answer.body : undefined
      })
    const current = (data: Record<string, any>) => data["status"] === "ok" && data["latestIndexedBlock"] === chain.headNumber
    try {
      await app.waitFor(new RegExp(`message="following the tip" .*\\bblock=${chain.headNumber}\\b`), 90_000)
      const ok = await healthWhen("health ok at the head", current)
      expect(ok).toMatchObject({ headBlock: chain.headNumber, lagBlocks: 0, problems: [] })
      expect(ok["rpcAgeSeconds"]).toBeGreaterThanOrEqual(0)
      expect(ok["indexerAgeSeconds"]).toBeGreaterThanOrEqual(0)
      expect((await backendWhen("/health", 200))["data"]).toMatchObject({ status: "ok", database: "up", indexer: "up", lagBlocks: 0 })
      expect((await backendWhen("/ready", 200))["data"]).toEqual({ ready: true })

      // The indexer frozen while the chain moves on: its own record of the head stands still with
      // it, so only the node's answer can show the lag.
      const child = Number(/message="indexer process started" pid=(\d+)/.exec(app.output())?.[1])
      const frozenAt = chain.headNumber
      process.kill(child, "SIGSTOP")
      try {
        chain.advance(MAX_LAG + 10)
        const stale = await healthWhen(
          "health degraded, with the lag, while the indexer is frozen",
          (d) => d["status"] === "degraded" && d["headBlock"] === chain.headNumber
        )
        expect(stale).toMatchObject({ latestIndexedBlock: frozenAt, lagBlocks: chain.headNumber - frozenAt })
        expect(stale["lagBlocks"]).toBeGreaterThan(MAX_LAG)
        expect(stale["problems"].join("\n")).toMatch(/blocks behind the head/)
        const stats = await fetch(`${indexer}/api/stats`)
        expect(stats.status).toBe(200)
        expect(stats.headers.get("x-indexed-status")).toBe("degraded")
        expect(Number(stats.headers.get("x-indexed-lag"))).toBeGreaterThan(MAX_LAG)
        const degraded = await backendWhen("/health", 503)
        expect(degraded["data"]).toMatchObject({ status: "degraded", database: "up", indexer: "up", latestIndexedBlock: frozenAt })
        expect(degraded["data"]["problems"].length).toBeGreaterThan(0)
        expect((await backendWhen("/ready", 503))["data"]).toEqual({ ready: false })
      } finally {
        process.kill(child, "SIGCONT")
      }
      await healthWhen("health ok again once the indexer runs", current)

      // The node unreachable: the indexer cannot poll, and health cannot read the head.
      node.cut()
      try {
        const cut = await healthWhen(
          "health degraded, naming the node, while the node is cut",
          (d) => d["status"] === "degraded" && d["problems"].some((p: string) => /node last answered/.test(p))
        )
        expect(cut["rpcAgeSeconds"]).toBeGreaterThan(MAX_STALE)
        expect((await backendWhen("/health", 503))["data"]).toMatchObject({ status: "degraded", database: "up" })
        expect((await backendWhen("/ready", 503))["data"]).toEqual({ ready: false })
      } finally {
        node.restore()
      }
      chain.advanceAll()
      const healed = await healthWhen("health ok once the node is back", current)
      expect(healed["problems"]).toEqual([])
      expect((await backendWhen("/ready", 200))["data"]).toEqual({ ready: true })
      expect(app.output()).not.toMatch(/INTERNAL_ERROR|unexpected failure/)
    } finally {
      app.child.kill("SIGINT")
      await app.exited
      await node.close()
      await replay.close()
    }
  }, 240_000)
})
