/**
 * SIWE sign-in, sessions, roles and settings over real HTTP against real Postgres. Every check the
 * `siwe` package leaves to its caller has a test here that fails without it; the message of
 * AUTH_INVALID names the failed check, and tests assert that name.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { execFile } from "node:child_process"
import { createHash } from "node:crypto"
import { promisify } from "node:util"
import { SiweMessage } from "siwe"
import { hexToBigInt, numberToHex, parseSignature, serializeSignature } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { buildMessage, siteOf } from "../../../http/backend/auth/siwe.js"
import { sessionCookieOf, signIn, startBackends, type Backends, type Instance } from "./support/auth-harness.js"

const run = promisify(execFile)

let backends: Backends
let app: Instance

const fresh = () => privateKeyToAccount(generatePrivateKey())
const lower = (a: string) => a.toLowerCase()
const withCookie = (cookie: string | undefined, headers: Record<string, string> = {}) => ({
  headers: { cookie: `predix_session=${cookie}`, ...headers }
})

beforeAll(async () => {
  backends = await startBackends()
  app = await backends.start()
})

afterAll(async () => {
  await backends?.close()
})

const challengeFor = async (instance: Instance, address: string) => {
  const answer = await instance.call("GET", `/api/auth/challenge?address=${address}`)
  expect(answer.status).toBe(200)
  return answer.body.data as { message: string; nonce: string; issuedAt: number; expiresAt: number }
}

const expectInvalid = (answer: { status: number; body: any }, check: RegExp) => {
  expect(answer.status).toBe(401)
  expect(answer.body.code).toBe("AUTH_INVALID")
  expect(answer.body.message).toMatch(check)
}

describe("sign-in", () => {
  it("issues an EIP-4361 challenge from configuration and sets an HttpOnly, Lax, 7-day cookie whose hash alone is stored", async () => {
    const account = fresh()
    const challenge = await challengeFor(app, account.address)
    expect(challenge.message).toContain("localhost:3000 wants you to sign in with your Ethereum account:")
    expect(challenge.message).toContain(`\n${account.address}\n`)
    expect(challenge.message).toContain("URI: http://localhost:3000")
    expect(challenge.message).toContain("Chain ID: 130")
    expect(challenge.message).toContain(`Nonce: ${challenge.nonce}`)
    expect(challenge.nonce).toMatch(/^[0-9a-f]{32}$/) // 128 random bits
    expect(challenge.expiresAt - challenge.issuedAt).toBe(600)

    const signature = await account.signMessage({ message: challenge.message })
    const verify = await app.call("POST", "/api/auth/verify", { body: { address: account.address, signature } })
    expect(verify.status).toBe(200)
    expect(verify.body.data).toMatchObject({ address: lower(account.address), role: "user", method: "siwe" })
    expect(verify.body.data.expiresAt - verify.body.data.createdAt).toBe(7 * 24 * 3600)
    const setCookie = verify.headers.getSetCookie().find((c) => c.startsWith("predix_session="))!
    expect(setCookie).toMatch(/HttpOnly/i)
    expect(setCookie).toMatch(/SameSite=Lax/i)
    expect(setCookie).toMatch(/Path=\//)
    expect(setCookie).toMatch(/Max-Age=604800/)
    expect(setCookie).not.toMatch(/Secure/i) // http on localhost
    const cookie = sessionCookieOf(verify)!

    const me = await app.call("GET", "/api/auth/me", withCookie(cookie))
    expect(me.status).toBe(200)
    expect(me.body.data.address).toBe(lower(account.address))

    const rows = await backends.sql(`select encode(token_hash, 'hex') as hash, s.*::text as whole from auth_session s where address = $1`, [
      lower(account.address)
    ])
    expect(rows).toHaveLength(1)
    expect(rows[0]!.hash).toBe(createHash("sha256").update(cookie).digest("hex"))
    expect(rows[0]!.whole).not.toContain(cookie)
    // The token is in no log line.
    expect(app.logs.some((line) => line.includes(cookie))).toBe(false)
    expect(app.logs.some((line) => line.includes("signed in"))).toBe(true)
  })

  it("marks the cookie Secure when the public URL is not http on localhost", async () => {
    const site = await backends.start({ auth: { publicUrl: "https://app.example.com" } })
    try {
      const { verify } = await signIn(site, fresh(), {})
      expect(verify.status).toBe(200)
      expect(verify.headers.getSetCookie().find((c) => c.startsWith("predix_session="))).toMatch(/Secure/)
    } finally {
      await site.close()
    }
  })

  it("refuses a replayed signature", async () => {
    const account = fresh()
    const { verify, signature } = await signIn(app, account)
    expect(verify.status).toBe(200)
    const replay = await app.call("POST", "/api/auth/verify", { body: { address: account.address, signature } })
    expectInvalid(replay, /nonce already used/)
  })

  it("refuses a used nonce signed again (the malleable twin of the signature)", async () => {
    const account = fresh()
    const { verify, signature, challenge } = await signIn(app, account)
    expect(verify.status).toBe(200)
    // (r, n - s) with the other recovery bit signs the same message: another byte string, the same nonce.
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
    const parts = parseSignature(signature)
    const twin = serializeSignature({
      r: parts.r,
      s: numberToHex(n - hexToBigInt(parts.s), { size: 32 }),
      yParity: parts.yParity === 0 ? 1 : 0
    })
    expect(twin).not.toBe(signature)
    const again = await app.call("POST", "/api/auth/verify", {
      body: { address: account.address, signature: twin, nonce: challenge.body.data.nonce }
    })
    expectInvalid(again, /nonce already used/)
  })

  it("refuses a nonce issued to another address", async () => {
    const victim = fresh()
    const attacker = fresh()
    const challenge = await challengeFor(app, victim.address)
    const signature = await attacker.signMessage({ message: challenge.message })
    const answer = await app.call("POST", "/api/auth/verify", { body: { address: attacker.address, signature, nonce: challenge.nonce } })
    expectInvalid(answer, /nonce issued to another address/)
  })

  it("refuses a message for another domain, another URI or another chain id (an instance configured differently)", async () => {
    const cases = [
      { options: { auth: { publicUrl: "http://other.example:8080" } }, check: /domain mismatch/ },
      { options: { auth: { publicUrl: "https://localhost:3000" } }, check: /URI mismatch/ },
      { options: { chainId: 1 }, check: /chain id mismatch/ }
    ]
    for (const { options, check } of cases) {
      const other = await backends.start(options)
      try {
        const account = fresh()
        const challenge = await challengeFor(other, account.address)
        const signature = await account.signMessage({ message: challenge.message })
        expectInvalid(await app.call("POST", "/api/auth/verify", { body: { address: account.address, signature } }), check)
      } finally {
        await other.close()
      }
    }
  })

  it("refuses an expired message", async () => {
    const account = fresh()
    const challenge = await challengeFor(app, account.address)
    const signature = await account.signMessage({ message: challenge.message })
    app.clock.offsetMs = 10 * 60 * 1000 + 1_000
    try {
      expectInvalid(await app.call("POST", "/api/auth/verify", { body: { address: account.address, signature } }), /message expired/)
    } finally {
      app.clock.offsetMs = 0
    }
  })

  it("refuses a message issued in the future (an instance whose clock runs ahead)", async () => {
    const ahead = await backends.start()
    ahead.clock.offsetMs = 5 * 60 * 1000
    try {
      const account = fresh()
      const challenge = await challengeFor(ahead, account.address)
      const signature = await account.signMessage({ message: challenge.message })
      expectInvalid(
        await app.call("POST", "/api/auth/verify", { body: { address: account.address, signature } }),
        /message issued in the future/
      )
    } finally {
      await ahead.close()
    }
  })

  it("refuses a signature by another key", async () => {
    const account = fresh()
    const challenge = await challengeFor(app, account.address)
    const signature = await fresh().signMessage({ message: challenge.message })
    expectInvalid(await app.call("POST", "/api/auth/verify", { body: { address: account.address, signature } }), /signature invalid/)
    expectInvalid(
      await app.call("POST", "/api/auth/verify", { body: { address: account.address, signature, nonce: challenge.nonce } }),
      /signature invalid/
    )
  })

  it("with the chain's RPC down, accounts still sign in and other signatures are refused saying why", async () => {
    const site = await backends.start({ auth: { publicUrl: "http://localhost:3000", rpcUrl: "http://127.0.0.1:9" } })
    try {
      expect((await signIn(site, fresh())).verify.status).toBe(200)
      const account = fresh()
      const challenge = await challengeFor(site, account.address)
      const signature = await fresh().signMessage({ message: challenge.message })
      expectInvalid(
        await site.call("POST", "/api/auth/verify", { body: { address: account.address, signature } }),
        /signature invalid.*RPC did not answer/
      )
    } finally {
      await site.close()
    }
  })

  it("refuses malformed signatures, nonces, bodies, addresses and messages", async () => {
    const account = fresh()
    const challenge = await challengeFor(app, account.address)
    const expectMalformed = (answer: { status: number; body: any }, field: string, check: RegExp) => {
      expect([answer.status, answer.body.code]).toEqual([400, "VALIDATION_FAILED"])
      expect(answer.body.details).toEqual([{ path: field, message: expect.stringMatching(check) }])
    }
    // Malformed fields are the body's fault (400, naming the field), before any query: a NUL in the nonce once answered 503.
    for (const signature of ["0x12zz", "hello", "0x", "0x123", `0x${"ab".repeat(20_000)}`]) {
      const answer = await app.call("POST", "/api/auth/verify", { body: { address: account.address, signature } })
      expectMalformed(answer, "signature", /signature malformed/)
    }
    const signed = await account.signMessage({ message: challenge.message })
    for (const nonce of ["\u0000", "zz", "\ud800".repeat(30), "a".repeat(65), `${challenge.nonce}\u0000`]) {
      const answer = await app.call("POST", "/api/auth/verify", { body: { address: account.address, signature: signed, nonce } })
      // NUL and unpaired surrogates are refused first by the body check (http/backend/edge/json-body.ts).
      expectMalformed(answer, "nonce", /nonce malformed|contains a NUL|unpaired UTF-16 surrogate/)
    }
    for (const message of ["hello", "\u0000", "x".repeat(5_000)]) {
      const answer = await app.call("POST", "/api/auth/verify", { body: { address: account.address, signature: signed, message } })
      expectMalformed(answer, "message", /message malformed|contains a NUL/)
    }
    const [unspent] = await backends.sql(`select consumed_at from auth_nonce where nonce = $1`, [challenge.nonce])
    expect(unspent!.consumed_at).toBeNull()
    expectInvalid(
      await app.call("POST", "/api/auth/verify", { body: { address: account.address, signature: `0x${"11".repeat(65)}` } }),
      /signature invalid/
    )
    const missing = await app.call("POST", "/api/auth/verify", { body: { address: account.address } })
    expect(missing.status).toBe(400)
    expect(missing.body.code).toBe("VALIDATION_FAILED")
    expect((await app.call("POST", "/api/auth/verify", { body: "{not json" })).body.code).toBe("VALIDATION_FAILED")
    expect((await app.call("POST", "/api/auth/verify", { body: { address: "0x12", signature: "0x00" } })).body.code).toBe("INVALID_ADDRESS")
    expect((await app.call("GET", "/api/auth/challenge?address=0xnothex")).body.code).toBe("INVALID_ADDRESS")
    expect((await app.call("GET", "/api/auth/challenge")).status).toBe(400)
    // A stored challenge that is not EIP-4361 (another writer, a corrupted row) signs nobody in.
    const nonce = "f".repeat(32)
    const garbage = "localhost:3000 wants you to sign in\nnot a message"
    await backends.sql(
      `insert into auth_nonce (nonce, address, message, issued_at, expires_at) values ($1, $2, $3, now(), now() + interval '10 minutes')`,
      [nonce, lower(account.address), garbage]
    )
    const signature = await account.signMessage({ message: garbage })
    expectInvalid(await app.call("POST", "/api/auth/verify", { body: { address: account.address, signature, nonce } }), /message malformed/)
    void challenge
  })

  it("with the message it signed, a refusal names the check that failed: signer, domain, URI, chain id, time window, nonce, changed text", async () => {
    const account = fresh()
    const challenge = await challengeFor(app, account.address)
    const here = siteOf("http://localhost:3000", 130)
    const now = Date.now()
    const crafted = (site = here, nonce = challenge.nonce, issuedAt = now, expiresAt = now + 600_000) =>
      buildMessage(site, account.address, nonce, issuedAt, expiresAt)
    const verify = async (message: string, signer = account) =>
      app.call("POST", "/api/auth/verify", {
        body: { address: account.address, signature: await signer.signMessage({ message }), message }
      })
    const cases: Array<[string, RegExp]> = [
      [crafted(siteOf("http://other.example:8080", 130)), /^domain mismatch/],
      [crafted(siteOf("https://localhost:3000", 130)), /^URI mismatch/],
      [crafted(siteOf("http://localhost:3000", 1)), /^chain id mismatch/],
      [crafted(here, challenge.nonce, now - 1_200_000, now - 600_000), /^message expired/],
      [crafted(here, challenge.nonce, now + 300_000, now + 900_000), /^message issued in the future/],
      [crafted(here, "a".repeat(32)), /^unknown nonce/],
      [crafted(here, challenge.nonce, now, now + 300_000), /^message differs from the challenge issued with its nonce/]
    ]
    for (const [message, check] of cases) expectInvalid(await verify(message), check)
    // Another key's signature of the very message issued: the signature is checked first, and says so.
    expectInvalid(await verify(challenge.message, fresh()), /^signature invalid: it does not match the address/)
    // The nonce named beside the message must be the message's.
    const other = await challengeFor(app, account.address)
    expectInvalid(
      await app.call("POST", "/api/auth/verify", {
        body: {
          address: account.address,
          signature: await account.signMessage({ message: challenge.message }),
          message: challenge.message,
          nonce: other.nonce
        }
      }),
      /^nonce mismatch/
    )
    // None of these spent the challenge: the message as issued signs in, once.
    expect((await verify(challenge.message)).status).toBe(200)
    expectInvalid(await verify(challenge.message), /^nonce already used/)
  })

  it("{message, signature} (the wallet libraries' form): the message names the signer; each field is checked against the stored challenge", async () => {
    const account = fresh()
    const challenge = await challengeFor(app, account.address)
    const other = await challengeFor(app, account.address)
    const stranger = fresh()
    const issued = new SiweMessage(challenge.message)
    /** The challenge with `change` applied, written back as siwe writes a message. */
    const tampered = (change: (m: SiweMessage) => void) => {
      const copy = new SiweMessage(challenge.message)
      change(copy)
      return copy.prepareMessage()
    }
    const iso = (ms: number) => new Date(ms).toISOString()
    const issuedAt = Date.parse(issued.issuedAt!)
    const verify = async (message: string, signer = account) =>
      app.call("POST", "/api/auth/verify", { body: { message, signature: await signer.signMessage({ message }) } })
    // Each field changed, signed by the key the message names: refused, naming the field.
    const cases: Array<[string, string, RegExp, typeof account?]> = [
      ["scheme", tampered((m) => (m.scheme = "https")), /^message differs from the challenge issued with its nonce: scheme/],
      ["domain", tampered((m) => (m.domain = "evil.example")), /^domain mismatch/],
      ["address", tampered((m) => (m.address = stranger.address)), /^nonce issued to another address/, stranger],
      ["statement", tampered((m) => (m.statement = "Sign in to PrediX and give all")), /^message differs .*: statement is/],
      ["uri", tampered((m) => (m.uri = "http://localhost:3000/evil")), /^URI mismatch/],
      ["chain id", tampered((m) => (m.chainId = 1)), /^chain id mismatch/],
      ["nonce (unknown)", tampered((m) => (m.nonce = "a".repeat(32))), /^unknown nonce/],
      ["nonce (another challenge's)", tampered((m) => (m.nonce = other.nonce)), /^message differs .*: (issuedAt|expirationTime) is/],
      ["issuedAt", tampered((m) => (m.issuedAt = iso(issuedAt - 1_000))), /^message differs .*: issuedAt is/],
      ["expirationTime", tampered((m) => (m.expirationTime = iso(issuedAt + 60_000))), /^message differs .*: expirationTime is/],
      ["notBefore", tampered((m) => (m.notBefore = iso(issuedAt))), /^message differs .*: notBefore is/],
      ["requestId", tampered((m) => (m.requestId = "r1")), /^message differs .*: requestId is/],
      ["resources", tampered((m) => (m.resources = ["https://evil.example/all"])), /^message differs .*: resources is/]
    ]
    for (const [field, message, check, signer] of cases) {
      expect(message, field).not.toBe(challenge.message)
      const answer = await verify(message, signer)
      expect([answer.status, answer.body.code], field).toEqual([401, "AUTH_INVALID"])
      expect(answer.body.message, field).toMatch(check)
    }
    // A version other than 1 is not EIP-4361 at all: the body's fault, naming the field.
    const version = await verify(challenge.message.replace("Version: 1", "Version: 2"))
    expect([version.status, version.body.code, version.body.details[0].path]).toEqual([400, "VALIDATION_FAILED", "message"])
    // The issued text with another key's signature names no field: the signature is checked first.
    expectInvalid(await verify(challenge.message, stranger), /^signature invalid: it does not match the address/)
    // Without address and message nobody is named: the body's fault.
    const unnamed = await app.call("POST", "/api/auth/verify", {
      body: { signature: await account.signMessage({ message: challenge.message }) }
    })
    expect([unnamed.status, unnamed.body.code, unnamed.body.details[0].path]).toEqual([400, "VALIDATION_FAILED", "address"])
    // None of these spent the challenge: as issued, it signs in once, for the message's address.
    const signedIn = await verify(challenge.message)
    expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200)
    expect(signedIn.body.data.address).toBe(lower(account.address))
    expectInvalid(await verify(challenge.message), /^nonce already used/)
  })

  it("an expired challenge is 'message expired', never 'nonce already used', also when only its stored expiry has passed", async () => {
    const account = fresh()
    const nonce = "d".repeat(32)
    const now = Date.now()
    // The stored expiry is the authority the spending statement checks; the text says 10 minutes more.
    const message = buildMessage(siteOf("http://localhost:3000", 130), account.address, nonce, now - 60_000, now + 600_000)
    await backends.sql(
      `insert into auth_nonce (nonce, address, message, issued_at, expires_at) values ($1, $2, $3, now() - interval '1 minute', now() - interval '1 second')`,
      [nonce, lower(account.address), message]
    )
    const signature = await account.signMessage({ message })
    expectInvalid(await app.call("POST", "/api/auth/verify", { body: { address: account.address, signature, nonce } }), /^message expired/)
    expectInvalid(await app.call("POST", "/api/auth/verify", { body: { address: account.address, signature } }), /^message expired/)
    expectInvalid(
      await app.call("POST", "/api/auth/verify", { body: { address: account.address, signature, message } }),
      /^message expired/
    )
  })

  it("refuses a stored challenge whose message names another address than the one it was issued to", async () => {
    const account = fresh()
    const other = fresh()
    const nonce = "e".repeat(32)
    const now = Date.now()
    const message = buildMessage(siteOf("http://localhost:3000", 130), other.address, nonce, now, now + 600_000)
    await backends.sql(
      `insert into auth_nonce (nonce, address, message, issued_at, expires_at) values ($1, $2, $3, now(), now() + interval '10 minutes')`,
      [nonce, lower(account.address), message]
    )
    const signature = await account.signMessage({ message })
    expectInvalid(await app.call("POST", "/api/auth/verify", { body: { address: account.address, signature, nonce } }), /address mismatch/)
  })

  it("100 concurrent verifies of one signed message create exactly one session", async () => {
    const account = fresh()
    const challenge = await challengeFor(app, account.address)
    const signature = await account.signMessage({ message: challenge.message })
    const answers = await Promise.all(
      Array.from({ length: 100 }, () => app.call("POST", "/api/auth/verify", { body: { address: account.address, signature } }))
    )
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1)
    const refused = answers.filter((a) => a.status !== 200)
    expect(refused).toHaveLength(99)
    for (const answer of refused) expectInvalid(answer, /nonce already used/)
    const [row] = await backends.sql(`select count(*)::int as n from auth_session where address = $1`, [lower(account.address)])
    expect(row!.n).toBe(1)
  })
})

