/**
 * The paymaster's sponsor endpoint and the bundler proxy over real HTTP, real Postgres and a real
 * chain (anvil with the factory's getAddress; anvil itself stands behind the proxy as a JSON-RPC
 * server, so forwarding and "the upstream's errors come back unchanged" are real). The operations
 * are sponsored but not sent here: aa-e2e-*.test.ts send them through the devnet's alto.
 */
import { Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  BaseError,
  RpcRequestError,
  TransactionRejectedRpcError,
  encodeErrorResult,
  encodeFunctionData,
  http,
  parseAbi,
  recoverMessageAddress,
  type Address,
  type Hex
} from "viem"
import { createPaymasterClient } from "viem/account-abstraction"
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
    for (const method of ["eth_sendRawTransaction", "debug_bundler_clearState", "pimlico_sendUserOperationNow", "anvil_setBalance"]) {
      const answer = await rpc(app, { jsonrpc: "2.0", id: 1, method, params: [] })
      expect(answer.status).toBe(200)
      expect(answer.body).toMatchObject({ jsonrpc: "2.0", id: 1, error: { code: -32601 } })
    }
    expect((await rpc(app, [{ jsonrpc: "2.0", id: 1, method: "eth_chainId" }])).body.error.code).toBe(-32600)
    expect((await rpc(app, { id: 1, method: "eth_chainId" })).body.error.code).toBe(-32600)
    expect((await rpc(app, JSON.stringify("eth_chainId"))).body.error.code).toBe(-32600)
    expect((await rpc(app, { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: { a: 1 } })).body.error.code).toBe(-32602)
  })

  it("lets pimlico_getUserOperationGasPrice through (permissionless's default fee estimator)", async () => {
    // anvil does not serve it: what comes back is the upstream's own answer, not the proxy's -32601.
    const call = { jsonrpc: "2.0", id: 4, method: "pimlico_getUserOperationGasPrice", params: [] }
    const direct = await (
      await fetch(anvil.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(call) })
    ).json()
    const proxied = await rpc(app, call)
    expect(proxied.status).toBe(200)
    expect(proxied.body).toEqual(direct)
    expect(JSON.stringify(proxied.body)).not.toMatch(/not available through this proxy/)
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
    // Refusals are JSON-RPC errors (HTTP 200) carrying the backend code in error.data.code.
    const anonymous = await send(account)
    expect(anonymous.status).toBe(200)
    expect(anonymous.body).toMatchObject({ jsonrpc: "2.0", id: 3, error: { code: 4100, data: { code: "AUTH_REQUIRED" } } })
    const foreign = await send(other.account, cookie)
    expect(foreign.status).toBe(200)
    expect(foreign.body).toMatchObject({ jsonrpc: "2.0", id: 3, error: { code: -32003, data: { code: "FORBIDDEN" } } })
    expect(foreign.body.error.message).toMatch(/not the session's smart account/)
    // The session's own operation reaches the upstream (anvil: no such method; its error comes back).
    const own = await send(account, cookie)
    expect(own.status).toBe(200)
    expect(own.body.error).toBeDefined()
  })
})

const ERRORS = parseAbi(["error InsufficientOutput(uint256 actual, uint256 minimum)", "error MarketNotTradable(uint256 marketId)"])

const setCode = async (address: Address, code: Hex) => {
  const answer = (await (
    await fetch(anvil.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "anvil_setCode", params: [address, code] })
    })
  ).json()) as { error?: unknown }
  if (answer.error !== undefined) throw new Error(JSON.stringify(answer.error))
}

/** Runtime code that reverts with `payload` whatever it is called with: CODECOPY the payload, REVERT it. */
const revertingCode = (payload: Hex): Hex => {
  const size = (payload.length - 2) / 2
  const byte = (n: number) => n.toString(16).padStart(2, "0")
  return `0x60${byte(size)}600c60003960${byte(size)}6000fd${payload.slice(2)}`
}
/** Runtime code that loops until its gas is gone. */
const LOOPING_CODE: Hex = "0x5b600056"

const budgetRows = (account: Address) =>
  backends.sql(`select spent_wei::text as spent, operations from sponsorship_budget where address = $1`, [account])

