/**
 * Issue 18's "done when", end to end through `predix start` on the live devnet (real anvil,
 * EntryPoint v0.7, alto, indexer and backend processes): a software passkey and an ECDSA owner each
 * sign in, claim the faucet to their smart account, build a user operation that deploys the
 * account, approves USDC and buys YES through the router, get it sponsored by
 * /api/aa/paymaster/sponsor, send it through /api/aa/bundler and find the trade in the indexer's and
 * the backend's portfolio of the smart account. Then the refusals, on the same stack.
 * One live devnet for the whole file.
 */
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import {
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  defineChain,
  encodeFunctionData,
  erc20Abi,
  formatUnits,
  http,
  maxUint256,
  parseAbi,
  type Address,
  type Hex,
  type PublicClient
} from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { RpcRequestError } from "viem"
import { createBundlerClient, createPaymasterClient, entryPoint07Address, type SmartAccount } from "viem/account-abstraction"
import { createSmartAccountClient } from "permissionless"
import { toSimpleSmartAccount } from "permissionless/accounts"
import { createPimlicoClient } from "permissionless/clients/pimlico"
import { toPasskeySmartAccount } from "../../../client/passkey-account.js"
import {
  accountFactoryData,
  base64Url,
  encodeAccountCalls,
  encodeSimpleAccountBatch,
  simpleAccountFactoryData,
  encodePaymasterData,
  entryPointAbi,
  packUserOperation,
  userOperationHash,
  type AccountCall,
  type UserOperationV07
} from "../../../schema/protocol/aa.js"
import { DevnetClient } from "../../../tools/devnet/client.js"
import { LIVE_STATE } from "../../../tools/devnet/live.js"
import { liveArtifacts, readManifest, type LiveManifest } from "../../../tools/devnet/live-state.js"
import { ecdsaSigner, softwarePasskey, userOperationToJson, type AccountSigner, type SoftwarePasskey } from "../../support/aa.js"
import { scratchDatabaseUrl } from "../../support/postgres.js"
import { freePort, runCli, type Running } from "../../support/process.js"

const ORIGIN = "http://localhost:3000"
const USDC = 1_000_000n
const BUY_YES = 0
const ADMIN = 0
const ZERO = "0x0000000000000000000000000000000000000000" as Address
const MARKET_ABI = parseAbi([
  "function marketCount() view returns (uint256)",
  "function marketTokens(uint256 marketId) view returns (address yes, address no)"
])
const ROUTER_ABI = parseAbi([
  "function trade(uint8 tradeType, uint256 marketId, uint256 amountIn, uint256 minOut, address recipient, uint256 maxFills, uint256 deadline, address referrer) returns (uint256, uint256, uint256)"
])
/** Stand-in signatures for estimation: the right length, failing the checks without reverting. */
const DUMMY_ECDSA = `0x${"ff".repeat(32)}${"7f".repeat(32)}1c` as Hex
/**
 * SimpleAccount's stand-in (permissionless's): its OpenZeppelin ECDSA.recover reverts on a high s
 * or an unrecoverable signature, so the stand-in must recover to some address (the wrong one).
 */
const DUMMY_SIMPLE_ACCOUNT =
  "0xfffffffffffffffffffffffffffffff0000000000000000000000000000000007aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1c" as Hex

let dataDir: string
const scope = Effect.runSync(Scope.make())
let app: Running
let backend: string
let indexer: string
let alto: string
let chain: PublicClient
let chainRpcUrl: string
/** The same chain with its id (viem's SmartAccount reads client.chain.id for nonces). */
let chainWithId: PublicClient
let devnet: DevnetClient
let manifest: LiveManifest
let marketId: bigint
let yesToken: Address

