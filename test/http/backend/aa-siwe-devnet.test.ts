/**
 * Smart-account SIWE sign-in on the devnet `predix start` runs with no RPC_URL (issue 28 item 5):
 * the backend checks ERC-1271 (deployed account) and ERC-6492 (counterfactual account) signatures
 * through the live devnet's RPC, as quotes already read balances through it. The accounts are the
 * devnet's own (its committed smart-account factory; ECDSA and passkey owners); each signature is
 * also one viem's own `verifyMessage` accepts, so a stock client and the backend agree.
 * One `predix start` for the file.
 */
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { createPublicClient, hashMessage, http, serializeErc6492Signature, type Address, type Hex, type PublicClient } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import {
  accountFactoryData,
  encodeOwner,
  smartAccountFactoryAbi,
  DEFAULT_ACCOUNT_SALT,
  type AccountOwner
} from "../../../schema/protocol/aa.js"
import { DevnetClient } from "../../../tools/devnet/client.js"
import { LIVE_STATE } from "../../../tools/devnet/live.js"
import { liveArtifacts, readManifest, type LiveManifest } from "../../../tools/devnet/live-state.js"
import { softwarePasskey } from "../../support/aa.js"
import { scratchDatabaseUrl } from "../../support/postgres.js"
import { freePort, runCli, type Running } from "../../support/process.js"

let dataDir: string
const scope = Effect.runSync(Scope.make())
let app: Running
let backend: string
let chain: PublicClient
let devnet: DevnetClient
let manifest: LiveManifest

beforeAll(async () => {
  dataDir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-siwe-devnet-"))
  const ports = { INDEXER_PORT: String(await freePort()), BACKEND_PORT: String(await freePort()) }
  const databaseUrl = await Effect.runPromise(Scope.extend(scratchDatabaseUrl, scope))
  // No RPC_URL: the default devnet, as `npm start` runs it. The sign-in limit is off: this file
  // signs in more than 5 times a minute from one address.
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: "info",
    DEVNET_ACTIVITY: "off",
    RATE_LIMIT_AUTH_PER_MINUTE: "0",
    ...ports
  }
  // runCli passes this process's environment on: it must not name a chain of its own.
  expect(process.env["RPC_URL"]).toBe(undefined)
  app = runCli(["start"], env)
  const line = await app.waitFor(/message="devnet: live local chain"/, 300_000)
  const rpcUrl = /rpc_url=(\S+)/.exec(line)![1]!
  await app.waitFor(/message=listening server=backend/, 300_000)
  backend = `http://127.0.0.1:${ports.BACKEND_PORT}`
  chain = createPublicClient({ transport: http(rpcUrl) }) as PublicClient
  manifest = readManifest(LIVE_STATE)
  devnet = new DevnetClient(rpcUrl, liveArtifacts(manifest))
}, 600_000)

afterAll(async () => {
  if (app !== undefined) {
    app.child.kill("SIGTERM")
    await app.exited
  }
  await Effect.runPromise(Scope.close(scope, Exit.void))
  if (dataDir !== undefined) await fs.rm(dataDir, { recursive: true, force: true })
}, 120_000)

