/**
 * The live devnet when anvil dies under a running `start` (kill -9 of anvil alone), and when the
 * whole service and its anvil die at once: the keeper restarts anvil on the same URL from its
 * last saved state and says so; indexing goes on; the backend's own data (users, sessions,
 * comments, faucet claims) survives, and the faucet pays each owner exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { createPublicClient, http, parseAbi, type Address } from "viem"
import { freePort, isAlive, runCli } from "../support/process.js"
import { signInAt } from "../support/sign-in.js"
import { eventually } from "../support/probes.js"

let dataDir: string
beforeAll(async () => {
  dataDir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-anvil-restart-"))
  await fs.chmod(dataDir, 0o755)
})
afterAll(async () => {
  await fs.rm(dataDir, { recursive: true, force: true })
})

const KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d" as const
const KEY2 = "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a" as const
const KEY3 = "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6" as const
const ERC20 = parseAbi(["function balanceOf(address) view returns (uint256)"])
const PAID = 10_000_000_000n

/** The processes below `pid` (children first level by level), with their command lines. */
const descendants = (pid: number): Array<{ pid: number; args: string }> => {
  const out = execFileSync("ps", ["-e", "-o", "pid=,ppid=,args="], { encoding: "utf8" })
  const rows = out
    .split("\n")
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter((m) => m !== null)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3]! }))
  const found: Array<{ pid: number; args: string }> = []
  const queue = [pid]
  while (queue.length > 0) {
    const parent = queue.shift()!
    for (const row of rows.filter((r) => r.ppid === parent)) {
      found.push({ pid: row.pid, args: row.args })
      queue.push(row.pid)
    }
  }
  return found
}
/** Whether the backend reports every one of `accounts`' faucet claims confirmed. */
const allConfirmed = async (backend: string, accounts: ReadonlyArray<Address>) => {
  for (const who of accounts) {
    const status = (await (await fetch(`${backend}/api/faucet/status?address=${who}`)).json()) as { data: { confirmed: boolean } }
    if (!status.data.confirmed) return false
  }
  return true
}
const anvilOf = (servicePid: number) => descendants(servicePid).find((p) => /\/anvil\s/.test(p.args) && !/keeper/.test(p.args))

const signIn = signInAt

const post = (url: string, cookie: string, body: unknown) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json", cookie }, body: JSON.stringify(body) }).then(async (r) => ({
    status: r.status,
    body: (await r.json()) as Record<string, any>
  }))