const eventually = async <A>(what: string, probe: () => Promise<A | undefined>, timeoutMs = 60_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe().catch(() => undefined)
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`never happened: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

beforeAll(async () => {
  dataDir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-aa-e2e-"))
  await fs.chmod(dataDir, 0o755)
  const ports = { INDEXER_PORT: String(await freePort()), BACKEND_PORT: String(await freePort()) }
  // The run's shared Postgres (a scratch database), not an embedded one of its own: quicker. The
  // sign-in limit (5 per minute per IP) is off: this file signs in more often from one address.
  const databaseUrl = await Effect.runPromise(Scope.extend(scratchDatabaseUrl, scope))
  app = runCli(["start"], {
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: "info",
    DEVNET_ACTIVITY: "off",
    RATE_LIMIT_AUTH_PER_MINUTE: "0",
    ...ports
  })
  const line = await app.waitFor(/message="devnet: live local chain"/, 300_000)
  const rpcUrl = /rpc_url=(\S+)/.exec(line)![1]!
  chainRpcUrl = rpcUrl
  await app.waitFor(/message=listening server=backend/, 300_000)
  // The client's gas oracle: the bundler's own price (through the proxy only the methods go).
  alto = /bundler_url=(\S+)/.exec(await app.waitFor(/message="devnet: alto bundler"/, 300_000))![1]!
  backend = `http://127.0.0.1:${ports.BACKEND_PORT}`
  indexer = `http://127.0.0.1:${ports.INDEXER_PORT}`
  chain = createPublicClient({ transport: http(rpcUrl) }) as PublicClient
  chainWithId = createPublicClient({
    chain: defineChain({
      id: 130,
      name: "predix devnet",
      nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [rpcUrl] } }
    }),
    transport: http(rpcUrl)
  }) as PublicClient
  manifest = readManifest(LIVE_STATE)
  devnet = new DevnetClient(rpcUrl, liveArtifacts(manifest))
  // A fresh open market (the committed markets may have ended by the wall clock).
  const d = manifest.devnet.addresses
  const end = BigInt(await devnet.timestamp()) + 7n * 86_400n
  await devnet.send(ADMIN, "MarketFactory", d.marketFactory, "launch", ["AA end-to-end market", end, d.manualOracle, 3_000n * USDC])
  marketId = await chain.readContract({ address: d.diamond, abi: MARKET_ABI, functionName: "marketCount" })
  yesToken = (
    await chain.readContract({ address: d.diamond, abi: MARKET_ABI, functionName: "marketTokens", args: [marketId] })
  )[0].toLowerCase() as Address
}, 600_000)

afterAll(async () => {
  if (app !== undefined) {
    app.child.kill("SIGTERM")
    await app.exited
  }
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await fs.rm(dataDir, { recursive: true, force: true })
}, 120_000)

interface Answer {
  readonly status: number
  readonly body: any
  readonly cookie?: string
}