describe("sessions", () => {
  it("no cookie is AUTH_REQUIRED; a tampered or malformed cookie is AUTH_INVALID", async () => {
    const { cookie } = await signIn(app, fresh())
    const none = await app.call("GET", "/api/auth/me")
    expect(none.status).toBe(401)
    expect(none.body.code).toBe("AUTH_REQUIRED")
    const last = cookie!.at(-1) === "A" ? "B" : "A"
    expectInvalid(await app.call("GET", "/api/auth/me", withCookie(`${cookie!.slice(0, -1)}${last}`)), /unknown session/)
    expectInvalid(await app.call("GET", "/api/auth/me", withCookie("abc")), /malformed/)
    expect((await app.call("GET", "/api/auth/me", withCookie(cookie))).status).toBe(200)
  })

  it("logout revokes the session, clears the cookie and is idempotent", async () => {
    const { cookie } = await signIn(app, fresh())
    const out = await app.call("POST", "/api/auth/logout", withCookie(cookie))
    expect(out.status).toBe(200)
    expect(out.body.data.revoked).toBe(true)
    expect(out.headers.getSetCookie().find((c) => c.startsWith("predix_session="))).toMatch(/Max-Age=0/)
    expectInvalid(await app.call("GET", "/api/auth/me", withCookie(cookie)), /signed out/)
    const again = await app.call("POST", "/api/auth/logout", withCookie(cookie))
    expect(again.status).toBe(200)
    expect(again.body.data.revoked).toBe(false)
    expect((await app.call("POST", "/api/auth/logout")).body.data.revoked).toBe(false)
  })

  it("a cookie past its 7 days is AUTH_INVALID", async () => {
    const { cookie } = await signIn(app, fresh())
    app.clock.offsetMs = 7 * 24 * 3600 * 1000 - 60_000
    try {
      expect((await app.call("GET", "/api/auth/me", withCookie(cookie))).status).toBe(200)
      app.clock.offsetMs = 7 * 24 * 3600 * 1000 + 1_000
      expectInvalid(await app.call("GET", "/api/auth/me", withCookie(cookie)), /session expired/)
    } finally {
      app.clock.offsetMs = 0
    }
  })

  it("settings: defaults, partial updates, unknown fields refused", async () => {
    const { cookie } = await signIn(app, fresh())
    const initial = await app.call("GET", "/api/auth/me/settings", withCookie(cookie))
    expect(initial.body.data.locale).toBe("en")
    expect(Object.values(initial.body.data.notifications).every((v) => v === true)).toBe(true)
    const patched = await app.call("PATCH", "/api/auth/me/settings", {
      ...withCookie(cookie),
      body: { locale: "vi", notifications: { marketPaused: false } }
    })
    expect(patched.status).toBe(200)
    expect(patched.body.data).toMatchObject({ locale: "vi", notifications: { marketPaused: false, orderFilled: true } })
    const second = await app.call("PATCH", "/api/auth/me/settings", {
      ...withCookie(cookie),
      body: { notifications: { orderFilled: false } }
    })
    expect(second.body.data).toMatchObject({ locale: "vi", notifications: { marketPaused: false, orderFilled: false } })
    expect((await app.call("GET", "/api/auth/me/settings", withCookie(cookie))).body.data).toEqual(second.body.data)
    for (const body of [{ locale: "fr" }, { colour: "red" }, { notifications: { nope: true } }]) {
      const bad = await app.call("PATCH", "/api/auth/me/settings", { ...withCookie(cookie), body })
      expect(bad.status).toBe(400)
      expect(bad.body.code).toBe("VALIDATION_FAILED")
    }
    expect((await app.call("PATCH", "/api/auth/me/settings", { body: { locale: "vi" } })).body.code).toBe("AUTH_REQUIRED")
  })
})

