/**
 * Passkey and ECDSA sign-in to smart accounts over real HTTP, real Postgres and a real chain (anvil
 * with a contract answering the factory's getAddress). The WebAuthn responses are real: a software
 * P-256 key signs them. Each refusal test names the check it covers; every one fails without it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { encodeAbiParameters, getContractAddress, keccak256, pad, type Address, type Hex } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import type { Anvil } from "../../../tools/devnet/anvil.js"
import { aaOptionsFor, startAddressFactoryChain } from "./support/address-factory.js"
import { sessionCookieOf, startBackends, type Backends, type Instance } from "./support/auth-harness.js"
import { SoftwarePasskey, type Ceremony } from "./support/software-passkey.js"

const ORIGIN = "http://localhost:3000"
const RP_ID = "localhost"

let anvil: Anvil
let factory: Address
let backends: Backends
let app: Instance

/** What the factory answers for `owner` (salt 0). */
const accountOf = (owner: Hex) =>
  getContractAddress({ opcode: "CREATE2", from: factory, salt: pad("0x00", { size: 32 }), bytecodeHash: keccak256(owner) }).toLowerCase()

beforeAll(async () => {
  ;({ anvil, factory } = await startAddressFactoryChain())
  backends = await startBackends()
  app = await backends.start({ aa: aaOptionsFor(anvil.url, factory) })
}, 60_000)

afterAll(async () => {
  await backends?.close()
  await anvil?.stop()
})

const withCookie = (cookie: string | undefined) => ({ headers: { cookie: `predix_session=${cookie}` } })

const expectInvalid = (answer: { status: number; body: any }, check: RegExp) => {
  expect(answer.status).toBe(401)
  expect(answer.body.code).toBe("AUTH_INVALID")
  expect(answer.body.message).toMatch(check)
}

const ceremony = async (purpose: "register" | "login", overrides: Partial<Ceremony> = {}): Promise<Ceremony> => {
  const answer = await app.call("POST", `/api/aa/auth/passkey/${purpose}/challenge`, { body: {} })
  expect(answer.status).toBe(200)
  return { challenge: answer.body.data.challenge, rpId: RP_ID, origin: ORIGIN, ...overrides }
}

const register = async (passkey: SoftwarePasskey) => {
  const answer = await app.call("POST", "/api/aa/auth/passkey/register/verify", {
    body: { response: passkey.register(await ceremony("register")) }
  })
  expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  return answer.body.data as { credentialId: string; owner: string; smartAccount: string; transports: Array<string> }
}

const login = async (passkey: SoftwarePasskey, overrides: Partial<Ceremony> = {}, counter?: number) =>
  app.call("POST", "/api/aa/auth/passkey/login", {
    body: { response: passkey.assert(await ceremony("login", overrides), counter === undefined ? {} : { counter }) }
  })