const call = async (method: string, path: string, body?: unknown, cookie?: string): Promise<Answer> => {
  const response = await fetch(`${backend}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...(cookie === undefined ? {} : { cookie }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const setCookie = response.headers.getSetCookie().find((c) => c.startsWith("predix_session="))
  return { status: response.status, body: await response.json(), ...(setCookie === undefined ? {} : { cookie: setCookie.split(";")[0]! }) }
}

const rpc = async (method: string, params: ReadonlyArray<unknown>, cookie?: string) =>
  call("POST", "/api/aa/bundler", { jsonrpc: "2.0", id: 1, method, params }, cookie)

const fromBase64Url = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, "base64url"))

/** navigator.credentials.create / .get answers built from the software passkey's ceremonies. */
const registrationJson = (passkey: SoftwarePasskey, challenge: string) => {
  const made = passkey.register(fromBase64Url(challenge), { origin: ORIGIN })
  const id = base64Url(passkey.credentialId)
  return {
    id,
    rawId: id,
    type: "public-key",
    response: {
      clientDataJSON: Buffer.from(made.clientDataJSON).toString("base64url"),
      attestationObject: base64Url(made.attestationObject),
      transports: ["internal"]
    },
    clientExtensionResults: {}
  }
}

const assertionJson = (passkey: SoftwarePasskey, challenge: string) => {
  const made = passkey.assert(fromBase64Url(challenge), { origin: ORIGIN })
  const id = base64Url(passkey.credentialId)
  return {
    id,
    rawId: id,
    type: "public-key",
    response: {
      clientDataJSON: Buffer.from(made.clientDataJSON).toString("base64url"),
      authenticatorData: base64Url(made.authenticatorData),
      signature: base64Url(made.signatureDer)
    },
    clientExtensionResults: {}
  }
}

const passkeySignIn = async (passkey: SoftwarePasskey) => {
  const registerChallenge = await call("POST", "/api/aa/auth/passkey/register/challenge", {})
  const registered = await call("POST", "/api/aa/auth/passkey/register/verify", {
    response: registrationJson(passkey, registerChallenge.body.data.challenge)
  })
  expect(registered.status, JSON.stringify(registered.body)).toBe(200)
  const loginChallenge = await call("POST", "/api/aa/auth/passkey/login/challenge", {})
  const assertion = assertionJson(passkey, loginChallenge.body.data.challenge)
  const login = await call("POST", "/api/aa/auth/passkey/login", { response: assertion })
  expect(login.status, JSON.stringify(login.body)).toBe(200)
  return { cookie: login.cookie!, account: login.body.data.smartAccount as Address, registered: registered.body.data, assertion }
}

const ecdsaSignIn = async (key: Hex) => {
  const eoa = privateKeyToAccount(key)
  const challenge = await call("POST", "/api/aa/auth/ecdsa/challenge", { address: eoa.address })
  const signature = await eoa.signMessage({ message: challenge.body.data.message })
  const verify = await call("POST", "/api/aa/auth/ecdsa/verify", { address: eoa.address, signature, nonce: challenge.body.data.nonce })
  expect(verify.status, JSON.stringify(verify.body)).toBe(200)
  return { cookie: verify.cookie!, account: verify.body.data.smartAccount as Address, challenge: challenge.body.data }
}

/** approve(router) on USDC, then router.trade(BUY_YES) to the account itself. */
const approveAndBuyYes = (account: Address, amount: bigint, minOut = 1n, market = marketId): ReadonlyArray<AccountCall> => {
  const d = manifest.devnet.addresses
  return [
    { target: d.testUsdc, value: 0n, data: encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [d.router, amount] }) },
    {
      target: d.router,
      value: 0n,
      data: encodeFunctionData({
        abi: ROUTER_ABI,
        functionName: "trade",
        args: [BUY_YES, market, amount, minOut, account, 10n, maxUint256, ZERO]
      })
    }
  ]
}

/** A draft operation with stand-in signatures, gas estimated through /api/aa/bundler. */
const prepare = async (
  signer: AccountSigner,
  account: Address,
  calls: ReadonlyArray<AccountCall>
): Promise<{ op?: UserOperationV07; estimate: Answer }> => {
  const deployed = (await chain.getCode({ address: account })) !== undefined
  const nonce = await chain.readContract({
    address: manifest.entryPoint,
    abi: entryPointAbi,
    functionName: "getNonce",
    args: [account, 0n]
  })
  const prices = (await (
    await fetch(alto, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "pimlico_getUserOperationGasPrice", params: [] })
    })
  ).json()) as {
    result: { fast: { maxFeePerGas: Hex; maxPriorityFeePerGas: Hex } }
  }
  // An EOA's account is a SimpleAccount (its factory, its batch form); a passkey's is the project's.
  const owner = signer.owner
  const draft: UserOperationV07 = {
    sender: account,
    nonce,
    ...(deployed
      ? {}
      : owner.kind === "ecdsa"
        ? simpleAccountFactoryData(manifest.simpleAccountFactory, owner.address)
        : accountFactoryData(manifest.smartAccountFactory, owner)),
    callData: owner.kind === "ecdsa" && calls.length > 1 ? encodeSimpleAccountBatch(calls) : encodeAccountCalls(calls),
    callGasLimit: 0n,
    verificationGasLimit: 0n,
    preVerificationGas: 0n,
    maxFeePerGas: BigInt(prices.result.fast.maxFeePerGas),
    maxPriorityFeePerGas: BigInt(prices.result.fast.maxPriorityFeePerGas),
    signature: owner.kind === "ecdsa" ? DUMMY_SIMPLE_ACCOUNT : softwarePasskey().assert(`0x${"00".repeat(32)}`).encoded,
    paymaster: manifest.paymaster,
    paymasterVerificationGasLimit: 100_000n,
    paymasterPostOpGasLimit: 0n,
    paymasterData: encodePaymasterData({ validUntil: 2 ** 47, validAfter: 0 }, DUMMY_ECDSA)
  }
  const estimate = await rpc("eth_estimateUserOperationGas", [userOperationToJson(draft), manifest.entryPoint])
  if (estimate.status !== 200 || estimate.body.result === undefined) return { estimate }
  const gas = estimate.body.result as Record<string, Hex>
  return {
    estimate,
    op: {
      ...draft,
      callGasLimit: BigInt(gas["callGasLimit"]!),
      verificationGasLimit: BigInt(gas["verificationGasLimit"]!) + (signer.owner.kind === "p256" ? 100_000n : 10_000n),
      preVerificationGas: BigInt(gas["preVerificationGas"]!),
      signature: "0x"
    }
  }
}

const sponsor = (op: UserOperationV07, cookie: string) =>
  call("POST", "/api/aa/paymaster/sponsor", { userOperation: userOperationToJson(op), entryPoint: manifest.entryPoint }, cookie)

/** The operation with the backend's sponsorship and the owner's signature over its hash. */
const sponsoredAndSigned = async (op: UserOperationV07, signer: AccountSigner, cookie: string) => {
  const answer = await sponsor(op, cookie)
  expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  const s = answer.body.data
  const withPaymaster: UserOperationV07 = {
    ...op,
    paymaster: s.paymaster,
    paymasterVerificationGasLimit: BigInt(s.paymasterVerificationGasLimit),
    paymasterPostOpGasLimit: BigInt(s.paymasterPostOpGasLimit),
    paymasterData: s.paymasterData
  }
  const hash = userOperationHash(withPaymaster, 130, manifest.entryPoint)
  return { op: { ...withPaymaster, signature: await signer.signUserOperationHash(hash) }, sponsorship: s }
}

const receiptOf = (userOpHash: Hex, cookie?: string) =>
  eventually("the user operation's receipt", async () => {
    const answer = await rpc("eth_getUserOperationReceipt", [userOpHash], cookie)
    return answer.body.result ?? undefined
  })

/** The EntryPoint's own verdict on `op` (handleOps simulated from an EOA, no bundler). */
const entryPointVerdict = async (op: UserOperationV07): Promise<string> => {
  try {
    await chain.simulateContract({
      address: manifest.entryPoint,
      abi: entryPointAbi,
      functionName: "handleOps",
      args: [[packUserOperation(op)], devnet.address(ADMIN)],
      account: devnet.address(ADMIN)
    })
    return "accepted"
  } catch (error) {
    const reverted = error instanceof BaseError ? error.walk((e) => e instanceof ContractFunctionRevertedError) : null
    const data = reverted instanceof ContractFunctionRevertedError ? reverted.data : undefined
    return data?.errorName === "FailedOp" || data?.errorName === "FailedOpWithRevert"
      ? String(data.args?.[1])
      : `rejected otherwise: ${String(error).slice(0, 200)}`
  }
}

/** Claims the faucet, buys YES with a sponsored operation through the proxy, and finds the trade in both portfolios. */
const tradeEndToEnd = async (signer: AccountSigner, session: { cookie: string; account: Address }) => {
  const faucet = await call("POST", "/api/faucet", {}, session.cookie)
  expect(faucet.status, JSON.stringify(faucet.body)).toBe(200)
  expect(faucet.body.data.address).toBe(session.account)
  expect(
    await chain.readContract({
      address: manifest.devnet.addresses.testUsdc,
      abi: erc20Abi,
      functionName: "balanceOf",
      args: [session.account]
    })
  ).toBe(10_000n * USDC)

  const prepared = await prepare(signer, session.account, approveAndBuyYes(session.account, 25n * USDC))
  expect(prepared.op, JSON.stringify(prepared.estimate.body)).toBeDefined()
  const { op, sponsorship } = await sponsoredAndSigned(prepared.op!, signer, session.cookie)
  expect(sponsorship.validUntil - sponsorship.validAfter).toBe(600)
  const sent = await rpc("eth_sendUserOperation", [userOperationToJson(op), manifest.entryPoint], session.cookie)
  expect(sent.status, JSON.stringify(sent.body)).toBe(200)
  expect(sent.body.result, JSON.stringify(sent.body)).toMatch(/^0x[0-9a-f]{64}$/)
  const receipt = await receiptOf(sent.body.result)
  expect(receipt.success).toBe(true)
  expect(receipt.paymaster.toLowerCase()).toBe(manifest.paymaster.toLowerCase())
  const yes = await chain.readContract({ address: yesToken, abi: erc20Abi, functionName: "balanceOf", args: [session.account] })
  expect(yes).toBeGreaterThan(0n)

  // The indexer's and the backend's portfolios of the smart account show the position.
  const shares = formatUnits(yes, 6)
  let seen: unknown
  await eventually("the indexer's portfolio shows the YES position", async () => {
    const body = (await (await fetch(`${indexer}/api/portfolio/${session.account}`)).json()) as {
      data: { positions: Array<{ marketId: string; yesBalance: string }> }
    }
    seen = body
    return body.data.positions.some((p) => p.marketId === marketId.toString() && p.yesBalance === shares) ? body : undefined
  }).catch((error: Error) => {
    throw new Error(`${error.message}: ${JSON.stringify(seen).slice(0, 1500)} (YES ${yes}, market ${marketId})`)
  })
  await eventually("the backend's portfolio shows the YES position", async () => {
    const answer = await call("GET", `/api/trading/${session.account}/portfolio`)
    seen = answer.body
    const text = JSON.stringify(answer.body)
    return answer.status === 200 && text.includes(`"${shares}"`) && text.includes("AA end-to-end market") ? answer.body : undefined
  }).catch((error: Error) => {
    throw new Error(`${error.message}: ${JSON.stringify(seen).slice(0, 1500)}`)
  })
  return { op, yes }
}

describe("account abstraction end to end (predix start: devnet, alto, indexer, backend)", () => {
  const passkey = softwarePasskey({ origin: ORIGIN })
  const ownerKey = generatePrivateKey()
  const owner = ecdsaSigner(ownerKey)
  let passkeySession: Awaited<ReturnType<typeof passkeySignIn>>
  let ecdsaSession: Awaited<ReturnType<typeof ecdsaSignIn>>

  it("passkey: register, sign in, faucet to the smart account, sponsored approve + buy YES through the proxy, in both portfolios", async () => {
    passkeySession = await passkeySignIn(passkey)
    const expected = (
      await chain.readContract({
        address: manifest.smartAccountFactory,
        abi: parseAbi(["function getAddress(bytes owner, uint256 salt) view returns (address)"]),
        functionName: "getAddress",
        args: [passkeySession.registered.owner, 0n]
      })
    ).toLowerCase()
    expect(passkeySession.account).toBe(expected)
    const me = await call("GET", "/api/auth/me", undefined, passkeySession.cookie)
    expect(me.body.data).toMatchObject({
      method: "passkey",
      address: expected,
      smartAccount: expected,
      owner: passkeySession.registered.owner
    })
    await tradeEndToEnd(passkey, passkeySession)
  }, 240_000)

  it("ECDSA: the owner signs in to its smart account and trades the same way", async () => {
    ecdsaSession = await ecdsaSignIn(ownerKey)
    const me = await call("GET", "/api/auth/me", undefined, ecdsaSession.cookie)
    expect(me.body.data).toMatchObject({ method: "ecdsa", owner: owner.address.toLowerCase(), smartAccount: ecdsaSession.account })
    await tradeEndToEnd(owner, ecdsaSession)
  }, 240_000)

  it("stock permissionless: toSimpleSmartAccount + createSmartAccountClient trade through the proxy, sponsored by the backend, in both portfolios", async () => {
    // No project account code: the published SimpleAccount v0.7 at the factory permissionless
    // uses by default, and an owner that signs like any viem account.
    const ownerKey = generatePrivateKey()
    const devnetChain = defineChain({
      id: 130,
      name: "PrediX devnet",
      nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [chainRpcUrl] } }
    })
    const account = await toSimpleSmartAccount({
      client: createPublicClient({ chain: devnetChain, transport: http(chainRpcUrl) }),
      owner: privateKeyToAccount(ownerKey),
      entryPoint: { address: entryPoint07Address, version: "0.7" }
    })
    // The backend derives the same counterfactual address for the EOA.
    const session = await ecdsaSignIn(ownerKey)
    expect(session.account).toBe(account.address.toLowerCase())
    const faucet = await call("POST", "/api/faucet", {}, session.cookie)
    expect(faucet.status, JSON.stringify(faucet.body)).toBe(200)
    expect(faucet.body.data.address).toBe(session.account)

    // Stock clients only: viem's ERC-7677 paymaster client at the backend's paymaster URL, the
    // bundler through the backend's proxy, fees from pimlico_getUserOperationGasPrice (through the
    // proxy too), all with the session cookie.
    const withCookie = { fetchOptions: { headers: { cookie: session.cookie } } }
    const smartAccountClient = createSmartAccountClient({
      account,
      chain: devnetChain,
      bundlerTransport: http(`${backend}/api/aa/bundler`, withCookie),
      paymaster: createPaymasterClient({ transport: http(`${backend}/api/aa/paymaster`, withCookie) }),
      userOperation: {
        estimateFeesPerGas: async () =>
          (await createPimlicoClient({ transport: http(`${backend}/api/aa/bundler`, withCookie) }).getUserOperationGasPrice()).fast
      }
    })
    const calls = approveAndBuyYes(session.account, 20n * USDC).map((c) => ({ to: c.target, value: c.value, data: c.data }))
    const userOpHash = await smartAccountClient.sendUserOperation({ calls })
    const receipt = await smartAccountClient.waitForUserOperationReceipt({ hash: userOpHash, timeout: 60_000 })
    expect(receipt.success).toBe(true)
    expect(receipt.sender.toLowerCase()).toBe(session.account)
    expect(receipt.paymaster?.toLowerCase()).toBe(manifest.paymaster.toLowerCase())
    // Deployed by that operation, as the published SimpleAccount of that owner.
    expect(await chain.getCode({ address: account.address })).toBeDefined()
    const yes = await chain.readContract({ address: yesToken, abi: erc20Abi, functionName: "balanceOf", args: [account.address] })
    expect(yes).toBeGreaterThan(0n)
    const shares = formatUnits(yes, 6)
    await eventually("the indexer's portfolio shows the permissionless account's YES", async () => {
      const body = (await (await fetch(`${indexer}/api/portfolio/${session.account}`)).json()) as {
        data: { positions: Array<{ marketId: string; yesBalance: string }> }
      }
      return body.data.positions.some((p) => p.marketId === marketId.toString() && p.yesBalance === shares) ? body : undefined
    })
    await eventually("the backend's portfolio shows the permissionless account's YES", async () => {
      const answer = await call("GET", `/api/trading/${session.account}/portfolio`)
      return answer.status === 200 && JSON.stringify(answer.body).includes(`"${shares}"`) ? answer.body : undefined
    })
    // A second operation from the deployed account (no initCode): still sponsored and mined.
    const again = await smartAccountClient.sendUserOperation({ calls })
    expect((await smartAccountClient.waitForUserOperationReceipt({ hash: again, timeout: 60_000 })).success).toBe(true)
  }, 240_000)

  it("refuses: another account's operation, a non-protocol target, gas over the caps, a spent budget, a tampered sponsorship (the EntryPoint too), a replayed assertion, a method off the list", async () => {
    const { op: draft } = await prepare(owner, ecdsaSession.account, approveAndBuyYes(ecdsaSession.account, 5n * USDC))
    const op = draft!
    // Another account's operation: sponsor and send.
    const theirs = await sponsor(op, passkeySession.cookie)
    expect(theirs.status).toBe(403)
    expect(theirs.body.message).toMatch(/not the session's smart account/)
    const { op: signed } = await sponsoredAndSigned(op, owner, ecdsaSession.cookie)
    const foreignSend = await rpc("eth_sendUserOperation", [userOperationToJson(signed), manifest.entryPoint], passkeySession.cookie)
    expect(foreignSend.status).toBe(200)
    expect(foreignSend.body.error).toMatchObject({ code: -32003, data: { code: "FORBIDDEN" } })
    // A non-protocol target.
    const stray = await sponsor(
      { ...op, callData: encodeAccountCalls([{ target: devnet.address(5), value: 0n, data: "0x" }]) },
      ecdsaSession.cookie
    )
    expect(stray.status).toBe(403)
    expect(stray.body.details[0].message).toMatch(/not a protocol contract/)
    // Gas over the caps.
    const greedy = await sponsor({ ...op, callGasLimit: 2_000_001n }, ecdsaSession.cookie)
    expect(greedy.status).toBe(400)
    expect(greedy.body.details).toEqual([{ path: "callGasLimit", message: expect.stringMatching(/over the cap/) }])
    // The day's budget (0.05 ETH): one operation at the caps could cost more than what is left.
    const costly = await sponsor(
      {
        ...op,
        callGasLimit: 2_000_000n,
        verificationGasLimit: 2_000_000n,
        preVerificationGas: 500_000n,
        maxFeePerGas: 100_000_000_000n,
        maxPriorityFeePerGas: 1n
      },
      ecdsaSession.cookie
    )
    expect(costly.status).toBe(429)
    expect(costly.body.message).toMatch(/daily sponsorship budget/)
    // A tampered sponsorship: the bundler refuses it, and so does the EntryPoint on chain.
    // One byte of the paymaster's signature changed, the operation signed again by its owner
    // (paymasterAndData is part of the userOpHash): only the sponsorship is wrong.
    const sig = signed.paymasterData!
    const altered = { ...signed, paymasterData: `${sig.slice(0, -4)}${sig.slice(-4, -2) === "00" ? "01" : "00"}${sig.slice(-2)}` as Hex }
    const tampered = { ...altered, signature: await owner.signUserOperationHash(userOperationHash(altered, 130, manifest.entryPoint)) }
    const refused = await rpc("eth_sendUserOperation", [userOperationToJson(tampered), manifest.entryPoint], ecdsaSession.cookie)
    expect(JSON.stringify(refused.body)).toMatch(/AA34/)
    expect(await entryPointVerdict(tampered)).toMatch(/AA34 signature error/)
    // The untampered one is still good.
    expect(await entryPointVerdict(signed)).toBe("accepted")
    // A replayed passkey assertion.
    const replay = await call("POST", "/api/aa/auth/passkey/login", { response: passkeySession.assertion })
    expect(replay.status).toBe(401)
    expect(replay.body.message).toMatch(/challenge already used/)
    // A bundler method outside the list.
    expect((await rpc("debug_bundler_dumpMempool", [manifest.entryPoint])).body.error.code).toBe(-32601)
  }, 240_000)

  it("maps an estimation that fails on the router's InsufficientOutput to a JSON-RPC error with data.code SLIPPAGE_EXCEEDED and the raw revert", async () => {
    const prepared = await prepare(owner, ecdsaSession.account, approveAndBuyYes(ecdsaSession.account, 5n * USDC, 10n ** 30n))
    expect(prepared.op).toBeUndefined()
    expect(prepared.estimate.status, JSON.stringify(prepared.estimate.body)).toBe(200)
    const { error } = prepared.estimate.body
    expect(error.code).toBe(-32521)
    expect(error.data.code).toBe("SLIPPAGE_EXCEEDED")
    expect(error.data.error).toMatch(/^InsufficientOutput\(/)
    expect(error.data.revert).toMatch(/^0x/)
    expect(error.data.bundler).toBeDefined()
    const tooMuch = await prepare(owner, ecdsaSession.account, approveAndBuyYes(ecdsaSession.account, 1_000_000n * USDC))
    expect(tooMuch.estimate.body.error?.data?.code, JSON.stringify(tooMuch.estimate.body)).toBe("INSUFFICIENT_BALANCE")
    const nowhere = await prepare(owner, ecdsaSession.account, approveAndBuyYes(ecdsaSession.account, 5n * USDC, 1n, 987_654n))
    expect(nowhere.estimate.body.error?.data?.code, JSON.stringify(nowhere.estimate.body)).toBe("MARKET_NOT_FOUND")
  }, 120_000)

  describe("ERC-7677 and the JSON-RPC proxy with viem's own clients", () => {
    const key = generatePrivateKey()
    const eoa = privateKeyToAccount(key)
    let session: Awaited<ReturnType<typeof ecdsaSignIn>>

    /** The owner's published SimpleAccount v0.7 (what the backend derives for an ECDSA owner). */
    const simpleAccount = (): Promise<SmartAccount> =>
      toSimpleSmartAccount({ client: chainWithId, owner: eoa, entryPoint: { address: entryPoint07Address, version: "0.7" } })

    const clients = async (cookie: string) => {
      const withCookie = { fetchOptions: { headers: { cookie } } }
      const paymaster = createPaymasterClient({ transport: http(`${backend}/api/aa/paymaster`, withCookie) })
      const bundler = createBundlerClient({
        account: await simpleAccount(),
        client: chainWithId,
        transport: http(`${backend}/api/aa/bundler`, withCookie),
        paymaster,
        userOperation: {
          // The bundler's own price, through the proxy (pimlico_getUserOperationGasPrice is allowed).
          estimateFeesPerGas: async ({ bundlerClient }) => {
            const prices = (await bundlerClient.request({ method: "pimlico_getUserOperationGasPrice" as never, params: [] as never })) as {
              fast: { maxFeePerGas: Hex; maxPriorityFeePerGas: Hex }
            }
            return { maxFeePerGas: BigInt(prices.fast.maxFeePerGas), maxPriorityFeePerGas: BigInt(prices.fast.maxPriorityFeePerGas) }
          }
        }
      })
      return { paymaster, bundler }
    }

    const rpcData = (error: unknown) => {
      const found = error instanceof BaseError ? (error.walk((e) => e instanceof RpcRequestError) as RpcRequestError | null) : null
      return { code: found?.code, data: found?.data as { code?: string; details?: Array<{ path: string; message: string }> } | undefined }
    }

    it("viem's createBundlerClient with createPaymasterClient at /api/aa/paymaster sends a sponsored trade through the proxy", async () => {
      session = await ecdsaSignIn(key)
      expect((await call("POST", "/api/faucet", {}, session.cookie)).status).toBe(200)
      const { bundler } = await clients(session.cookie)
      const hash = await bundler.sendUserOperation({
        calls: approveAndBuyYes(session.account, 25n * USDC).map((c) => ({ to: c.target, value: c.value, data: c.data }))
      })
      const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 120_000, pollingInterval: 500 })
      expect(receipt.success).toBe(true)
      expect(receipt.paymaster?.toLowerCase()).toBe(manifest.paymaster.toLowerCase())
      expect(
        await chain.readContract({ address: yesToken, abi: erc20Abi, functionName: "balanceOf", args: [session.account] })
      ).toBeGreaterThan(0n)
    }, 240_000)

    it("a passkey account through the client package's adapter (client/passkey-account.ts) trades with viem's stock bundler and paymaster clients", async () => {
      const passkey = softwarePasskey({ origin: ORIGIN })
      const passkeyUser = await passkeySignIn(passkey)
      expect((await call("POST", "/api/faucet", {}, passkeyUser.cookie)).status).toBe(200)
      const account = await toPasskeySmartAccount({
        client: chainWithId,
        factory: manifest.smartAccountFactory,
        entryPoint: manifest.entryPoint,
        publicKey: { x: passkey.x, y: passkey.y },
        sign: async (challenge) => passkey.assert(challenge).encoded,
        stubSignature: softwarePasskey().assert(`0x${"00".repeat(32)}`).encoded
      })
      expect(account.address.toLowerCase(), "the adapter's address is the one the backend names").toBe(passkeyUser.account)
      const withCookie = { fetchOptions: { headers: { cookie: passkeyUser.cookie } } }
      const bundler = createBundlerClient({
        account,
        client: chainWithId,
        transport: http(`${backend}/api/aa/bundler`, withCookie),
        paymaster: createPaymasterClient({ transport: http(`${backend}/api/aa/paymaster`, withCookie) }),
        userOperation: {
          estimateFeesPerGas: async () =>
            (await createPimlicoClient({ transport: http(`${backend}/api/aa/bundler`, withCookie) }).getUserOperationGasPrice()).fast
        }
      })
      const hash = await bundler.sendUserOperation({
        calls: approveAndBuyYes(passkeyUser.account, 15n * USDC).map((c) => ({ to: c.target, value: c.value, data: c.data }))
      })
      const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 120_000, pollingInterval: 500 })
      expect(receipt.success).toBe(true)
      expect(receipt.paymaster?.toLowerCase()).toBe(manifest.paymaster.toLowerCase())
      expect(
        await chain.readContract({ address: yesToken, abi: erc20Abi, functionName: "balanceOf", args: [passkeyUser.account] })
      ).toBeGreaterThan(0n)
    }, 240_000)

    it("a refusal reaches viem as a typed RPC error carrying data.code: a slippage revert, a nonexistent market", async () => {
      const { bundler } = await clients(session.cookie)
      const slippage = await bundler
        .prepareUserOperation({
          calls: approveAndBuyYes(session.account, 5n * USDC, 10n ** 30n).map((c) => ({ to: c.target, value: c.value, data: c.data }))
        })
        .then(
          () => undefined,
          (e: unknown) => e
        )
      expect(rpcData(slippage)).toMatchObject({ code: -32521, data: { code: "SLIPPAGE_EXCEEDED" } })
      const nowhere = await bundler
        .prepareUserOperation({
          calls: approveAndBuyYes(session.account, 5n * USDC, 1n, 987_654n).map((c) => ({ to: c.target, value: c.value, data: c.data }))
        })
        .then(
          () => undefined,
          (e: unknown) => e
        )
      expect(rpcData(nowhere)).toMatchObject({ code: -32521, data: { code: "MARKET_NOT_FOUND" } })
    }, 120_000)

    it("an operation with its own gas limits that would revert is refused with the mapped code and charges nothing", async () => {
      const freshKey = generatePrivateKey()
      const fresh = await ecdsaSignIn(freshKey)
      const { paymaster } = await clients(fresh.cookie)
      const d = manifest.devnet.addresses
      const nonce = await chain.readContract({
        address: manifest.entryPoint,
        abi: entryPointAbi,
        functionName: "getNonce",
        args: [fresh.account, 0n]
      })
      // No estimation anywhere: the limits are the sender's own, under the caps. The account is not
      // deployed yet: the simulation deploys it (its initCode) and runs the calls on it.
      const own = (calls: ReadonlyArray<AccountCall>) => ({
        sender: fresh.account,
        nonce,
        // The owner's SimpleAccount v0.7, as the backend derives it for an ECDSA owner.
        ...simpleAccountFactoryData(manifest.simpleAccountFactory, privateKeyToAccount(freshKey).address.toLowerCase() as Address),
        callData: encodeSimpleAccountBatch(calls),
        callGasLimit: 600_000n,
        verificationGasLimit: 400_000n,
        preVerificationGas: 100_000n,
        maxFeePerGas: 2_000_000_000n,
        maxPriorityFeePerGas: 1_000_000_000n,
        paymasterVerificationGasLimit: 100_000n,
        paymasterPostOpGasLimit: 0n,
        chainId: 130,
        entryPointAddress: manifest.entryPoint
      })
      // The account holds no USDC: the buy reverts on the transfer.
      const broke = await paymaster.getPaymasterData(own(approveAndBuyYes(fresh.account, 5n * USDC))).then(
        () => undefined,
        (e: unknown) => e
      )
      expect(rpcData(broke), String(broke)).toMatchObject({ code: -32521, data: { code: "INSUFFICIENT_BALANCE" } })
      const nowhere = await paymaster.getPaymasterData(own(approveAndBuyYes(fresh.account, 5n * USDC, 1n, 987_654n))).then(
        () => undefined,
        (e: unknown) => e
      )
      expect(rpcData(nowhere)).toMatchObject({ code: -32521, data: { code: "MARKET_NOT_FOUND" } })
      // The REST route refuses the same way (MARKET_NOT_FOUND is 404 there).
      const restOwn = await call(
        "POST",
        "/api/aa/paymaster/sponsor",
        {
          userOperation: userOperationToJson({ ...own(approveAndBuyYes(fresh.account, 5n * USDC, 1n, 987_654n)), signature: "0x" } as never)
        },
        fresh.cookie
      )
      expect([restOwn.status, restOwn.body.code], JSON.stringify(restOwn.body)).toEqual([404, "MARKET_NOT_FOUND"])
      // Nothing was charged: the first sponsorship of the day is this account's only operation.
      const ok = await call(
        "POST",
        "/api/aa/paymaster/sponsor",
        {
          userOperation: userOperationToJson({
            ...own([
              { target: d.testUsdc, value: 0n, data: encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [d.router, 1n] }) }
            ]),
            signature: "0x"
          } as never)
        },
        fresh.cookie
      )
      expect(ok.status, JSON.stringify(ok.body)).toBe(200)
      expect(ok.body.data.budget).toMatchObject({ operations: 1, spentWei: ok.body.data.maxCostWei })
    }, 120_000)
  })
})