describe("roles", () => {
  it("admins come from ADMIN_ADDRESSES; a route's role is enforced (FORBIDDEN below it)", async () => {
    const admin = fresh()
    const user = fresh()
    const site = await backends.start({ auth: { publicUrl: "http://localhost:3000", adminAddresses: [admin.address] } })
    try {
      const adminCookie = (await signIn(site, admin)).cookie
      const userCookie = (await signIn(site, user)).cookie
      expect((await site.call("GET", "/api/auth/me", withCookie(adminCookie))).body.data.role).toBe("admin")
      const denied = await site.call("GET", `/api/admin/users/${admin.address}`, withCookie(userCookie))
      expect(denied.status).toBe(403)
      expect(denied.body.code).toBe("FORBIDDEN")
      expect(
        (await site.call("PUT", `/api/admin/users/${user.address}/role`, { ...withCookie(userCookie), body: { role: "admin" } })).body.code
      ).toBe("FORBIDDEN")
      const granted = await site.call("PUT", `/api/admin/users/${user.address}/role`, {
        ...withCookie(adminCookie),
        body: { role: "moderator" }
      })
      expect(granted.status).toBe(200)
      expect(granted.body.data).toMatchObject({ address: lower(user.address), role: "moderator" })
      // The role is read per request: the moderator's existing session now passes moderator routes, not admin ones.
      expect((await site.call("GET", `/api/admin/users/${admin.address}`, withCookie(userCookie))).body.data.role).toBe("admin")
      expect(
        (await site.call("PUT", `/api/admin/users/${user.address}/role`, { ...withCookie(userCookie), body: { role: "admin" } })).body.code
      ).toBe("FORBIDDEN")
      expect((await site.call("GET", `/api/admin/users/${fresh().address}`, withCookie(adminCookie))).status).toBe(404)
      expect((await site.call("GET", `/api/admin/users/${admin.address}`)).body.code).toBe("AUTH_REQUIRED")
    } finally {
      await site.close()
    }
  })
})