describe("anvil dying under the live devnet", () => {
  it("kill -9 of anvil: its keeper restarts it on the same URL from its saved state, the log says so, indexing goes on, claims pay once; then a SIGKILL of everything: the next start keeps users, sessions, comments and claims", async () => {
    const ports = { INDEXER_PORT: String(await freePort()), BACKEND_PORT: String(await freePort()) }
    // The test polls the backend's public status often: no per-IP limits here.
    const limits = { RATE_LIMIT_PUBLIC_PER_MINUTE: "0", RATE_LIMIT_AUTH_PER_MINUTE: "0" }
    const env = { DATA_DIR: dataDir, PG_PORT: "0", LOG_LEVEL: "info", DEVNET_ACTIVITY: "off", ...limits, ...ports }
    const app = runCli(["start"], env)
    const rpcUrl = /rpc_url=(\S+)/.exec(await app.waitFor(/message="devnet: live local chain"/, 120_000))![1]!
    await app.waitFor(/message=listening server=backend/, 120_000)
    const indexer = `http://127.0.0.1:${ports.INDEXER_PORT}`
    const backend = `http://127.0.0.1:${ports.BACKEND_PORT}`
    const deployment = JSON.parse(await fs.readFile(Path.join(dataDir, "devnet", "deployment.json"), "utf8")) as { testUsdc: Address }
    const indexed = async () =>
      ((await (await fetch(`${indexer}/api/health`)).json()) as { data: { latestIndexedBlock: number | null } }).data.latestIndexedBlock ??
      0
    await eventually("indexing past the committed state", async () => (await indexed()) > 1045, 180_000)

    // Backend data: two users signed in, a comment, one claim paid.
    const cookie = await signIn(backend, KEY)
    const cookie2 = await signIn(backend, KEY2)
    const comment = await post(`${backend}/api/markets/1/comments`, cookie, { body: "kept through a dead chain" })
    expect(comment.status).toBe(201)
    const first = await post(`${backend}/api/faucet`, cookie, {})
    expect(first.status).toBe(200)
    const account = first.body["data"].address as Address
    const chain = createPublicClient({ transport: http(rpcUrl) })
    const usdc = (client: typeof chain, who: Address) =>
      client.readContract({ address: deployment.testUsdc, abi: ERC20, functionName: "balanceOf", args: [who] })
    expect(await usdc(chain, account)).toBe(PAID)
    // The second owner's claim is paid just before anvil dies: its block may not be in the saved state.
    const second = await post(`${backend}/api/faucet`, cookie2, {})
    expect(second.status).toBe(200)
    const account2 = second.body["data"].address as Address
    const before = await indexed()

    const anvil = anvilOf(app.child.pid!)
    expect(anvil).toBeDefined()
    process.kill(anvil!.pid, "SIGKILL")
    await app.waitFor(/message="devnet: anvil died \(SIGKILL\); its keeper restarts it from its last saved state"/, 30_000)
    const restarted = await app.waitFor(/message="devnet: anvil restarted by its keeper from its last saved state/, 60_000)
    expect(restarted).toContain(`rpc_url=${rpcUrl}`)
    expect(anvilOf(app.child.pid!)?.pid).not.toBe(anvil!.pid)
    // The same URL answers; indexing goes on past where it was.
    await eventually("the chain answering at the same URL", async () => (await chain.getBlockNumber()) > 0n, 30_000)
    await eventually("indexing past the block indexed before the kill", async () => (await indexed()) > before + 3, 120_000)
    // The faucet verified its claims against the restarted chain: each account paid exactly once, again refused.
    await eventually("both claims confirmed on the restarted chain", () => allConfirmed(backend, [account, account2]), 90_000)
    for (const [who, c] of [
      [account, cookie],
      [account2, cookie2]
    ] as const) {
      expect(await usdc(chain, who)).toBe(PAID)
      expect((await post(`${backend}/api/faucet`, c, {})).body["code"]).toBe("RATE_LIMIT_EXCEEDED")
      expect(await usdc(chain, who)).toBe(PAID)
    }

    // A periodic dump of the state, read whole (anvil rewrites the file in place: a read during a
    // write does not parse); then a third owner is paid and the index moves past the dump's head.
    const statePath = Path.join(dataDir, "devnet", "anvil-state.json")
    let saved: { text: string; head: number } | undefined
    await eventually(
      "a complete periodic dump of anvil's state",
      async () => {
        const text = await fs.readFile(statePath, "utf8")
        saved = { text, head: (JSON.parse(text) as { best_block_number: number }).best_block_number }
        return true
      },
      90_000
    )
    const cookie3 = await signIn(backend, KEY3)
    const third = await post(`${backend}/api/faucet`, cookie3, {})
    expect(third.status).toBe(200)
    const account3 = third.body["data"].address as Address
    const thirdBlock = Number((await chain.getTransactionReceipt({ hash: third.body["data"].txHash })).blockNumber)
    expect(thirdBlock).toBeGreaterThan(saved!.head)
    await eventually(
      "the index past the dump and the third claim",
      async () => (await indexed()) > Math.max(saved!.head + 2, thirdBlock),
      90_000
    )

    // Everything dies at once (the service, its keepers, anvil): anvil cannot dump its state at exit,
    // and the next start loads that earlier dump (as after a crash right after it): the database
    // holds blocks the chain does not, and the third claim's transfer is gone.
    // (Not its embedded Postgres: the next start stops one left running, and the data is the point here.)
    const tree = [
      app.child.pid!,
      ...descendants(app.child.pid!)
        .filter((p) => !/postgres/.test(p.args))
        .map((p) => p.pid)
    ]
    for (const pid of tree) {
      try {
        process.kill(pid, "SIGKILL")
      } catch {
        // already gone
      }
    }
    await app.exited
    await eventually("every process of the killed service gone", async () => tree.every((pid) => !isAlive(pid)), 30_000)

    await fs.writeFile(statePath, saved!.text)

    const next = runCli(["start"], env)
    await next.waitFor(/message=listening server=backend/, 120_000)
    await next.waitFor(/message="devnet: the database holds another chain's index; resetting the chain's data/)
    const rpcUrl2 = /message="devnet: live local chain".*rpc_url=(\S+)/.exec(next.output())![1]!
    const chain2 = createPublicClient({ transport: http(rpcUrl2) })
    await eventually("indexing past the committed state again", async () => (await indexed()) > 1045, 180_000)
    // Sessions and comments kept (the old cookies still sign in: 429, not 401), claims kept and paid once.
    const comments = (await (await fetch(`${backend}/api/markets/1/comments`)).json()) as { data: Array<{ body: string }> }
    expect(comments.data.map((c) => c.body)).toContain("kept through a dead chain")
    await eventually(
      "the three claims confirmed on the chain of the next start",
      () => allConfirmed(backend, [account, account2, account3]),
      90_000
    )
    for (const [who, c] of [
      [account, cookie],
      [account2, cookie2],
      [account3, cookie3]
    ] as const) {
      const again = await post(`${backend}/api/faucet`, c, {})
      expect(again.status).toBe(429)
      expect(again.body["code"]).toBe("RATE_LIMIT_EXCEEDED")
      expect(await usdc(chain2, who)).toBe(PAID)
    }
    next.child.kill("SIGTERM")
    expect(await next.exited).toBe(0)
  }, 600_000)
})
