/**
 * Faucet claims when the chain is rewound under them (the devnet's anvil restarted from a state
 * saved seconds before: its last blocks, and the claims' transfers in them, are gone), against
 * the live devnet's anvil and real Postgres. A claim whose transfer the chain lost is re-sent with
 * its recorded transaction, or released when its nonce was taken; never paid twice.
 */
import { Effect, Exit, Logger, LogLevel, ManagedRuntime, Redacted, Scope } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { bytesToHex, createPublicClient, createWalletClient, defineChain, http as viemHttp, parseAbi, type Address, type Hex } from "viem"
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { FAUCET_USDC, makeFaucet, type FaucetOptions } from "../../http/backend/faucet/service.js"
import { resetChainData } from "../../src/db/chain-data.js"
import { pgClientLayer } from "../../src/db/database.js"
import { DEVNET_MNEMONIC } from "../../tools/devnet/anvil.js"
import { startLiveDevnet, type LiveDevnet } from "../../tools/devnet/live.js"
import { migratedDatabaseUrl, query } from "../support/postgres.js"
import { jsonRpc } from "../support/probes.js"

const ERC20 = parseAbi(["function balanceOf(address) view returns (uint256)"])
const quiet = Logger.withMinimumLogLevel(LogLevel.Error)

let dataDir: string
let live: LiveDevnet
let runtime: ManagedRuntime.ManagedRuntime<any, any>
let dbUrl: string
const scope = Effect.runSync(Scope.make())

beforeAll(async () => {
  dataDir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-faucet-rewind-"))
  live = await startLiveDevnet({ dataDir, automine: true, log: () => {} })
  // A copy of the run's migrated template (support/postgres.ts): these files test the faucet, not the migrations.
  dbUrl = await Effect.runPromise(Scope.extend(migratedDatabaseUrl, scope))
  runtime = ManagedRuntime.make(pgClientLayer(Redacted.make(dbUrl)))
}, 120_000)

afterAll(async () => {
  await runtime?.dispose()
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await live?.stop()
  await fs.rm(dataDir, { recursive: true, force: true })
}, 60_000)

const rpc = (method: string, params: ReadonlyArray<unknown> = []) => jsonRpc(live.url, method, params)

/** The faucet and the chain, as the tests below use them. */
const helpers = () => {
  const faucetAccount = mnemonicToAccount(DEVNET_MNEMONIC, { addressIndex: live.manifest.faucetAccount })
  const options: FaucetOptions = {
    rpcUrl: live.url,
    chainId: 130,
    privateKey: Redacted.make(bytesToHex(faucetAccount.getHdKey().privateKey!)),
    testUsdc: live.manifest.devnet.addresses.testUsdc,
    dispenser: live.manifest.faucetDispenser,
    accountFactory: live.manifest.simpleAccountFactory,
    ethWei: 500_000_000_000_000n,
    receiptTimeoutMs: 10_000
  }
  const chain = createPublicClient({ transport: viemHttp(live.url) })
  const devnet = defineChain({
    id: 130,
    name: "devnet",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [live.url] } }
  })
  // The faucet's key used by hand: what takes a nonce outside the faucet's claims.
  const wallet = createWalletClient({ account: faucetAccount, transport: viemHttp(live.url), chain: devnet })
  const selfTransfer = async (nonce: number) => {
    const hash = await wallet.sendTransaction({ to: faucetAccount.address, value: 0n, nonce })
    await chain.waitForTransactionReceipt({ hash })
  }
  const usdcOf = (address: Address) =>
    chain.readContract({ address: live.manifest.devnet.addresses.testUsdc, abi: ERC20, functionName: "balanceOf", args: [address] })
  const nonce = () => chain.getTransactionCount({ address: faucetAccount.address })
  const withFaucet = <A, E>(run: (faucet: Effect.Effect.Success<ReturnType<typeof makeFaucet>>) => Effect.Effect<A, E, any>) =>
    runtime.runPromise(Effect.flatMap(makeFaucet(options), run).pipe(quiet))
  const claim = (who: Address) =>
    withFaucet((faucet) =>
      faucet.claim(who).pipe(
        Effect.map((paid) => ({ ok: true as const, paid })),
        Effect.catchAll((error) => Effect.succeed({ ok: false as const, error: error as { _tag: string } }))
      )
    )
  const claims = async () =>
    (
      await Effect.runPromise(
        query<{ owner: string; status: string; tx_hash: string }>(dbUrl, "select owner, status, tx_hash from faucet_claim order by nonce")
      )
    ).rows
  const fresh = () => privateKeyToAccount(generatePrivateKey()).address.toLowerCase() as Address
  return { options, chain, selfTransfer, usdcOf, nonce, withFaucet, claim, claims, fresh }
}

