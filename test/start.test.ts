/**
 * The main job end to end, as a user runs it: a real process with the embedded Postgres, real
 * HTTP over loopback, real signals.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { FIXTURE_RECORDING } from "../src/app.js"
import { generateSynthetic } from "../src/recording/synthetic.js"
import { ReplayChain } from "../src/replay/chain.js"
import { serveReplay } from "../src/replay/server.js"
import { freePort, isAlive, runCli } from "./support/process.js"

let dataDir: string
beforeAll(async () => {
  dataDir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-start-"))
  await fs.chmod(dataDir, 0o755)
})
afterAll(async () => {
  await fs.rm(dataDir, { recursive: true, force: true })
})

const env = async () => ({
  DATA_DIR: dataDir,
  PG_PORT: "0",
  INDEXER_PORT: String(await freePort()),
  BACKEND_PORT: String(await freePort()),
  LOG_LEVEL: "info"
})

const serverPid = async () => {
  const text = await fs.readFile(Path.join(dataDir, "postgres", "connection.json"), "utf8")
  return (JSON.parse(text) as { pid: number }).pid
}

const getJson = async (url: string) => {
  const response = await fetch(url)
  return { status: response.status, body: (await response.json()) as Record<string, any> }
}

describe("predix start", () => {
  it("brings up embedded Postgres, migrates, indexes the committed fixture, serves /api/health, and SIGINT leaves no process behind", async () => {
    const fixture = await ReplayChain.load(FIXTURE_RECORDING)
    fixture.advanceAll()
    const head = fixture.headNumber
    const finalized = fixture.finalizedNumber
    const config = await env()
    const app = runCli(["start"], config)
    await app.waitFor(/message=listening server=backend/)
    expect(app.output()).toMatch(/message="migrations applied" migrations=0001_indexer_checkpoint.sql/)
    // The finalized part in bulk, then the unfinalized tip block by block.
    await app.waitFor(new RegExp(`message=indexed .*\\bblock=${finalized}\\b`))
    await app.waitFor(new RegExp(`message="following the tip" .*\\bblock=${head}\\b`))
    expect(app.output()).toMatch(/message="no RPC_URL: indexing the committed devnet fixture"/)

    const health = await getJson(`http://127.0.0.1:${config.INDEXER_PORT}/api/health`)
    expect(health).toEqual({
      status: 200,
      body: {
        data: { status: "ok", chainId: 130, latestIndexedBlock: head, headBlock: head, lagBlocks: 0 },
        meta: null
      }
    })
    const stats = await getJson(`http://127.0.0.1:${config.INDEXER_PORT}/api/stats`)
    expect(stats.body["data"]).toMatchObject({ totalMarkets: 28 })
    const backend = await getJson(`http://127.0.0.1:${config.BACKEND_PORT}/health`)
    expect(backend.status).toBe(200)
    expect(backend.body["data"]).toEqual({ status: "ok", database: "up", indexer: "up", latestIndexedBlock: head })
    expect(backend.body["meta"]).toMatchObject({ version: "v2" })

    const pid = await serverPid()
    expect(isAlive(pid)).toBe(true)
    app.child.kill("SIGINT")
    expect(await app.exited).toBe(0)
    expect(isAlive(pid)).toBe(false)
    await expect(fs.access(Path.join(dataDir, "postgres", "cluster", "postmaster.pid"))).rejects.toThrow()
  })

  it("a second start reuses the data and applies no migration; after its SIGKILL the next start stops the orphaned Postgres, comes up on the same data and stops on SIGTERM", async () => {
    // The second start, on the first one's data.
    const first = runCli(["start"], await env())
    await first.waitFor(/message=listening server=indexer/)
    expect(first.output()).toMatch(/message="migrations up to date"/)
    expect(first.output()).not.toMatch(/initialising embedded Postgres/)
    const orphan = await serverPid()
    first.child.kill("SIGKILL")
    await first.exited
    expect(isAlive(orphan)).toBe(true)

    const config = await env()
    const second = runCli(["start"], config)
    await second.waitFor(/message=listening server=indexer/)
    expect(isAlive(orphan)).toBe(false)
    expect((await getJson(`http://127.0.0.1:${config.INDEXER_PORT}/api/health`)).status).toBe(200)
    const pid = await serverPid()
    second.child.kill("SIGTERM")
    expect(await second.exited).toBe(0)
    expect(isAlive(pid)).toBe(false)
  }, 90_000) // two starts of Postgres, the first left orphaned

  it("answers 503 with the indexer error shape when the database is gone, never a 500", async () => {
    const config = await env()
    const app = runCli(["start"], config)
    await app.waitFor(/message=listening server=backend/)
    process.kill(-(await serverPid()), "SIGKILL")
    // The whole server process group above: postmaster and backends.
    const within = <A>(step: string, p: Promise<A>) =>
      Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${step} hung; output:\n${app.output().slice(-2500)}`)), 12_000))])
    const health = await within("indexer health", getJson(`http://127.0.0.1:${config.INDEXER_PORT}/api/health`))
    expect(health.status).toBe(503)
    expect(health.body).toEqual({ error: "ServiceUnavailable", message: expect.stringMatching(/database unavailable/) })
    app.child.kill("SIGINT")
    expect(await within("shutdown", app.exited)).toBe(0)
  })

  it("with RPC_URL and DEPLOYMENT it indexes the chain to its tip and /api/health reports real numbers", async () => {
    const out = Path.join(dataDir, "chain.ndjson.gz")
    const summary = await generateSynthetic({ out, seed: 3, events: 4_000, users: 20 })
    const chain = await ReplayChain.load(out)
    chain.advanceAll()
    const replay = await serveReplay(chain)
    const deploymentFile = Path.join(dataDir, "synthetic-deployment.json")
    await fs.writeFile(deploymentFile, JSON.stringify(summary.deployment))
    // This data directory holds the fixture's index: another deployment is refused, by name.
    const refused = runCli(["start"], { ...(await env()), RPC_URL: replay.url, DEPLOYMENT: deploymentFile })
    expect(await refused.exited).toBe(1)
    expect(refused.output()).toMatch(/DATABASE: it holds the index of chain 130 deployment 0x[0-9a-f]{40} \(from block \d+, committed fixture\); this start indexes/)

    const freshDir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-start-rpc-"))
    await fs.chmod(freshDir, 0o755)
    const config = { ...(await env()), DATA_DIR: freshDir }
    const app = runCli(["start"], { ...config, RPC_URL: replay.url, DEPLOYMENT: deploymentFile })
    try {
      await app.waitFor(new RegExp(`message="following the tip" .*\\bblock=${chain.headNumber}\\b`), 60_000)
      const health = await getJson(`http://127.0.0.1:${config.INDEXER_PORT}/api/health`)
      expect(health.body["data"]).toEqual({
        status: "ok",
        chainId: 130,
        latestIndexedBlock: chain.headNumber,
        headBlock: chain.headNumber,
        lagBlocks: 0
      })
      const stats = await getJson(`http://127.0.0.1:${config.INDEXER_PORT}/api/stats`)
      expect(stats.status).toBe(200)
      expect(stats.body["meta"]).toBeNull()
      expect(stats.body["data"]["totalVolume"]).toMatch(/^[1-9]\d*\.\d{6}$/)
      expect(BigInt(stats.body["data"]["totalTrades"])).toBeGreaterThan(0n)
      expect(BigInt(stats.body["data"]["totalMarkets"])).toBe(BigInt(stats.body["data"]["activeMarkets"]) + BigInt(stats.body["data"]["resolvedMarkets"]) + BigInt(stats.body["data"]["refundMarkets"]))
    } finally {
      app.child.kill("SIGINT")
      await app.exited
      await replay.close()
      await fs.rm(freshDir, { recursive: true, force: true })
    }
  }, 90_000)

  it("refuses an invalid configuration before starting anything, naming the variable", async () => {
    const app = runCli(["start"], { ...(await env()), INDEXER_PORT: "70000", CHAIN_ID: "abc" })
    expect(await app.exited).toBe(1)
    expect(app.output()).toMatch(/INDEXER_PORT: expected a TCP port between 0 and 65535, got 70000/)
    expect(app.output()).toMatch(/CHAIN_ID: expected a positive integer chain id, got "abc"/)
    expect(app.output()).not.toMatch(/embedded Postgres/)
  })

  it("checks the deployment file at start and names DEPLOYMENT, the file and the field when it is wrong", async () => {
    const file = Path.join(dataDir, "deployment.json")
    const good = Object.fromEntries(
      ["diamond", "router", "exchange", "hookProxy", "marketFactory", "manualOracle", "priceFeedOracle", "timelock", "paymaster", "faucet", "testUsdc", "poolManager", "permit2"].map((k, i) => [k, `0x${(i + 1).toString(16).padStart(40, "0")}`])
    )
    const otherFile = Path.join(dataDir, "other-chain-deployment.json")
    await fs.writeFile(file, JSON.stringify({ ...good, router: "0x1234", deployBlock: 5 }))
    await fs.writeFile(otherFile, JSON.stringify({ ...good, chainId: 1, deployBlock: 5 }))
    // Two independent refusals, run side by side.
    const bad = runCli(["start"], { ...(await env()), DEPLOYMENT: file })
    const wrongChain = runCli(["start"], { ...(await env()), DEPLOYMENT: otherFile })
    expect(await bad.exited).toBe(1)
    expect(bad.output()).toMatch(/DEPLOYMENT: .*deployment.json/)
    expect(bad.output()).toMatch(/router/)
    expect(await wrongChain.exited).toBe(1)
    expect(wrongChain.output()).toMatch(/chainId is 1 but CHAIN_ID is 130/)
  })

  it("--help lists the commands and every configuration variable with its default", async () => {
    const app = runCli(["--help"], {})
    expect(await app.exited).toBe(0)
    for (const name of ["start", "migrate", "DATABASE_URL", "DATA_DIR", "RPC_URL", "DEPLOYMENT", "CHAIN_ID", "INDEXER_PORT", "BACKEND_PORT", "LOG_LEVEL"]) {
      expect(app.output()).toContain(name)
    }
    expect(app.output()).toMatch(/Default: 42069/)
  })
})