describe("passkeys", () => {
  it("registers a P-256 passkey (public key, counter, transports stored) and signs in to its counterfactual smart account with the SIWE session", async () => {
    const passkey = new SoftwarePasskey()
    const options = await app.call("POST", "/api/aa/auth/passkey/register/challenge", { body: {} })
    expect(options.body.data.options).toMatchObject({
      rp: { id: RP_ID },
      challenge: options.body.data.challenge,
      pubKeyCredParams: [{ alg: -7, type: "public-key" }]
    })
    expect(options.body.data.expiresAt - Math.floor(Date.now() / 1000)).toBeLessThanOrEqual(300)

    const registered = await register(passkey)
    const owner = encodeAbiParameters([{ type: "uint256" }, { type: "uint256" }], [passkey.x, passkey.y])
    expect(registered).toMatchObject({
      credentialId: passkey.id,
      owner,
      smartAccount: accountOf(owner),
      transports: ["internal", "hybrid"]
    })
    const [row] = await backends.sql(
      `select counter, transports, length(public_key) as key_bytes, smart_account from passkey_credential where id = $1`,
      [passkey.id]
    )
    expect(row).toMatchObject({ counter: "0", transports: ["internal", "hybrid"], smart_account: accountOf(owner) })
    expect(row!.key_bytes).toBeGreaterThan(64)

    passkey.counter = 1
    const signedIn = await login(passkey)
    expect(signedIn.status).toBe(200)
    expect(signedIn.body.data).toMatchObject({
      address: accountOf(owner),
      method: "passkey",
      owner,
      smartAccount: accountOf(owner),
      role: "user"
    })
    const cookie = sessionCookieOf(signedIn)
    const me = await app.call("GET", "/api/auth/me", withCookie(cookie))
    expect(me.body.data).toMatchObject({ address: accountOf(owner), method: "passkey", owner, smartAccount: accountOf(owner) })
    const [session] = await backends.sql(`select method, owner, smart_account from auth_session where address = $1`, [accountOf(owner)])
    expect(session).toEqual({ method: "passkey", owner, smart_account: accountOf(owner) })
    expect(app.logs.some((line) => line.includes(cookie!))).toBe(false)
  })

  it("refuses a replayed assertion: the challenge is spent by the first sign-in (authenticator without a counter)", async () => {
    const passkey = new SoftwarePasskey()
    await register(passkey)
    const assertion = passkey.assert(await ceremony("login"))
    expect((await app.call("POST", "/api/aa/auth/passkey/login", { body: { response: assertion } })).status).toBe(200)
    expectInvalid(await app.call("POST", "/api/aa/auth/passkey/login", { body: { response: assertion } }), /challenge already used/)
  })

  it("refuses an assertion whose signature counter did not increase", async () => {
    const passkey = new SoftwarePasskey()
    await register(passkey)
    expect((await login(passkey, {}, 5)).status).toBe(200)
    expectInvalid(await login(passkey, {}, 5), /counter/i)
    expectInvalid(await login(passkey, {}, 4), /counter/i)
    expect((await login(passkey, {}, 6)).status).toBe(200)
    expect((await backends.sql(`select counter from passkey_credential where id = $1`, [passkey.id]))[0]!.counter).toBe("6")
  })

  it("refuses a wrong origin and a wrong RP id, at registration and sign-in", async () => {
    const passkey = new SoftwarePasskey()
    expectInvalid(
      await app.call("POST", "/api/aa/auth/passkey/register/verify", {
        body: { response: passkey.register(await ceremony("register", { origin: "https://evil.example" })) }
      }),
      /origin/i
    )
    expectInvalid(
      await app.call("POST", "/api/aa/auth/passkey/register/verify", {
        body: { response: passkey.register(await ceremony("register", { rpId: "evil.example" })) }
      }),
      /RP ?ID/i
    )
    await register(passkey)
    expectInvalid(await login(passkey, { origin: "https://evil.example" }), /origin/i)
    expectInvalid(await login(passkey, { rpId: "evil.example" }), /RP ?ID/i)
    expect((await login(passkey)).status).toBe(200)
  })

  it("refuses an expired challenge (5 minutes), a reused one, one never issued and one issued for the other ceremony", async () => {
    const passkey = new SoftwarePasskey()
    await register(passkey)
    const late = await ceremony("login")
    app.clock.offsetMs = 5 * 60 * 1000 + 1_000
    try {
      expectInvalid(await app.call("POST", "/api/aa/auth/passkey/login", { body: { response: passkey.assert(late) } }), /challenge expired/)
    } finally {
      app.clock.offsetMs = 0
    }

    const shared = await ceremony("register")
    expect(
      (await app.call("POST", "/api/aa/auth/passkey/register/verify", { body: { response: new SoftwarePasskey().register(shared) } }))
        .status
    ).toBe(200)
    expectInvalid(
      await app.call("POST", "/api/aa/auth/passkey/register/verify", { body: { response: new SoftwarePasskey().register(shared) } }),
      /challenge already used/
    )

    const forged = { challenge: Buffer.alloc(32, 7).toString("base64url"), rpId: RP_ID, origin: ORIGIN }
    expectInvalid(await app.call("POST", "/api/aa/auth/passkey/login", { body: { response: passkey.assert(forged) } }), /unknown challenge/)
    const registration = await ceremony("register")
    expectInvalid(
      await app.call("POST", "/api/aa/auth/passkey/login", { body: { response: passkey.assert(registration) } }),
      /unknown challenge/
    )
  })

  it("names expiry before use: a spent challenge past its 5 minutes is 'challenge expired'", async () => {
    const passkey = new SoftwarePasskey()
    await register(passkey)
    const assertion = passkey.assert(await ceremony("login"))
    const send = () => app.call("POST", "/api/aa/auth/passkey/login", { body: { response: assertion } })
    expect((await send()).status).toBe(200)
    expectInvalid(await send(), /^challenge already used/)
    app.clock.offsetMs = 5 * 60 * 1000 + 1_000
    try {
      expectInvalid(await send(), /^challenge expired/)
    } finally {
      app.clock.offsetMs = 0
    }
  })

  it("refuses an assertion by another key for a registered credential id, and an unknown credential", async () => {
    const passkey = new SoftwarePasskey()
    await register(passkey)
    const impostor = new SoftwarePasskey()
    Object.defineProperty(impostor, "credentialId", { value: passkey.credentialId })
    expectInvalid(await login(impostor), /did not verify/)
    expectInvalid(await login(new SoftwarePasskey()), /unknown credential/)
  })
})

