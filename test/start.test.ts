/**
 * The main job end to end, as a user runs it: a real process with the embedded Postgres, real
 * HTTP over loopback, real signals.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as fs from "node:fs/promises"
import * as net from "node:net"
import * as os from "node:os"
import * as Path from "node:path"
import { FIXTURE_RECORDING } from "../src/fixture-recording.js"
import { settings } from "../src/config.js"
import { generateSynthetic } from "../tools/recording/synthetic.js"
import { ReplayChain } from "../tools/replay/chain.js"
import { serveReplay } from "../tools/replay/server.js"
import { eventually } from "./support/probes.js"
import { freePort, isAlive, ROOT, runCli } from "./support/process.js"
import { query, scratchDatabaseUrl } from "./support/postgres.js"
import { Effect, Exit, Scope } from "effect"

let dataDir: string
beforeAll(async () => {
  dataDir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-start-"))
  await fs.chmod(dataDir, 0o755)
})
afterAll(async () => {
  await fs.rm(dataDir, { recursive: true, force: true })
})

/** These tests index the committed fixture (CHAIN=fixture): frozen, so every figure is known. The live default is test/devnet/live-start.test.ts. */
const env = async () => ({
  CHAIN: "fixture",
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

/** The indexer child's pid, from the parent's log line. */
const indexerPid = (output: string) => Number(/message="indexer process started" pid=(\d+)/.exec(output)?.[1])

/** Polls `condition` every 100 ms until it holds; rejects with `what` after `timeoutMs` (a hang guard, not a measurement). */
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
    expect(app.output()).toMatch(/message="no RPC_URL, CHAIN=fixture: indexing the committed devnet fixture"/)

    const health = await getJson(`http://127.0.0.1:${config.INDEXER_PORT}/api/health`)
    expect(health.status).toBe(200)
    expect(health.body).toEqual({
      data: {
        status: "ok",
        chainId: 130,
        latestIndexedBlock: head,
        headBlock: head,
        lagBlocks: 0,
        indexedAgeSeconds: expect.any(Number),
        indexerAgeSeconds: expect.any(Number),
        // The fixture's node is replayed inside the indexer process: no node of its own to ask.
        rpcAgeSeconds: null,
        problems: []
      },
      meta: null
    })
    const stats = await getJson(`http://127.0.0.1:${config.INDEXER_PORT}/api/stats`)
    expect(stats.body["data"]).toMatchObject({ totalMarkets: 28 })
    const backend = await getJson(`http://127.0.0.1:${config.BACKEND_PORT}/health`)
    expect(backend.status).toBe(200)
    expect(backend.body["data"]).toMatchObject({
      status: "ok",
      database: "up",
      indexer: "up",
      latestIndexedBlock: head,
      lagBlocks: 0,
      problems: []
    })
    expect(backend.body["meta"]).toMatchObject({ version: "v2" })

    const pid = await serverPid()
    expect(isAlive(pid)).toBe(true)
    const indexer = indexerPid(app.output())
    expect(isAlive(indexer)).toBe(true)
    app.child.kill("SIGINT")
    expect(await app.exited).toBe(0)
    expect(isAlive(pid)).toBe(false)
    expect(isAlive(indexer)).toBe(false)
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
    // Serving from the same data: /api/health 200. Right after a crash restart on a loaded machine
    // the first reads may pass health's database deadline (503, the documented answer); never a 500.
    const answers: Array<string> = []
    await eventually(
      "the second start's /api/health answers 200",
      async () => {
        const answer = await getJson(`http://127.0.0.1:${config.INDEXER_PORT}/api/health`)
        answers.push(`${answer.status} ${JSON.stringify(answer.body).slice(0, 160)}`)
        return answer.status === 200
      },
      30_000
    )
    expect(
      answers.filter((a) => !/^(200|503) /.test(a)),
      "only 200, or 503 while the database warms up"
    ).toEqual([])
    const pid = await serverPid()
    second.child.kill("SIGTERM")
    expect(await second.exited).toBe(0)
    expect(isAlive(pid)).toBe(false)
  }, 90_000) // two starts of Postgres, the first left orphaned

  it("answers 503 (indexer error shape, backend degraded body) for as long as the database is gone, never a 500, and stays up; an indexer child that starts meanwhile waits for it", async () => {
    const config = await env()
    const app = runCli(["start"], config)
    // The indexer child frozen as soon as it exists: it starts (connects) only after the database
    // is gone, which is what a loaded machine did by chance (and the child exited, stopping all).
    await app.waitFor(/message="indexer process started"/)
    const child = indexerPid(app.output())
    process.kill(child, "SIGSTOP")
    await app.waitFor(/message=listening server=backend/)
    // The whole server process group: postmaster and backends.
    process.kill(-(await serverPid()), "SIGKILL")
    process.kill(child, "SIGCONT")
    const indexerHealth = () => getJson(`http://127.0.0.1:${config.INDEXER_PORT}/api/health`)
    const backend = (path: string) => getJson(`http://127.0.0.1:${config.BACKEND_PORT}${path}`)
    // Until the child has waited out two attempts, every probe answers 503 and the service stays.
    let rounds = 0
    while (rounds < 3 || (app.output().match(/message="database unavailable; retrying" phase=starting/g) ?? []).length < 2) {
      const health = await indexerHealth()
      expect(health.status).toBe(503)
      expect(health.body).toEqual({ error: "ServiceUnavailable", message: expect.stringMatching(/database unavailable/) })
      const system = await backend("/health")
      expect(system.status).toBe(503)
      expect(system.body["data"]).toMatchObject({ status: "degraded", database: "down" })
      expect(system.body["meta"]).toMatchObject({ version: "v2" })
      const ready = await backend("/ready")
      expect(ready.status).toBe(503)
      expect(ready.body["data"]).toEqual({ ready: false })
      rounds++
      if (rounds > 600) throw new Error(`the indexer child never retried; output:\n${app.output().slice(-2500)}`)
    }
    expect(isAlive(child)).toBe(true)
    expect(app.output()).not.toMatch(/unexpected failure|INTERNAL_ERROR|the indexer process exited/)
    app.child.kill("SIGINT")
    expect(await app.exited).toBe(0)
    expect(isAlive(child)).toBe(false)
  }, 120_000)

  it("refuses a port already in use by name and setting, and exits 1", async () => {
    const squatter = net.createServer()
    await new Promise<void>((resolve) => squatter.listen(0, "127.0.0.1", resolve))
    const port = (squatter.address() as net.AddressInfo).port
    try {
      const app = runCli(["start"], { ...(await env()), BACKEND_PORT: String(port) })
      expect(await app.exited).toBe(1)
      expect(app.output()).toContain(`predix: port ${port} (BACKEND_PORT) on 127.0.0.1 is already in use`)
    } finally {
      await new Promise((resolve) => squatter.close(resolve))
    }
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
    expect(refused.output()).toMatch(
      /DATABASE: it holds the index of chain 130 deployment 0x[0-9a-f]{40} \(from block \d+, committed fixture\); this start indexes/
    )

    const freshDir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-start-rpc-"))
    await fs.chmod(freshDir, 0o755)
    const config = { ...(await env()), DATA_DIR: freshDir }
    const app = runCli(["start"], { ...config, RPC_URL: replay.url, DEPLOYMENT: deploymentFile })
    try {
      await app.waitFor(new RegExp(`message="following the tip" .*\\bblock=${chain.headNumber}\\b`), 60_000)
      const health = await getJson(`http://127.0.0.1:${config.INDEXER_PORT}/api/health`)
      expect(health.body["data"]).toMatchObject({
        status: "ok",
        chainId: 130,
        latestIndexedBlock: chain.headNumber,
        headBlock: chain.headNumber,
        lagBlocks: 0,
        problems: []
      })
      // RPC_URL is asked by the API process itself.
      expect(health.body["data"]["rpcAgeSeconds"]).toBeGreaterThanOrEqual(0)
      const stats = await getJson(`http://127.0.0.1:${config.INDEXER_PORT}/api/stats`)
      expect(stats.status).toBe(200)
      expect(stats.body["meta"]).toBeNull()
      expect(stats.body["data"]["totalVolume"]).toMatch(/^[1-9]\d*\.\d{6}$/)
      expect(BigInt(stats.body["data"]["totalTrades"])).toBeGreaterThan(0n)
      expect(BigInt(stats.body["data"]["totalMarkets"])).toBe(
        BigInt(stats.body["data"]["activeMarkets"]) +
          BigInt(stats.body["data"]["resolvedMarkets"]) +
          BigInt(stats.body["data"]["refundMarkets"])
      )
    } finally {
      app.child.kill("SIGINT")
      await app.exited
      await replay.close()
      await fs.rm(freshDir, { recursive: true, force: true })
    }
  }, 90_000)

  it("indexes in a child process: with the API process frozen (the limit of any request load) the indexer keeps committing new heads, and a SIGKILLed parent leaves no indexer behind", async () => {
    const out = Path.join(dataDir, "isolation.ndjson.gz")
    const summary = await generateSynthetic({ out, seed: 5, events: 3_000, users: 10 })
    const chain = await ReplayChain.load(out)
    const held = 30
    chain.advance(chain.remaining - held)
    const replay = await serveReplay(chain)
    const deploymentFile = Path.join(dataDir, "isolation-deployment.json")
    await fs.writeFile(deploymentFile, JSON.stringify(summary.deployment))
    const freshDir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-start-isolation-"))
    await fs.chmod(freshDir, 0o755)
    const config = { ...(await env()), DATA_DIR: freshDir, RPC_URL: replay.url, DEPLOYMENT: deploymentFile }
    const app = runCli(["start"], config)
    let postgres: number | undefined
    try {
      await app.waitFor(new RegExp(`message="following the tip" .*\\bblock=${chain.headNumber}\\b`), 60_000)
      const connection = JSON.parse(await fs.readFile(Path.join(freshDir, "postgres", "connection.json"), "utf8")) as {
        url: string
        pid: number
      }
      postgres = connection.pid
      const checkpoint = async () =>
        (await Effect.runPromise(query(connection.url, `select block_number::int as block, block_hash as hash from indexer_checkpoint`)))
          .rows[0] as { block: number; hash: string } | undefined

      // Structure: the indexer is another process, a child of the one serving the APIs.
      const api = app.child.pid!
      const indexer = indexerPid(app.output())
      expect(indexer).not.toBe(api)
      // It runs the indexer's own entry, compiled beside the main one (`indexer-child.ts`).
      expect((await fs.readFile(`/proc/${indexer}/cmdline`, "utf8")).split("\0")).toContain(Path.join(ROOT, ".build", "indexer-child.mjs"))
      expect(await fs.readFile(`/proc/${indexer}/status`, "utf8")).toMatch(new RegExp(`\\nPPid:\\s+${api}\\n`))

      // Behaviour: freeze the API process; the chain moves on and the indexer follows it.
      process.kill(api, "SIGSTOP")
      try {
        const frozen = async () => /\nState:\s+T/.test(await fs.readFile(`/proc/${api}/status`, "utf8"))
        await eventually("the API process is stopped", frozen)
        chain.advanceAll()
        await eventually(`the checkpoint reaches block ${chain.headNumber} while the API process is frozen`, async () => {
          const at = await checkpoint()
          return at?.block === chain.headNumber && at.hash === chain.head?.hash
        })
        // Still frozen throughout: every block since was committed by the other process.
        expect(await frozen()).toBe(true)
      } finally {
        process.kill(api, "SIGCONT")
      }
      const health = await getJson(`http://127.0.0.1:${config.INDEXER_PORT}/api/health`)
      expect(health.body["data"]).toMatchObject({ latestIndexedBlock: chain.headNumber, lagBlocks: 0 })

      // A parent killed outright: its indexer notices the closed channel and dies with it.
      app.child.kill("SIGKILL")
      await app.exited
      await eventually("the indexer process exits after its parent's SIGKILL", async () => !isAlive(indexer))
    } finally {
      app.child.kill("SIGKILL")
      await app.exited
      // The embedded Postgres of a SIGKILLed start is left for the next start to stop; stop it here.
      if (postgres !== undefined && isAlive(postgres)) {
        process.kill(postgres, "SIGINT")
        await eventually("the orphaned Postgres stops", async () => !isAlive(postgres!))
      }
      await replay.close()
      await fs.rm(freshDir, { recursive: true, force: true })
    }
  }, 120_000)

  it("an indexer process that dies on its own stops the service: exit 1 naming it, Postgres stopped, nothing left behind", async () => {
    const app = runCli(["start"], await env())
    await app.waitFor(/message=listening server=backend/)
    await app.waitFor(/message="indexer process started"/)
    const postgres = await serverPid()
    process.kill(indexerPid(app.output()), "SIGKILL")
    expect(await app.exited).toBe(1)
    expect(app.output()).toMatch(/the indexer process exited \(signal SIGKILL\); stopping/)
    expect(isAlive(postgres)).toBe(false)
  })

  it("start --only indexer writes and any number of start --only api instances serve the same database", async () => {
    const out = Path.join(dataDir, "roles.ndjson.gz")
    const summary = await generateSynthetic({ out, seed: 6, events: 2_000, users: 10 })
    const chain = await ReplayChain.load(out)
    chain.advanceAll()
    const replay = await serveReplay(chain)
    const deploymentFile = Path.join(dataDir, "roles-deployment.json")
    await fs.writeFile(deploymentFile, JSON.stringify(summary.deployment))
    const scope = Effect.runSync(Scope.make())
    const running: Array<ReturnType<typeof runCli>> = []
    try {
      const DATABASE_URL = await Effect.runPromise(Scope.extend(scratchDatabaseUrl, scope))
      const writerPorts = await env()
      const writer = runCli(["start", "--only", "indexer"], {
        ...writerPorts,
        DATABASE_URL,
        RPC_URL: replay.url,
        DEPLOYMENT: deploymentFile
      })
      running.push(writer)
      await writer.waitFor(new RegExp(`message="following the tip" .*\\bblock=${chain.headNumber}\\b`), 60_000)
      const apis = await Promise.all([env(), env()])
      for (const ports of apis) running.push(runCli(["start", "--only", "api"], { ...ports, DATABASE_URL }))
      for (const api of running.slice(1)) await api.waitFor(/message=listening server=backend/)
      for (const ports of apis) {
        const health = await getJson(`http://127.0.0.1:${ports.INDEXER_PORT}/api/health`)
        expect(health.body["data"]).toMatchObject({ latestIndexedBlock: chain.headNumber, lagBlocks: 0 })
      }
      // Each does its one job: the writer serves nothing, the APIs index nothing and start no indexer.
      expect(writer.output()).not.toMatch(/message=listening/)
      await expect(fetch(`http://127.0.0.1:${writerPorts.INDEXER_PORT}/api/health`)).rejects.toThrow()
      for (const api of running.slice(1)) expect(api.output()).not.toMatch(/message=indexed|following the tip|indexer process started/)
      for (const process of running) process.child.kill("SIGTERM")
      expect(await Promise.all(running.map((r) => r.exited))).toEqual([0, 0, 0])
    } finally {
      for (const process of running) process.child.kill("SIGKILL")
      await Promise.all(running.map((r) => r.exited))
      await replay.close()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }, 120_000)

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
      [
        "diamond",
        "router",
        "exchange",
        "hookProxy",
        "marketFactory",
        "manualOracle",
        "priceFeedOracle",
        "timelock",
        "paymaster",
        "faucet",
        "testUsdc",
        "poolManager",
        "permit2"
      ].map((k, i) => [k, `0x${(i + 1).toString(16).padStart(40, "0")}`])
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
    for (const command of ["start", "migrate", "record", "replay", "synthetic", "devnet", "export"]) expect(app.output()).toContain(command)
    // Every variable the loader reads (the one list in src/config/settings.ts), with its default.
    for (const setting of settings) {
      expect(app.output()).toContain(setting.name)
      const shown = setting.fallback._tag === "Text" ? setting.fallback.text : `(unset: ${setting.fallback.means})`
      expect(app.output(), setting.name).toContain(`Default: ${shown}`)
    }
    expect(app.output()).toMatch(/Default: 42069/)
  })
})
