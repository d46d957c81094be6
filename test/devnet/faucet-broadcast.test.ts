/**
 * The faucet when the chain misbehaves, against the live devnet's anvil (the committed state:
 * the dispenser, the smart-account factory, the funded faucet key), real Postgres, and a JSON-RPC
 * proxy in front of anvil that can fail one broadcast: dropped before the node (the node never
 * got it) or answered with an error after the node took it (the answer lost). Neither may leave
 * a nonce gap that stalls later claims, nor pay twice. A faucet key without funds is "dry":
 * INSUFFICIENT_BALANCE, with the claim released.
 */
import { Effect, Exit, Fiber, Logger, LogLevel, ManagedRuntime, Redacted, Scope } from "effect"
import * as fs from "node:fs/promises"
import * as http from "node:http"
import * as os from "node:os"
import * as Path from "node:path"
import { bytesToHex, createPublicClient, defineChain, createWalletClient, http as viemHttp, parseAbi, type Address, type Hex } from "viem"
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { FAUCET_USDC, makeFaucet, type FaucetOptions } from "../../http/backend/faucet/service.js"
import { pgClientLayer } from "../../src/db/database.js"
import { DEVNET_MNEMONIC } from "../../tools/devnet/anvil.js"
import { startLiveDevnet, type LiveDevnet } from "../../tools/devnet/live.js"
import { migratedDatabaseUrl, query } from "../support/postgres.js"
import { jsonRpc } from "../support/probes.js"

const ERC20 = parseAbi(["function balanceOf(address) view returns (uint256)", "function transfer(address, uint256) returns (bool)"])
const quiet = Logger.withMinimumLogLevel(LogLevel.Error)

/** What the proxy does to the next eth_sendRawTransaction: drop it (the node never sees it) or forward it and answer an error. */
type Fault = "drop" | "swallow"