describe("ECDSA smart accounts", () => {
  it("an EOA signs the SIWE challenge and gets a session of its smart account (factory getAddress(abi.encodePacked(eoa), 0)); the signed message signs in once", async () => {
    const eoa = privateKeyToAccount(generatePrivateKey())
    const challenge = await app.call("POST", "/api/aa/auth/ecdsa/challenge", { body: { address: eoa.address } })
    expect(challenge.status).toBe(200)
    const smartAccount = accountOf(eoa.address.toLowerCase() as Hex)
    expect(challenge.body.data.smartAccount).toBe(smartAccount)
    const signature = await eoa.signMessage({ message: challenge.body.data.message })
    const verify = await app.call("POST", "/api/aa/auth/ecdsa/verify", {
      body: { address: eoa.address, signature, nonce: challenge.body.data.nonce }
    })
    expect(verify.status).toBe(200)
    expect(verify.body.data).toMatchObject({ address: smartAccount, method: "ecdsa", owner: eoa.address.toLowerCase(), smartAccount })
    const me = await app.call("GET", "/api/auth/me", withCookie(sessionCookieOf(verify)))
    expect(me.body.data).toMatchObject({ address: smartAccount, method: "ecdsa", owner: eoa.address.toLowerCase(), smartAccount })
    expectInvalid(
      await app.call("POST", "/api/aa/auth/ecdsa/verify", { body: { address: eoa.address, signature, nonce: challenge.body.data.nonce } }),
      /nonce already used/
    )

    const other = privateKeyToAccount(generatePrivateKey())
    const theirs = await app.call("POST", "/api/aa/auth/ecdsa/challenge", { body: { address: other.address } })
    expectInvalid(
      await app.call("POST", "/api/aa/auth/ecdsa/verify", {
        body: { address: other.address, signature: await eoa.signMessage({ message: theirs.body.data.message }) }
      }),
      /signature invalid/
    )
  })

  it("ECDSA refusals name their check like SIWE's: malformed fields 400, and with the signed message the field that differs", async () => {
    const eoa = privateKeyToAccount(generatePrivateKey())
    const challenge = (await app.call("POST", "/api/aa/auth/ecdsa/challenge", { body: { address: eoa.address } })).body.data
    const verify = (body: Record<string, unknown>) =>
      app.call("POST", "/api/aa/auth/ecdsa/verify", { body: { address: eoa.address, ...body } })
    const signature = await eoa.signMessage({ message: challenge.message })
    for (const [body, field] of [
      [{ signature: "0xzz" }, "signature"],
      [{ signature, nonce: "\u0000" }, "nonce"],
      [{ signature, message: "not a SIWE message" }, "message"]
    ] as const) {
      const answer = await verify(body)
      expect([answer.status, answer.body.code, answer.body.details?.[0]?.path], field).toEqual([400, "VALIDATION_FAILED", field])
    }
    const elsewhere = challenge.message.replace("localhost:3000 wants you", "evil.example wants you")
    expectInvalid(await verify({ signature: await eoa.signMessage({ message: elsewhere }), message: elsewhere }), /^domain mismatch/)
    const other = privateKeyToAccount(generatePrivateKey())
    expectInvalid(
      await verify({ signature: await other.signMessage({ message: challenge.message }), message: challenge.message }),
      /^signature invalid: it does not match the address/
    )
    app.clock.offsetMs = 10 * 60 * 1000 + 1_000
    try {
      expectInvalid(await verify({ signature, message: challenge.message }), /^message expired/)
    } finally {
      app.clock.offsetMs = 0
    }
    expect((await verify({ signature, message: challenge.message })).status).toBe(200)
  })

  it("a SIWE session says it has no smart account", async () => {
    const eoa = privateKeyToAccount(generatePrivateKey())
    const challenge = await app.call("GET", `/api/auth/challenge?address=${eoa.address}`)
    const verify = await app.call("POST", "/api/auth/verify", {
      body: { address: eoa.address, signature: await eoa.signMessage({ message: challenge.body.data.message }) }
    })
    expect(verify.body.data).toMatchObject({ address: eoa.address.toLowerCase(), method: "siwe", owner: null, smartAccount: null })
  })
})