const call = async (method: string, path: string, body?: unknown) => {
  const response = await fetch(`${backend}${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return { status: response.status, body: (await response.json()) as any }
}

/** The devnet factory's account for `owner` (salt 0), counterfactual until deployed. */
const accountOf = (owner: AccountOwner) =>
  chain.readContract({
    address: manifest.smartAccountFactory,
    abi: smartAccountFactoryAbi,
    functionName: "getAddress",
    args: [encodeOwner(owner), DEFAULT_ACCOUNT_SALT]
  }) as Promise<Address>

const challengeFor = async (account: Address): Promise<string> => {
  const answer = await call("GET", `/api/auth/challenge?address=${account}`)
  expect(answer.status).toBe(200)
  return answer.body.data.message
}

/** What viem's own check says of `signature` (its universal validator, through the devnet's RPC). */
const viemAccepts = (account: Address, message: string, signature: Hex) => chain.verifyMessage({ address: account, message, signature })

describe("smart-account sign-in on the default devnet (no RPC_URL)", () => {
  it("a deployed ECDSA-owned account signs in with ERC-1271; a stranger's signature is refused", async () => {
    const owner = privateKeyToAccount(generatePrivateKey())
    const accountOwner: AccountOwner = { kind: "ecdsa", address: owner.address.toLowerCase() as Address }
    const account = await accountOf(accountOwner)
    const deploy = accountFactoryData(manifest.smartAccountFactory, accountOwner)
    await devnet.sendRaw(0, deploy.factory, deploy.factoryData)
    expect(await chain.getCode({ address: account })).not.toBe(undefined)

    const message = await challengeFor(account)
    // The account's isValidSignature recovers the owner from the EIP-191 hash of the message.
    const signature = await owner.sign({ hash: hashMessage(message) })
    const stranger = await privateKeyToAccount(generatePrivateKey()).sign({ hash: hashMessage(message) })
    expect(await viemAccepts(account, message, signature)).toBe(true)
    expect(await viemAccepts(account, message, stranger)).toBe(false)

    const forged = await call("POST", "/api/auth/verify", { address: account, signature: stranger })
    expect(forged.status).toBe(401)
    expect(forged.body.code).toBe("AUTH_INVALID")
    expect(forged.body.message).toMatch(/^signature invalid/)
    const signedIn = await call("POST", "/api/auth/verify", { address: account, signature })
    expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200)
    expect(signedIn.body.data.address).toBe(account.toLowerCase())
    expect(signedIn.body.data.method).toBe("siwe")
  })

  it("a counterfactual passkey-owned account signs in with ERC-6492 ({address, signature}); nothing is deployed", async () => {
    const passkey = softwarePasskey()
    const account = await accountOf(passkey.owner)
    expect(await chain.getCode({ address: account })).toBe(undefined)
    const message = await challengeFor(account)
    const deploy = accountFactoryData(manifest.smartAccountFactory, passkey.owner)
    const wrap = (inner: Hex) => serializeErc6492Signature({ address: deploy.factory, data: deploy.factoryData, signature: inner })
    // ERC-1271 of a passkey account: a WebAuthn assertion whose challenge is the hash.
    const signature = wrap(passkey.assert(hashMessage(message)).encoded)
    const otherKey = wrap(softwarePasskey().assert(hashMessage(message)).encoded)
    expect(await viemAccepts(account, message, signature)).toBe(true)

    const forged = await call("POST", "/api/auth/verify", { address: account, signature: otherKey })
    expect(forged.status).toBe(401)
    expect(forged.body.message).toMatch(/^signature invalid/)
    const signedIn = await call("POST", "/api/auth/verify", { address: account, signature })
    expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200)
    expect(signedIn.body.data.address).toBe(account.toLowerCase())
    expect(await chain.getCode({ address: account })).toBe(undefined)
  })

  it("a counterfactual ECDSA-owned account signs in with {message, signature}, once", async () => {
    const owner = privateKeyToAccount(generatePrivateKey())
    const accountOwner: AccountOwner = { kind: "ecdsa", address: owner.address.toLowerCase() as Address }
    const account = await accountOf(accountOwner)
    const message = await challengeFor(account)
    const deploy = accountFactoryData(manifest.smartAccountFactory, accountOwner)
    const signature = serializeErc6492Signature({
      address: deploy.factory,
      data: deploy.factoryData,
      signature: await owner.sign({ hash: hashMessage(message) })
    })
    expect(await viemAccepts(account, message, signature)).toBe(true)
    const signedIn = await call("POST", "/api/auth/verify", { message, signature })
    expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200)
    expect(signedIn.body.data.address).toBe(account.toLowerCase())
    const replay = await call("POST", "/api/auth/verify", { message, signature })
    expect(replay.status).toBe(401)
    expect(replay.body.message).toMatch(/^nonce already used/)
  })
})