const startRpcProxy = async (target: string) => {
  let next: Fault | undefined
  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      void (async () => {
        const body = Buffer.concat(chunks).toString("utf8")
        const call = JSON.parse(body) as { id?: unknown; method?: string }
        const fault = call.method === "eth_sendRawTransaction" ? next : undefined
        if (fault !== undefined) next = undefined
        if (fault === "swallow") await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body })
        const text =
          fault === undefined
            ? await (await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body })).text()
            : JSON.stringify({ jsonrpc: "2.0", id: call.id, error: { code: -32000, message: "upstream connect error" } })
        res.writeHead(200, { "content-type": "application/json" })
        res.end(text)
      })().catch(() => res.destroy())
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${address.port}`,
    failNextBroadcast: (fault: Fault) => {
      next = fault
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

let dataDir: string
let live: LiveDevnet
let proxy: Awaited<ReturnType<typeof startRpcProxy>>
let runtime: ManagedRuntime.ManagedRuntime<any, any>
let dbUrl: string
const scope = Effect.runSync(Scope.make())

beforeAll(async () => {
  dataDir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-faucet-"))
  live = await startLiveDevnet({ dataDir, log: () => {} })
  proxy = await startRpcProxy(live.url)
  // A copy of the run's migrated template (support/postgres.ts): these files test the faucet, not the migrations.
  dbUrl = await Effect.runPromise(Scope.extend(migratedDatabaseUrl, scope))
  runtime = ManagedRuntime.make(pgClientLayer(Redacted.make(dbUrl)))
}, 120_000)

afterAll(async () => {
  await runtime?.dispose()
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await proxy?.close()
  await live?.stop()
  await fs.rm(dataDir, { recursive: true, force: true })
})

const faucetKey = () => bytesToHex(mnemonicToAccount(DEVNET_MNEMONIC, { addressIndex: live.manifest.faucetAccount }).getHdKey().privateKey!)

const optionsWith = (privateKey: Hex): FaucetOptions => ({
  rpcUrl: proxy.url,
  chainId: 130,
  privateKey: Redacted.make(privateKey),
  testUsdc: live.manifest.devnet.addresses.testUsdc,
  dispenser: live.manifest.faucetDispenser,
  accountFactory: live.manifest.simpleAccountFactory,
  ethWei: 500_000_000_000_000n,
  receiptTimeoutMs: 10_000
})

const chain = () => createPublicClient({ transport: viemHttp(live.url) })
const usdcOf = (address: Address) =>
  chain().readContract({ address: live.manifest.devnet.addresses.testUsdc, abi: ERC20, functionName: "balanceOf", args: [address] })
const nonceOf = (address: Address) => chain().getTransactionCount({ address, blockTag: "latest" })
const owner = () => privateKeyToAccount(generatePrivateKey()).address.toLowerCase() as Address

/** The faucet's claim for `who`: its answer, or the typed error it failed with. */
const claimWith = (privateKey: Hex, who: Address) =>
  runtime.runPromise(
    Effect.flatMap(makeFaucet(optionsWith(privateKey)), (faucet) => faucet.claim(who)).pipe(
      Effect.map((paid) => ({ ok: true as const, paid })),
      Effect.catchAll((error) => Effect.succeed({ ok: false as const, error: error as { _tag: string; message: string } })),
      quiet
    )
  )
const rowsOf = async (address: string) =>
  (await Effect.runPromise(query<{ status: string }>(dbUrl, "select status from faucet_claim where address = $1", [address]))).rows

const anvilRpc = (method: string, params: ReadonlyArray<unknown> = []) => jsonRpc(live.url, method, params)

describe("a claim cut off between broadcast and receipt", () => {
  it("is left signed, and the next start's recovery confirms it from the recorded transaction: one transfer", async () => {
    const key = faucetKey()
    const signer = privateKeyToAccount(key).address
    const before = await nonceOf(signer)
    const who = owner()
    const recorded = async () =>
      (
        await Effect.runPromise(
          query<{ address: string; status: string; tx_hash: Hex | null }>(
            dbUrl,
            "select address, status, tx_hash from faucet_claim where owner = $1",
            [who]
          )
        )
      ).rows[0]
    let hash: Hex | undefined
    // No block is mined until the claim's process is gone: its receipt never comes to it.
    await anvilRpc("evm_setIntervalMining", [0])
    try {
      const claiming = runtime.runFork(Effect.flatMap(makeFaucet(optionsWith(key)), (faucet) => faucet.claim(who)).pipe(quiet))
      for (let i = 0; hash === undefined; i++) {
        if (i > 300) throw new Error("the claim was never broadcast")
        await new Promise((r) => setTimeout(r, 100))
        const row = await recorded()
        if (
          row?.tx_hash != null &&
          (await chain()
            .getTransaction({ hash: row.tx_hash })
            .then(
              () => true,
              () => false
            ))
        )
          hash = row.tx_hash
      }
      // The process ends here (its fiber is dropped as a kill drops it); the block is mined after.
      await Effect.runPromise(Fiber.interrupt(claiming))
      await anvilRpc("evm_mine")
    } finally {
      await anvilRpc("evm_setIntervalMining", [1])
    }
    expect((await chain().getTransactionReceipt({ hash })).status).toBe("success")
    expect((await recorded())?.status).toBe("signed")

    // The next start.
    await runtime.runPromise(Effect.flatMap(makeFaucet(optionsWith(key)), (faucet) => faucet.recover).pipe(quiet))
    const row = (await recorded())!
    expect(row).toMatchObject({ status: "confirmed", tx_hash: hash })
    expect(await usdcOf(row.address as Address)).toBe(FAUCET_USDC)
    expect(await nonceOf(signer)).toBe(before + 1)
    const again = await claimWith(key, who)
    expect(again.ok).toBe(false)
    if (!again.ok) expect(again.error._tag).toBe("RATE_LIMIT_EXCEEDED")
  }, 120_000)
})

describe("faucet broadcasts that fail", () => {
  it("a broadcast the node never got: its nonce is taken by a no-op and the claim released; later claims are not stalled, and the released one pays once", async () => {
    const key = faucetKey()
    const signer = privateKeyToAccount(key).address
    const before = await nonceOf(signer)
    const [a, b] = [owner(), owner()]

    proxy.failNextBroadcast("drop")
    const refused = await claimWith(key, a)
    expect(refused.ok).toBe(false)
    if (refused.ok) return
    expect(refused.error._tag).toBe("INDEXER_UNAVAILABLE")

    // Not stalled: the next claim's transaction is mined at once.
    const next = await claimWith(key, b)
    expect(next.ok).toBe(true)
    const again = await claimWith(key, a)
    expect(again.ok).toBe(true)
    if (!next.ok || !again.ok) return
    expect(await usdcOf(next.paid.address)).toBe(FAUCET_USDC)
    expect(await usdcOf(again.paid.address)).toBe(FAUCET_USDC)
    expect(await rowsOf(again.paid.address)).toEqual([{ status: "confirmed" }])
    // The failed transfer's nonce was taken by a no-op: three transactions, two payments.
    expect(await nonceOf(signer)).toBe(before + 3)
    expect(refused.error.message).toMatch(/withdrawn; the claim was released/)
  }, 120_000)

  it("a broadcast whose answer was lost (the node has it): the claim completes with that one transfer", async () => {
    const key = faucetKey()
    const signer = privateKeyToAccount(key).address
    const before = await nonceOf(signer)
    proxy.failNextBroadcast("swallow")
    const paid = await claimWith(key, owner())
    expect(paid.ok).toBe(true)
    if (!paid.ok) return
    expect(await usdcOf(paid.paid.address)).toBe(FAUCET_USDC)
    expect(await rowsOf(paid.paid.address)).toEqual([{ status: "confirmed" }])
    expect(await nonceOf(signer)).toBe(before + 1)
  }, 120_000)

  it("a dry faucet (its key without test USDC, or without ETH) answers INSUFFICIENT_BALANCE, sends nothing and releases the claim", async () => {
    const empty = generatePrivateKey()
    const who = owner()
    const noUsdc = await claimWith(empty, who)
    expect(noUsdc.ok).toBe(false)
    if (noUsdc.ok) return
    expect(noUsdc.error._tag).toBe("INSUFFICIENT_BALANCE")
    expect(noUsdc.error.message).toMatch(/the faucet has run dry: its key 0x[0-9a-f]{40} holds 0\.000000 test USDC/)

    // Test USDC but no ETH.
    const devnet = defineChain({
      id: 130,
      name: "devnet",
      nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [live.url] } }
    })
    const wallet = createWalletClient({
      account: mnemonicToAccount(DEVNET_MNEMONIC, { addressIndex: live.manifest.faucetAccount }),
      transport: viemHttp(live.url),
      chain: devnet
    })
    const hash = await wallet.writeContract({
      address: live.manifest.devnet.addresses.testUsdc,
      abi: ERC20,
      functionName: "transfer",
      args: [privateKeyToAccount(empty).address, FAUCET_USDC]
    })
    await chain().waitForTransactionReceipt({ hash })
    const noEth = await claimWith(empty, who)
    expect(noEth.ok).toBe(false)
    if (noEth.ok) return
    expect(noEth.error._tag).toBe("INSUFFICIENT_BALANCE")
    expect(noEth.error.message).toMatch(/too little ETH.*claim was released/)
    const account = await runtime.runPromise(Effect.flatMap(makeFaucet(optionsWith(empty)), (f) => f.accountOf(who)).pipe(quiet))
    expect(await rowsOf(account)).toEqual([])
    expect(await nonceOf(privateKeyToAccount(empty).address)).toBe(0)
  }, 120_000)
})