describe("cross-site requests", () => {
  it("state-changing requests with the cookie must come from an allowed origin", async () => {
    const site = await backends.start({ auth: { publicUrl: "http://localhost:3000", corsOrigins: ["https://app.example.com"] } })
    try {
      const { cookie } = await signIn(site, fresh())
      const patch = (headers: Record<string, string>) =>
        site.call("PATCH", "/api/auth/me/settings", { ...withCookie(cookie, headers), body: { locale: "ja" } })
      const evil = await patch({ origin: "https://evil.example" })
      expect(evil.status).toBe(403)
      expect(evil.body.code).toBe("FORBIDDEN")
      expect(evil.body.message).toMatch(/https:\/\/evil\.example/)
      expect(evil.headers.get("access-control-allow-origin")).toBeNull()
      expect((await patch({ "sec-fetch-site": "cross-site" })).status).toBe(403)
      expect((await patch({ origin: "null" })).status).toBe(403)
      const allowed = await patch({ origin: "https://app.example.com" })
      expect(allowed.status).toBe(200)
      expect(allowed.headers.get("access-control-allow-origin")).toBe("https://app.example.com")
      expect(allowed.headers.get("access-control-allow-credentials")).toBe("true")
      expect((await patch({ origin: "http://localhost:3000" })).status).toBe(200)
      expect((await patch({})).status).toBe(200) // no browser, no Origin: a script
      // Sign-in is protected even without a cookie (no login CSRF); a cookie-less public read is not.
      expect((await site.call("POST", "/api/auth/logout", { headers: { origin: "https://evil.example" } })).status).toBe(403)
      const preflight = await fetch(`${site.url}/api/auth/me/settings`, {
        method: "OPTIONS",
        headers: {
          origin: "https://app.example.com",
          "access-control-request-method": "PATCH",
          "access-control-request-headers": "content-type"
        }
      })
      expect(preflight.status).toBe(204)
      expect(preflight.headers.get("access-control-allow-methods")).toContain("PATCH")
      expect(preflight.headers.get("access-control-allow-credentials")).toBe("true")
    } finally {
      await site.close()
    }
  })
})

