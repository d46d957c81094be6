/**
 * The paymaster's sponsor endpoint and the bundler proxy over real HTTP, real Postgres and a real
 * chain (anvil with the factory's getAddress; anvil itself stands behind the proxy as a JSON-RPC
 * server, so forwarding and "the upstream's errors come back unchanged" are real). The operations
 * are sponsored but not sent here: aa-e2e-*.test.ts send them through the devnet's alto.
 */
import { Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { encodeFunctionData, parseAbi, recoverMessageAddress, type Address, type Hex } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { decodePaymasterAndData, encodeAccountCalls, paymasterHash } from "../../../schema/protocol/aa.js"
import type { AaOptions } from "../../../http/backend/aa/config.js"
import { ROUTER_ABI } from "../../../http/backend/aa/sponsor-policy.js"
import type { Anvil } from "../../../tools/devnet/anvil.js"
import { aaOptionsFor, startAddressFactoryChain } from "./support/address-factory.js"
import { sessionCookieOf, startBackends, type Backends, type Instance } from "./support/auth-harness.js"

let anvil: Anvil
let backends: Backends
let app: Instance
let options: AaOptions
const signerKey = generatePrivateKey()

beforeAll(async () => {
  const chain = await startAddressFactoryChain()
  anvil = chain.anvil
  backends = await startBackends()
  options = { ...aaOptionsFor(anvil.url, chain.factory), paymasterSignerKey: Redacted.make(signerKey) }
  app = await backends.start({ aa: options })
}, 60_000)

afterAll(async () => {
  await backends?.close()
  await anvil?.stop()
})

/** An ECDSA smart-account session on `instance`. */
const signInAccount = async (instance: Instance) => {
  const eoa = privateKeyToAccount(generatePrivateKey())
  const challenge = await instance.call("POST", "/api/aa/auth/ecdsa/challenge", { body: { address: eoa.address } })
  const signature = await eoa.signMessage({ message: challenge.body.data.message })
  const verify = await instance.call("POST", "/api/aa/auth/ecdsa/verify", { body: { address: eoa.address, signature } })
  expect(verify.status).toBe(200)
  return { cookie: sessionCookieOf(verify)!, account: verify.body.data.smartAccount as Address }
}

const TOKEN = parseAbi(["function approve(address spender, uint256 amount) returns (bool)"])
const hex = (n: bigint) => `0x${n.toString(16)}`

const userOperation = (
  sender: Address,
  calls?: ReadonlyArray<{ target: Address; value: bigint; data: Hex }>,
  gas: Partial<Record<string, bigint>> = {}
) => ({
  sender,
  nonce: "0x0",
  callData: encodeAccountCalls(
    calls ?? [
      {
        target: options.protocol.usdc,
        value: 0n,
        data: encodeFunctionData({ abi: TOKEN, functionName: "approve", args: [options.protocol.router, 10n ** 12n] })
      },
      {
        target: options.protocol.router,
        value: 0n,
        data: encodeFunctionData({ abi: ROUTER_ABI, functionName: "buyYes", args: [1n, 5_000_000n, 1n, sender, 10n, 2n ** 40n] })
      }
    ]
  ),
  callGasLimit: hex(gas["callGasLimit"] ?? 400_000n),
  verificationGasLimit: hex(gas["verificationGasLimit"] ?? 400_000n),
  preVerificationGas: hex(gas["preVerificationGas"] ?? 100_000n),
  maxFeePerGas: hex(gas["maxFeePerGas"] ?? 2_000_000_000n),
  maxPriorityFeePerGas: hex(1_000_000_000n)
})

const sponsor = (instance: Instance, cookie: string | undefined, op: unknown) =>
  instance.call("POST", "/api/aa/paymaster/sponsor", {
    body: { userOperation: op },
    headers: cookie === undefined ? {} : { cookie: `predix_session=${cookie}` }
  })

describe("paymaster sponsor", () => {
  it("signs paymasterAndData over the protocol-facts hash, valid 10 minutes of chain time, charging the day's budget", async () => {
    const { cookie, account } = await signInAccount(app)
    const op = userOperation(account)
    const answer = await sponsor(app, cookie, op)
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    const data = answer.body.data
    const block = (await (
      await fetch(anvil.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getBlockByNumber", params: ["latest", false] })
      })
    ).json()) as { result: { timestamp: Hex } }
    expect(data.validAfter).toBe(Number(BigInt(block.result.timestamp)))
    expect(data.validUntil - data.validAfter).toBe(600)
    expect(data.validUntil).not.toBe(0)
    const decoded = decodePaymasterAndData(data.paymasterAndData)!
    expect(decoded).toMatchObject({ paymaster: options.paymaster, window: { validUntil: data.validUntil, validAfter: data.validAfter } })
    expect(data.paymasterAndData.endsWith(data.paymasterData.slice(2))).toBe(true)
    const hash = paymasterHash(
      {
        ...op,
        nonce: 0n,
        callGasLimit: 400_000n,
        verificationGasLimit: 400_000n,
        preVerificationGas: 100_000n,
        maxFeePerGas: 2_000_000_000n,
        maxPriorityFeePerGas: 1_000_000_000n,
        paymasterVerificationGasLimit: BigInt(data.paymasterVerificationGasLimit),
        paymasterPostOpGasLimit: BigInt(data.paymasterPostOpGasLimit),
        signature: "0x"
      } as never,
      130,
      options.paymaster,
      decoded.window
    )
    expect(await recoverMessageAddress({ message: { raw: hash }, signature: decoded.signature })).toBe(
      privateKeyToAccount(signerKey).address
    )
    const cost =
      (400_000n + 400_000n + 100_000n + BigInt(data.paymasterVerificationGasLimit) + BigInt(data.paymasterPostOpGasLimit)) * 2_000_000_000n
    expect(data.maxCostWei).toBe(cost.toString())
    expect(data.budget).toMatchObject({ spentWei: cost.toString(), operations: 1 })
    const [row] = await backends.sql(`select spent_wei::text as spent from sponsorship_budget where address = $1`, [account])
    expect(row!.spent).toBe(cost.toString())
    // The signer key is in no log line (with or without 0x).
    expect(app.logs.some((line) => line.includes(signerKey.slice(2)))).toBe(false)
    expect(app.logs.some((line) => line.includes("paymaster: sponsored"))).toBe(true)
  })

  it("refuses another account's operation, a non-protocol call, gas over the caps, no session and a SIWE session; a refusal charges nothing", async () => {
    const { cookie, account } = await signInAccount(app)
    const other = await signInAccount(app)
    const theirs = await sponsor(app, cookie, userOperation(other.account))
    expect(theirs.status).toBe(403)
    expect(theirs.body.message).toMatch(/not the session's smart account/)
    const stray = await sponsor(
      app,
      cookie,
      userOperation(account, [{ target: "0x5555555555555555555555555555555555555555", value: 0n, data: "0x" }])
    )
    expect(stray.status).toBe(403)
    expect(stray.body.details).toEqual([{ path: "callData.calls.0", message: expect.stringMatching(/not a protocol contract/) }])
    const greedy = await sponsor(app, cookie, userOperation(account, undefined, { callGasLimit: 2_000_001n }))
    expect(greedy.status).toBe(400)
    expect(greedy.body).toMatchObject({ code: "VALIDATION_FAILED", details: [{ path: "callGasLimit" }] })
    expect((await sponsor(app, undefined, userOperation(account))).body.code).toBe("AUTH_REQUIRED")
    const eoa = privateKeyToAccount(generatePrivateKey())
    const challenge = await app.call("GET", `/api/auth/challenge?address=${eoa.address}`)
    const siwe = sessionCookieOf(
      await app.call("POST", "/api/auth/verify", {
        body: { address: eoa.address, signature: await eoa.signMessage({ message: challenge.body.data.message }) }
      })
    )
    expect((await sponsor(app, siwe, userOperation(eoa.address))).status).toBe(403)
    expect(await backends.sql(`select * from sponsorship_budget where address = $1`, [account])).toEqual([])
  })

  it("never lets concurrent requests spend past the daily budget", async () => {
    const cost = (400_000n + 400_000n + 100_000n + 100_000n) * 2_000_000_000n
    const tight = await backends.start({ aa: { ...options, caps: { dailyBudgetWei: cost * 3n } } })
    try {
      const { cookie, account } = await signInAccount(tight)
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => sponsor(tight, cookie, { ...userOperation(account), nonce: hex(BigInt(i)) }))
      )
      expect(answers.filter((a) => a.status === 200)).toHaveLength(3)
      const refused = answers.filter((a) => a.status === 429)
      expect(refused).toHaveLength(7)
      expect(refused[0]!.body.message).toMatch(/daily sponsorship budget/)
      const [row] = await backends.sql(`select spent_wei::text as spent, operations from sponsorship_budget where address = $1`, [account])
      expect(row).toEqual({ spent: (cost * 3n).toString(), operations: 3 })
    } finally {
      await tight.close()
    }
  })
})