describe("faucet claims on a rewound chain", () => {
  it("after the rewind the lost transfer is re-sent (the same transaction), the one whose nonce was taken is released and pays once when claimed again, a nonce gap is filled; a second claim is refused", async () => {
    const { chain, selfTransfer, usdcOf, nonce, withFaucet, claim, claims, fresh } = helpers()
    const a = fresh()
    const b = fresh()

    // The chain as it was saved; then A is paid (nonce n), a nonce is taken outside any claim
    // (n + 1, as a released claim's no-op takes it), and B is paid (n + 2).
    const saved = await rpc("evm_snapshot")
    const n = await nonce()
    const paidA = await claim(a)
    await selfTransfer(n + 1)
    // The signer's own record of that nonce (as its no-op records it).
    await Effect.runPromise(query(dbUrl, "update signer_nonce set next_nonce = next_nonce + 1"))
    const paidB = await claim(b)
    if (!paidA.ok || !paidB.ok) throw new Error(`claims failed: ${JSON.stringify([paidA, paidB])}`)
    expect(await nonce()).toBe(n + 3)
    expect(await usdcOf(paidB.paid.address)).toBe(FAUCET_USDC)

    // The chain loses all three; A's nonce is taken by another transaction of the key on the new branch.
    expect(await rpc("evm_revert", [saved])).toBe(true)
    expect(await nonce()).toBe(n)
    expect(await usdcOf(paidA.paid.address)).toBe(0n)
    await selfTransfer(n)

    // The next start: the database is reset to the new chain, the faucet reconciles its claims.
    await runtime.runPromise(resetChainData.pipe(quiet))
    await withFaucet((faucet) => faucet.recover)

    // B: its recorded transfer again (same hash), confirmed, paid once; the gap at n + 1 filled.
    const rows = await claims()
    expect(rows).toEqual([{ owner: b, status: "confirmed", tx_hash: paidB.paid.txHash }])
    expect((await chain.getTransactionReceipt({ hash: paidB.paid.txHash as Hex })).status).toBe("success")
    expect(await usdcOf(paidB.paid.address)).toBe(FAUCET_USDC)
    expect(await nonce()).toBe(n + 3)
    const againB = await claim(b)
    expect(againB.ok ? "paid" : againB.error._tag).toBe("RATE_LIMIT_EXCEEDED")
    expect(await usdcOf(paidB.paid.address)).toBe(FAUCET_USDC)

    // A: released (its transfer can never be mined now), so it may claim again: paid exactly once.
    expect(await usdcOf(paidA.paid.address)).toBe(0n)
    const againA = await claim(a)
    expect(againA.ok).toBe(true)
    expect(await usdcOf(paidA.paid.address)).toBe(FAUCET_USDC)
    const thirdA = await claim(a)
    expect(thirdA.ok ? "paid" : thirdA.error._tag).toBe("RATE_LIMIT_EXCEEDED")
    expect(await usdcOf(paidA.paid.address)).toBe(FAUCET_USDC)
  }, 180_000)

  it("a rewind the start did not notice (the index never reached the lost block): a claim confirmed at a nonce the chain has not mined is re-sent, not covered over", async () => {
    const { chain, usdcOf, nonce, withFaucet, claim, claims, fresh } = helpers()
    const c = fresh()
    const saved = await rpc("evm_snapshot")
    const n = await nonce()
    const paid = await claim(c)
    if (!paid.ok) throw new Error(`claim failed: ${JSON.stringify(paid)}`)
    expect(await rpc("evm_revert", [saved])).toBe(true)
    expect(await nonce()).toBe(n)

    // The next start without a reset: the claim is still 'confirmed' in the database.
    await withFaucet((faucet) => faucet.recover)
    expect((await claims()).filter((row) => row.owner === c)).toEqual([{ owner: c, status: "confirmed", tx_hash: paid.paid.txHash }])
    expect((await chain.getTransactionReceipt({ hash: paid.paid.txHash as Hex })).status).toBe("success")
    expect(await usdcOf(paid.paid.address)).toBe(FAUCET_USDC)
    expect(await nonce()).toBe(n + 1)
    const again = await claim(c)
    expect(again.ok ? "paid" : again.error._tag).toBe("RATE_LIMIT_EXCEEDED")
  }, 120_000)
})
