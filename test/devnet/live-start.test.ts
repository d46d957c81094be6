/**
 * The default `start` (no RPC_URL, CHAIN unset): the live local chain, indexed live, and the
 * faucet on it, through real processes, HTTP and a real anvil.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { createPublicClient, http, parseAbi, type Address } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { freePort, isAlive, runCli } from "../support/process.js"
import { signInAt } from "../support/sign-in.js"
import { eventually, jsonRpc } from "../support/probes.js"

let dataDir: string
beforeAll(async () => {
  dataDir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-live-"))
  await fs.chmod(dataDir, 0o755)
})
afterAll(async () => {
  await fs.rm(dataDir, { recursive: true, force: true })
})

const KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d" as const
const KEY2 = "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a" as const
const ERC20 = parseAbi(["function balanceOf(address) view returns (uint256)"])
const FACTORY = parseAbi(["function getAddress(address owner, uint256 salt) view returns (address)"])

const rpcResult = async (url: string, method: string): Promise<unknown> => {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: [] })
  })
  return ((await response.json()) as { result?: unknown }).result
}

const anvilRpc = jsonRpc

const signIn = signInAt

const claim = (base: string, cookie: string | undefined, body = "{}") =>
  fetch(`${base}/api/faucet`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(cookie === undefined ? {} : { cookie }) },
    body
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, any> }))

describe("predix start on the live devnet (the default)", () => {
  it("runs anvil with the fixture's history, indexes it live, pays each smart account once (100 concurrent claims: one transfer), continues the same chain after a SIGKILL, and finishes a claim killed between broadcast and receipt with exactly one transfer", async () => {
    const ports = { INDEXER_PORT: String(await freePort()), BACKEND_PORT: String(await freePort()) }
    // The test polls the public API from one address for minutes before it claims; the per-address
    // limit (60 a minute) is not what it tests, and counting the polls made the unsigned claim's
    // expected AUTH_REQUIRED a 429 in one CI run.
    const env = { DATA_DIR: dataDir, PG_PORT: "0", LOG_LEVEL: "info", RATE_LIMIT_PUBLIC_PER_MINUTE: "0", ...ports }
    const app = runCli(["start"], env)
    const line = await app.waitFor(/message="devnet: live local chain"/, 120_000)
    const rpcUrl = /rpc_url=(\S+)/.exec(line)![1]!
    const deployment = JSON.parse(await fs.readFile(Path.join(dataDir, "devnet", "deployment.json"), "utf8")) as { testUsdc: Address }
    await app.waitFor(/message=listening server=backend/)
    // The devnet's bundler starts with it (in the background) and serves the EntryPoint v0.7.
    const bundlerUrl = /bundler_url=(\S+)/.exec(await app.waitFor(/message="devnet: alto bundler"/, 120_000))![1]!
    expect(((await rpcResult(bundlerUrl, "eth_supportedEntryPoints")) as Array<string>).map((a) => a.toLowerCase())).toEqual([
      "0x0000000071727de22e5e9d8baf0edac6f37da032"
    ])
    const indexer = `http://127.0.0.1:${ports.INDEXER_PORT}`
    const backend = `http://127.0.0.1:${ports.BACKEND_PORT}`

    // Indexed live past the fixture's head (1038) as blocks keep coming.
    const health = async () =>
      ((await (await fetch(`${indexer}/api/health`)).json()) as { data: { latestIndexedBlock: number | null } }).data
    await eventually("indexing past the committed state", async () => ((await health()).latestIndexedBlock ?? 0) > 1045, 120_000)

    // The beta's markets (tools/devnet/beta-catalog.ts), launched on the fresh chain: tradable
    // markets with display metadata in several categories, books on both sides, AMM prices, an
    // open multi-outcome event, and categories and tags counting active markets.
    await app.waitFor(/message="devnet: beta markets ready"/, 180_000)
    const get = async (path: string) => ((await (await fetch(`${backend}${path}`)).json()) as { data: any }).data
    type Listed = { slug: string | null; title: string; category: string | null; icon: string | null; status: string; kind: string }
    const activeBeta = async () => {
      const listed: Array<Listed> = []
      for (let offset = 0; ; offset += 50) {
        const page = (await get(`/api/markets?status=active&limit=50&offset=${offset}`)) as Array<Listed>
        listed.push(...page)
        if (page.length < 50) return listed.filter((m) => m.slug !== null && m.category !== null && m.icon !== null && m.title !== "")
      }
    }
    await eventually("12 tradable markets with metadata indexed", async () => (await activeBeta()).length >= 12, 120_000)
    const active = await activeBeta()
    expect(new Set(active.map((m) => m.category)).size).toBeGreaterThanOrEqual(5)
    for (const slug of ["eth-above-5000-this-quarter", "fed-cut-next-meeting", "lakers-make-playoffs", "devnet-cup-falcons"]) {
      // The books are placed after the launches, so the index may show them a few blocks later.
      await eventually(
        `${slug}: YES bids and asks indexed`,
        async () => {
          const book = await get(`/api/markets/${slug}/orderbook`)
          return book.yes.bids.length >= 1 && book.yes.asks.length >= 1
        },
        120_000
      )
      const market = await get(`/api/markets/${slug}`)
      expect(market.status, slug).toBe("active")
      // AMM liquidity: the pool prices YES (event members are priced through their event's record).
      if (market.kind === "binary") expect(market.binary.yesPrice, slug).not.toBeNull()
    }
    const event = await get("/api/events/devnet-cup-winner")
    expect(event.status).toBe("active")
    const tags = (await get("/api/tags")) as {
      categories: Array<{ slug: string; activeMarkets: number }>
      tags: Array<{ slug: string; activeMarkets: number }>
    }
    expect(tags.categories.filter((c) => c.activeMarkets > 0).length).toBeGreaterThanOrEqual(5)
    expect(tags.tags.filter((t) => t.activeMarkets > 0).length).toBeGreaterThanOrEqual(5)
    // The short markets move on by the chain's clock: jumped ahead 5 minutes, the price-feed one
    // resolves and the called-off one refunds; the manual one is reported, and after the challenge
    // window (5 more minutes on the clock) finalized.
    const statusOf = async (slug: string) => ((await get(`/api/markets/${slug}`)) as { status: string }).status
    await anvilRpc(rpcUrl, "evm_increaseTime", [300])
    await eventually(
      "the feed market resolved and the called-off one refunding",
      async () =>
        (await statusOf("eth-above-3000-3-minute-snapshot")) === "resolved" &&
        (await statusOf("exhibition-match-kicks-off-on-time")) === "refunding",
      120_000
    )
    // Reported in the same pass that resolved the feed market (before it); finalized once the clock is past the window.
    await anvilRpc(rpcUrl, "evm_increaseTime", [310])
    await eventually("the manual market finalized", async () => (await statusOf("devnet-reporter-calls-yes")) === "resolved", 120_000)

    // The faucet: no session, a wrong body, then a claim whose transfer is on chain.
    expect((await claim(backend, undefined)).body["code"]).toBe("AUTH_REQUIRED")
    const cookie = await signIn(backend, KEY)
    for (const body of ['{"address":"0x0000000000000000000000000000000000000001"}', "[]", "not json"]) {
      const refused = await claim(backend, cookie, body)
      expect(refused.status).toBe(400)
      expect(refused.body["code"]).toBe("VALIDATION_FAILED")
    }
    const owner = privateKeyToAccount(KEY).address.toLowerCase()
    const before = (await (await fetch(`${backend}/api/faucet/status?address=${owner}`)).json()) as { data: Record<string, unknown> }
    expect(before.data).toMatchObject({ claimed: false, nextClaimAt: 0 })

    const answers = await Promise.all(Array.from({ length: 100 }, () => claim(backend, cookie)))
    expect(answers.filter((a) => a.status !== 200 && a.status !== 429).map((a) => a.body)).toEqual([])
    const paid = answers.filter((a) => a.status === 200)
    expect(paid).toHaveLength(1)
    expect(answers.filter((a) => a.status === 429 && a.body["code"] === "RATE_LIMIT_EXCEEDED")).toHaveLength(99)
    const result = paid[0]!.body["data"] as { address: Address; txHash: `0x${string}`; usdc: { raw: string }; eth: { raw: string } }
    expect(result.usdc).toEqual({ decimal: "10000.000000", raw: "10000000000", decimals: 6, unit: "USDC" })
    expect(result.eth).toEqual({ decimal: "0.000500000000000000", raw: "500000000000000", decimals: 18, unit: "ETH" })

    const chain = createPublicClient({ transport: http(rpcUrl) })
    // The destination is the owner's counterfactual SimpleAccount (salt 0) of the manifest's ECDSA factory.
    const manifest = JSON.parse(await fs.readFile("fixtures/devnet.live.json", "utf8")) as { simpleAccountFactory: Address }
    const counterfactual = await chain.readContract({
      address: manifest.simpleAccountFactory,
      abi: FACTORY,
      functionName: "getAddress",
      args: [owner as Address, 0n]
    })
    expect(result.address).toBe(counterfactual.toLowerCase())
    const receipt = await chain.getTransactionReceipt({ hash: result.txHash })
    expect(receipt.status).toBe("success")
    // Balances equal the answer: exactly one transfer reached the account.
    expect(await chain.readContract({ address: deployment.testUsdc, abi: ERC20, functionName: "balanceOf", args: [result.address] })).toBe(
      10_000_000_000n
    )
    expect(await chain.getBalance({ address: result.address })).toBe(500_000_000_000_000n)

    const again = await claim(backend, cookie)
    expect(again.status).toBe(429)
    expect(again.body["details"]).toEqual([
      { path: "claimedAt", message: expect.stringMatching(/^\d+$/) },
      { path: "txHash", message: result.txHash }
    ])
    for (const asked of [owner, result.address]) {
      const status = (await (await fetch(`${backend}/api/faucet/status?address=${asked}`)).json()) as { data: Record<string, unknown> }
      expect(status.data).toMatchObject({
        claimed: true,
        claimedAddress: result.address,
        txHash: result.txHash,
        confirmed: true,
        nextClaimAt: 253402300799
      })
    }

    // A claim cut off between broadcast and receipt: the transfer is signed, recorded, broadcast
    // and mined, but the process is frozen (SIGSTOP) before it can see the receipt, then SIGKILLed.
    // anvil, under its keeper, stops with the service and keeps the mined block.
    const signer = /message="faucet: ready" .*signer=(0x[0-9a-f]{40})/.exec(app.output())![1]! as Address
    const signerNonce = await chain.getTransactionCount({ address: signer })
    const cookie2 = await signIn(backend, KEY2)
    const owner2 = privateKeyToAccount(KEY2).address.toLowerCase()
    await anvilRpc(rpcUrl, "evm_setIntervalMining", [0])
    const cutOff = claim(backend, cookie2).catch(() => undefined)
    let pending: `0x${string}` | undefined
    await eventually("the cut-off claim's transfer broadcast", async () => {
      const status = (await (await fetch(`${backend}/api/faucet/status?address=${owner2}`)).json()) as {
        data: { txHash: `0x${string}` | null }
      }
      pending = status.data.txHash ?? undefined
      return pending !== undefined && (await chain.getTransaction({ hash: pending }).then(() => true))
    })
    app.child.kill("SIGSTOP")
    await anvilRpc(rpcUrl, "evm_mine")
    expect((await chain.getTransactionReceipt({ hash: pending! })).status).toBe("success")

    // SIGKILL: anvil and alto (under their keepers) and the indexer go with the service; the next start continues the chain.
    const head = Number(await chain.getBlockNumber())
    const indexerPid = Number(/"indexer process started" pid=(\d+)/.exec(app.output())?.[1])
    app.child.kill("SIGKILL")
    await cutOff
    await eventually(
      "anvil stopped with the killed service",
      async () =>
        !(await chain.getBlockNumber().then(
          () => true,
          () => false
        )),
      30_000
    )
    await eventually("the indexer child gone", async () => !isAlive(indexerPid), 30_000)
    await eventually(
      "alto stopped with the killed service",
      async () =>
        await rpcResult(bundlerUrl, "eth_chainId").then(
          () => false,
          () => true
        ),
      30_000
    )

    const second = runCli(["start"], { ...env, DEVNET_ACTIVITY: "off" })
    await second.waitFor(/message="devnet: continuing the chain of the previous run"/, 120_000)
    await second.waitFor(/message=listening server=backend/)
    expect(second.output()).not.toMatch(/holds another chain.s index/)
    const line2 = /message="devnet: live local chain".*rpc_url=(\S+)/.exec(second.output())!
    const chain2 = createPublicClient({ transport: http(line2[1]!) })
    expect(Number(await chain2.getBlockNumber())).toBeGreaterThanOrEqual(head)
    expect((await chain2.getTransactionReceipt({ hash: result.txHash })).status).toBe("success")
    expect(await chain2.readContract({ address: deployment.testUsdc, abi: ERC20, functionName: "balanceOf", args: [result.address] })).toBe(
      10_000_000_000n
    )
    // Requests right after the restart are answered (they once hung: the server listened before it served).
    expect((await claim(backend, cookie)).body["code"]).toBe("RATE_LIMIT_EXCEEDED")

    // The cut-off claim is finished at start from its recorded transaction: confirmed, paid once.
    const statusOf2 = async () =>
      (await (await fetch(`${backend}/api/faucet/status?address=${owner2}`)).json()) as {
        data: { claimedAddress: Address; txHash: string; confirmed: boolean }
      }
    await eventually("the cut-off claim confirmed by the restart", async () => (await statusOf2()).data.confirmed, 60_000)
    const recovered = await statusOf2()
    expect(recovered.data).toMatchObject({ claimed: true, txHash: pending, confirmed: true })
    expect(
      await chain2.readContract({
        address: deployment.testUsdc,
        abi: ERC20,
        functionName: "balanceOf",
        args: [recovered.data.claimedAddress]
      })
    ).toBe(10_000_000_000n)
    expect(await chain2.getBalance({ address: recovered.data.claimedAddress })).toBe(500_000_000_000_000n)
    expect(await chain2.getTransactionCount({ address: signer })).toBe(signerNonce + 1)
    const again2 = await claim(backend, cookie2)
    expect(again2.status).toBe(429)
    expect(again2.body["details"]).toContainEqual({ path: "txHash", message: pending })
    second.child.kill("SIGTERM")
    expect(await second.exited).toBe(0)
  }, 300_000)
})