describe("sponsorship simulates the execution first", () => {
  it("refuses an operation whose execution reverts, with the mapped code and the raw revert, charging nothing", async () => {
    const { cookie, account } = await signInAccount(app)
    const slippage = encodeErrorResult({ abi: ERRORS, errorName: "InsufficientOutput", args: [90n, 100n] })
    await setCode(account, revertingCode(slippage))
    const refused = await sponsor(app, cookie, userOperation(account))
    expect(refused.status, JSON.stringify(refused.body)).toBe(400)
    expect(refused.body).toMatchObject({ code: "SLIPPAGE_EXCEEDED" })
    expect(refused.body.details).toEqual(
      expect.arrayContaining([
        { path: "revert", message: slippage },
        { path: "error", message: "InsufficientOutput(90, 100)" }
      ])
    )
    expect(await budgetRows(account)).toEqual([])
  })

  it("maps MarketNotTradable of a market the chain does not know to MARKET_NOT_FOUND, of a known one to MARKET_PAUSED", async () => {
    const { cookie, account } = await signInAccount(app)
    await setCode(account, revertingCode(encodeErrorResult({ abi: ERRORS, errorName: "MarketNotTradable", args: [999n] })))
    // The Diamond (no code here) cannot answer marketTokens(999): the market does not exist.
    await setCode(options.protocol.diamond, "0x")
    const missing = await sponsor(app, cookie, userOperation(account))
    expect(missing.status, JSON.stringify(missing.body)).toBe(404)
    expect(missing.body).toMatchObject({
      code: "MARKET_NOT_FOUND",
      details: expect.arrayContaining([{ path: "error", message: "MarketNotTradable(999)" }])
    })
    // A Diamond answering marketTokens (64 bytes): the market exists, so it is paused or closed.
    await setCode(options.protocol.diamond, "0x60406000f3")
    try {
      const paused = await sponsor(app, cookie, userOperation(account))
      expect(paused.status, JSON.stringify(paused.body)).toBe(400)
      expect(paused.body.code).toBe("MARKET_PAUSED")
    } finally {
      await setCode(options.protocol.diamond, "0x")
    }
    expect(await budgetRows(account)).toEqual([])
  })

  it("simulates with the operation's own callGasLimit: one that would run out of gas is refused", async () => {
    const { cookie, account } = await signInAccount(app)
    await setCode(account, LOOPING_CODE)
    const refused = await sponsor(app, cookie, userOperation(account, undefined, { callGasLimit: 50_000n }))
    expect(refused.status, JSON.stringify(refused.body)).toBe(400)
    expect(refused.body.code).toBe("VALIDATION_FAILED")
    expect(refused.body.message).toMatch(/would revert.*callGasLimit 50000/)
    expect(await budgetRows(account)).toEqual([])
  })
})

const paymaster = (instance: Instance, body: unknown, cookie?: string) =>
  instance.call("POST", "/api/aa/paymaster", { body, headers: cookie === undefined ? {} : { cookie: `predix_session=${cookie}` } })

const pm = (method: string, op: unknown, overrides: { entryPoint?: string; chainId?: unknown } = {}) => ({
  jsonrpc: "2.0",
  id: 11,
  method,
  params: [op, overrides.entryPoint ?? options.entryPoint, overrides.chainId ?? "0x82", {}]
})

