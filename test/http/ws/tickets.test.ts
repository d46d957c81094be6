/**
 * WebSocket tickets (issue 28 item 8) over real HTTP, a real `ws` client and real Postgres: a
 * signed-in app on an allowed CORS origin trades its session for a ticket (`POST
 * /api/auth/ws-ticket`) and opens the stream's user topics with `?ticket=`. A ticket is stored
 * hashed, opens one connection, lapses after 30 s, dies with its session, and counts only from an
 * allowed origin (or a client with no Origin). Each check has a case here that fails without it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createHash } from "node:crypto"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import WebSocket from "ws"
import { signIn, startBackends, type Backends, type Instance } from "../backend/support/auth-harness.js"

const APP = "https://app.example"
let backends: Backends
let app: Instance
let wsUrl: string

beforeAll(async () => {
  backends = await startBackends({ indexed: true })
  app = await backends.start({ realtime: true, auth: { publicUrl: "http://localhost:3000", corsOrigins: [APP] } })
  wsUrl = `${app.url.replace("http:", "ws:")}/ws/realtime`
})

afterAll(async () => {
  await backends?.close()
})

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

/** A signed-in user: its address (lowercase) and session cookie. */
const user = async () => {
  const account = privateKeyToAccount(generatePrivateKey())
  const { cookie } = await signIn(app, account)
  expect(cookie).toBeDefined()
  return { address: account.address.toLowerCase(), cookie: `predix_session=${cookie}` }
}

const ticketFor = async (cookie: string, origin = APP) => {
  const answer = await app.call("POST", "/api/auth/ws-ticket", { headers: { cookie, origin } })
  expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  return answer.body.data as { ticket: string; expiresAt: number }
}

/** Opens the stream with `query` (and `origin`), subscribes `subject`'s portfolio: the first answer. */
const subscribeWith = async (query: string, subject: string, origin?: string): Promise<any> => {
  const ws = new WebSocket(`${wsUrl}${query}`, origin === undefined ? {} : { origin })
  try {
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve())
      ws.once("error", reject)
    })
    const first = new Promise<any>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no answer")), 30_000)
      ws.on("message", (data) => {
        const message = JSON.parse(data.toString())
        if (message.type === "ping") return
        clearTimeout(timer)
        resolve(message)
      })
    })
    ws.send(JSON.stringify({ type: "subscribe", topic: "user-portfolio", subject }))
    return await first
  } finally {
    ws.terminate()
  }
}

const opened = (subject: string) => ({ type: "subscribed", topic: "user-portfolio", subject })
const refused = { type: "error", code: "AUTH_REQUIRED" }

describe("WebSocket tickets", () => {
  it("a session gets a 43-character ticket valid 30 s, stored only as its SHA-256; it opens the user's topics once", async () => {
    const { address, cookie } = await user()
    const before = Math.floor(Date.now() / 1000)
    const { ticket, expiresAt } = await ticketFor(cookie)
    expect(ticket).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(expiresAt - before).toBeGreaterThanOrEqual(29)
    expect(expiresAt - before).toBeLessThanOrEqual(31)
    const rows = await backends.sql(`select encode(ticket_hash, 'hex') as hash, consumed_at from ws_ticket`)
    expect(rows.map((r) => r.hash)).toContain(sha256(ticket))
    expect(JSON.stringify(rows)).not.toContain(ticket)

    expect(await subscribeWith(`?ticket=${ticket}`, address, APP)).toEqual(opened(address))
    // Single use: the same ticket again proves nobody.
    expect(await subscribeWith(`?ticket=${ticket}`, address, APP)).toMatchObject(refused)
    // A ticket is no session token: as a cookie it is unknown.
    const asCookie = await app.call("GET", "/api/auth/me", { headers: { cookie: `predix_session=${ticket}` } })
    expect([asCookie.status, asCookie.body.code]).toEqual([401, "AUTH_INVALID"])
  })

  it("two connections racing with one ticket: one opens", async () => {
    const { address, cookie } = await user()
    const { ticket } = await ticketFor(cookie)
    const answers = await Promise.all(Array.from({ length: 8 }, () => subscribeWith(`?ticket=${ticket}`, address, APP)))
    expect(answers.filter((a) => a.type === "subscribed")).toHaveLength(1)
    expect(answers.filter((a) => a.code === "AUTH_REQUIRED")).toHaveLength(7)
  })

  it("an expired ticket is refused", async () => {
    const { address, cookie } = await user()
    const { ticket } = await ticketFor(cookie)
    await backends.sql(`update ws_ticket set expires_at = now() - interval '1 second' where ticket_hash = decode($1, 'hex')`, [
      sha256(ticket)
    ])
    expect(await subscribeWith(`?ticket=${ticket}`, address, APP)).toMatchObject(refused)
  })

  it("a ticket of a signed-out session is refused", async () => {
    const { address, cookie } = await user()
    const { ticket } = await ticketFor(cookie)
    const out = await app.call("POST", "/api/auth/logout", { headers: { cookie, origin: APP } })
    expect(out.body.data.revoked).toBe(true)
    expect(await subscribeWith(`?ticket=${ticket}`, address, APP)).toMatchObject(refused)
    // And a signed-out session gets no new one.
    const after = await app.call("POST", "/api/auth/ws-ticket", { headers: { cookie, origin: APP } })
    expect([after.status, after.body.code]).toEqual([401, "AUTH_INVALID"])
  })

  it("counts only from an allowed origin or a client without one; a refused origin does not spend it", async () => {
    const { address, cookie } = await user()
    const { ticket } = await ticketFor(cookie)
    expect(await subscribeWith(`?ticket=${ticket}`, address, "https://evil.example")).toMatchObject(refused)
    expect(await subscribeWith(`?ticket=${ticket}`, address, "http://localhost:3000")).toEqual(opened(address))
    const script = await ticketFor(cookie)
    expect(await subscribeWith(`?ticket=${script.ticket}`, address)).toEqual(opened(address))
  })

  it("proves only its own user: another address's topics are FORBIDDEN", async () => {
    const { cookie } = await user()
    const other = await user()
    const { ticket } = await ticketFor(cookie)
    expect(await subscribeWith(`?ticket=${ticket}`, other.address, APP)).toMatchObject({ type: "error", code: "FORBIDDEN" })
  })

  it("is issued only for a session, and only to an allowed origin; malformed tickets prove nobody", async () => {
    const none = await app.call("POST", "/api/auth/ws-ticket", { headers: { origin: APP } })
    expect([none.status, none.body.code]).toEqual([401, "AUTH_REQUIRED"])
    const { address, cookie } = await user()
    const crossSite = await app.call("POST", "/api/auth/ws-ticket", { headers: { cookie, origin: "https://evil.example" } })
    expect([crossSite.status, crossSite.body.code]).toEqual([403, "FORBIDDEN"])
    for (const ticket of ["", "short", "x".repeat(43).replace(/^x/, "%"), "a".repeat(43)]) {
      expect(await subscribeWith(`?ticket=${encodeURIComponent(ticket)}`, address, APP), ticket).toMatchObject(refused)
    }
  })
})