describe("npm run login", () => {
  it("signs in with a key and prints a cookie that works", async () => {
    const key = generatePrivateKey()
    const { stdout } = await run(process.execPath, [".build/login.mjs", "--key", key, "--url", app.url, "--quiet"])
    const cookie = stdout.trim()
    expect(cookie).toMatch(/^predix_session=[A-Za-z0-9_-]{43}$/)
    expect(stdout).not.toContain(key.slice(2))
    const me = await app.call("GET", "/api/auth/me", { headers: { cookie } })
    expect(me.body.data.address).toBe(lower(privateKeyToAccount(key).address))
  })
})

describe("OpenAPI", () => {
  it("documents the cookie scheme and, per operation, that a session and which role it needs", async () => {
    const doc = (await (await fetch(`${app.url}/api/openapi.json`)).json()) as any
    expect(doc.components.securitySchemes).toEqual({
      session: expect.objectContaining({ type: "apiKey", in: "cookie", name: "predix_session" })
    })
    expect(doc.paths["/api/auth/me"].get.security).toEqual([{ session: [] }])
    expect(doc.paths["/api/auth/me/settings"].patch.security).toEqual([{ session: [] }])
    expect(doc.paths["/api/admin/users/{address}"].get.security).toEqual([{ session: ["moderator"] }])
    expect(doc.paths["/api/admin/users/{address}/role"].put.security).toEqual([{ session: ["admin"] }])
    expect(doc.paths["/api/auth/challenge"].get.security ?? []).toEqual([])
    expect(doc.paths["/api/auth/me"].get.responses["401"]).toBeDefined()
    expect(doc.paths["/api/admin/users/{address}/role"].put.responses["403"]).toBeDefined()
  })
})