const rpc = (instance: Instance, body: unknown, cookie?: string) =>
  instance.call("POST", "/api/aa/bundler", { body, headers: cookie === undefined ? {} : { cookie: `predix_session=${cookie}` } })

describe("bundler proxy", () => {
  it("forwards allowed methods and returns the upstream's answers, errors included, unchanged", async () => {
    expect((await rpc(app, { jsonrpc: "2.0", id: 7, method: "eth_chainId", params: [] })).body).toEqual({
      jsonrpc: "2.0",
      id: 7,
      result: "0x82"
    })
    const direct = await (
      await fetch(anvil.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 8, method: "eth_supportedEntryPoints", params: [] })
      })
    ).json()
    const proxied = await rpc(app, { jsonrpc: "2.0", id: 8, method: "eth_supportedEntryPoints", params: [] })
    expect(proxied.status).toBe(200)
    expect(proxied.body).toEqual(direct)
  })

  it("answers JSON-RPC errors for methods outside the list, batches and non-calls", async () => {
    for (const method of ["eth_sendRawTransaction", "debug_bundler_clearState", "pimlico_getUserOperationGasPrice", "anvil_setBalance"]) {
      const answer = await rpc(app, { jsonrpc: "2.0", id: 1, method, params: [] })
      expect(answer.status).toBe(200)
      expect(answer.body).toMatchObject({ jsonrpc: "2.0", id: 1, error: { code: -32601 } })
    }
    expect((await rpc(app, [{ jsonrpc: "2.0", id: 1, method: "eth_chainId" }])).body.error.code).toBe(-32600)
    expect((await rpc(app, { id: 1, method: "eth_chainId" })).body.error.code).toBe(-32600)
    expect((await rpc(app, JSON.stringify("eth_chainId"))).body.error.code).toBe(-32600)
    expect((await rpc(app, { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: { a: 1 } })).body.error.code).toBe(-32602)
  })

  it("refuses a body over 64 KiB before reading it", async () => {
    const big = await rpc(app, { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: ["x".repeat(70_000)] })
    expect(big.status).toBe(400)
    expect(big.body.code).toBe("VALIDATION_FAILED")
    // Under the limit it reaches the upstream (which answers as it likes).
    const small = await rpc(app, { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: ["x".repeat(60_000)] })
    expect(small.status).toBe(200)
    expect(small.body).toMatchObject({ jsonrpc: "2.0", id: 1 })
  })

  it("sends only with a smart-account session, and only the session's own operations", async () => {
    const { cookie, account } = await signInAccount(app)
    const other = await signInAccount(app)
    const send = (sender: Address, withCookie?: string) =>
      rpc(app, { jsonrpc: "2.0", id: 3, method: "eth_sendUserOperation", params: [userOperation(sender), options.entryPoint] }, withCookie)
    expect((await send(account)).body.code).toBe("AUTH_REQUIRED")
    const foreign = await send(other.account, cookie)
    expect(foreign.status).toBe(403)
    expect(foreign.body.message).toMatch(/not the session's smart account/)
    // The session's own operation reaches the upstream (anvil: no such method; its error comes back).
    const own = await send(account, cookie)
    expect(own.status).toBe(200)
    expect(own.body.error).toBeDefined()
  })
})