describe("ERC-7677 paymaster (POST /api/aa/paymaster)", () => {
  it("stub data charges nothing and never validates; paymaster data is the REST sponsorship, charging the same budget once", async () => {
    const { cookie, account } = await signInAccount(app)
    const { callGasLimit: _c, verificationGasLimit: _v, preVerificationGas: _p, ...beforeEstimation } = userOperation(account)
    const stub = await paymaster(app, pm("pm_getPaymasterStubData", beforeEstimation), cookie)
    expect(stub.status).toBe(200)
    expect(stub.body.result).toMatchObject({
      paymaster: options.paymaster,
      paymasterVerificationGasLimit: "0x186a0",
      paymasterPostOpGasLimit: "0x0",
      isFinal: false,
      sponsor: { name: "PrediX" }
    })
    // The stub's signature: r above the curve order, so no signer recovers from it.
    expect(stub.body.result.paymasterData.slice(-130, -66)).toBe("f".repeat(64))
    expect(await budgetRows(account)).toEqual([])

    const op = userOperation(account)
    const final = await paymaster(app, pm("pm_getPaymasterData", op), cookie)
    expect(final.status).toBe(200)
    const { paymasterData, paymasterVerificationGasLimit, paymasterPostOpGasLimit } = final.body.result
    expect(final.body.result.paymaster).toBe(options.paymaster)
    const decoded = decodePaymasterAndData(
      `${options.paymaster}${BigInt(paymasterVerificationGasLimit).toString(16).padStart(32, "0")}${BigInt(paymasterPostOpGasLimit).toString(16).padStart(32, "0")}${paymasterData.slice(2)}` as Hex
    )!
    const hash = paymasterHash(
      {
        ...op,
        nonce: 0n,
        callGasLimit: 400_000n,
        verificationGasLimit: 400_000n,
        preVerificationGas: 100_000n,
        maxFeePerGas: 2_000_000_000n,
        maxPriorityFeePerGas: 1_000_000_000n,
        paymasterVerificationGasLimit: BigInt(paymasterVerificationGasLimit),
        paymasterPostOpGasLimit: BigInt(paymasterPostOpGasLimit),
        signature: "0x"
      } as never,
      130,
      options.paymaster,
      decoded.window
    )
    expect(await recoverMessageAddress({ message: { raw: hash }, signature: decoded.signature })).toBe(
      privateKeyToAccount(signerKey).address
    )
    const cost = (400_000n + 400_000n + 100_000n + 100_000n) * 2_000_000_000n
    expect(await budgetRows(account)).toEqual([{ spent: cost.toString(), operations: 1 }])
    // The REST route charges the same row.
    expect((await sponsor(app, cookie, { ...op, nonce: "0x1" })).status).toBe(200)
    expect(await budgetRows(account)).toEqual([{ spent: (cost * 2n).toString(), operations: 2 }])
  })

  it("refuses as JSON-RPC errors carrying the backend code: no session, another sender, another EntryPoint or chain, another method", async () => {
    const { cookie, account } = await signInAccount(app)
    const other = await signInAccount(app)
    const anonymous = await paymaster(app, pm("pm_getPaymasterData", userOperation(account)))
    expect(anonymous.status).toBe(200)
    expect(anonymous.body).toMatchObject({ jsonrpc: "2.0", id: 11, error: { code: 4100, data: { code: "AUTH_REQUIRED" } } })
    const theirs = await paymaster(app, pm("pm_getPaymasterStubData", userOperation(other.account)), cookie)
    expect(theirs.body.error).toMatchObject({ code: -32003, data: { code: "FORBIDDEN" } })
    const entryPoint = await paymaster(
      app,
      pm("pm_getPaymasterData", userOperation(account), { entryPoint: "0x4337084d9e255ff0702461cf8895ce9e3b5ff108" }),
      cookie
    )
    expect(entryPoint.body.error).toMatchObject({ code: -32602, data: { code: "VALIDATION_FAILED", details: [{ path: "params.1" }] } })
    const chain = await paymaster(app, pm("pm_getPaymasterData", userOperation(account), { chainId: "0x1" }), cookie)
    expect(chain.body.error).toMatchObject({ code: -32602, data: { code: "VALIDATION_FAILED", details: [{ path: "params.2" }] } })
    const malformed = await paymaster(app, pm("pm_getPaymasterData", { sender: account }), cookie)
    expect(malformed.body.error).toMatchObject({ code: -32602, data: { code: "VALIDATION_FAILED" } })
    expect((await paymaster(app, { jsonrpc: "2.0", id: 2, method: "pm_sponsorUserOperation", params: [] }, cookie)).body.error.code).toBe(
      -32601
    )
    expect(await budgetRows(account)).toEqual([])
  })

  it("works with viem's createPaymasterClient, and viem sees a refusal as a typed RPC error with data.code", async () => {
    const { cookie, account } = await signInAccount(app)
    const other = await signInAccount(app)
    const client = createPaymasterClient({
      transport: http(`${app.url}/api/aa/paymaster`, { fetchOptions: { headers: { cookie: `predix_session=${cookie}` } } })
    })
    const request = (sender: Address) => {
      const op = userOperation(sender)
      return {
        sender,
        nonce: 0n,
        callData: op.callData,
        callGasLimit: 400_000n,
        verificationGasLimit: 400_000n,
        preVerificationGas: 100_000n,
        maxFeePerGas: 2_000_000_000n,
        maxPriorityFeePerGas: 1_000_000_000n,
        chainId: 130,
        entryPointAddress: options.entryPoint
      } as const
    }
    const stub = await client.getPaymasterStubData(request(account))
    expect(stub).toMatchObject({ paymaster: options.paymaster, paymasterVerificationGasLimit: 100_000n, isFinal: false })
    const data = await client.getPaymasterData(request(account))
    expect(data).toMatchObject({ paymaster: options.paymaster, paymasterVerificationGasLimit: 100_000n, paymasterPostOpGasLimit: 0n })
    const error = await client.getPaymasterData(request(other.account)).then(
      () => undefined,
      (e: unknown) => e
    )
    expect(error).toBeInstanceOf(TransactionRejectedRpcError)
    const cause = (error as BaseError).walk((e) => e instanceof RpcRequestError) as RpcRequestError
    expect(cause.code).toBe(-32003)
    expect(cause.data).toMatchObject({ code: "FORBIDDEN" })
  })
})
