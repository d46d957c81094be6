/**
 * The spec's rate limits over real HTTP: the 61st public request in a minute, the 6th sign-in
 * request and the 301st signed-in request are refused with RATE_LIMIT_EXCEEDED, Retry-After and
 * the X-RateLimit headers; two instances on one Redis share one budget; Redis going away (a proxy
 * in front of the machine's Redis, cut) degrades to per-instance counting, logged, never a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Either } from "effect"
import { Redis } from "ioredis"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { clientIp, parseTrustProxy } from "../../../http/backend/edge/client-ip.js"
import { SPEC_RATE_LIMITS } from "../../../http/backend/edge/rate-limit.js"
import { startTcpProxy } from "../../support/tcp-proxy.js"
import { signIn, startBackends, type Backends, type Instance } from "./support/auth-harness.js"
import type { Answer } from "./support/harness.js"

let backends: Backends
/** Redis key prefixes this file used: their counters are deleted afterwards (day windows live 24 h). */
const prefixes: Array<string> = []

beforeAll(async () => {
  backends = await startBackends()
  // The harness reads the OpenAPI document from the first instance it starts; not from a limited one.
  await (await backends.start()).close()
})

afterAll(async () => {
  await backends?.close()
  const redis = new Redis(REDIS.port, REDIS.host, { lazyConnect: true })
  try {
    await redis.connect()
    for (const p of prefixes) {
      const keys = await redis.keys(`${p}:*`)
      if (keys.length > 0) await redis.del(...keys)
    }
  } finally {
    redis.disconnect()
  }
})

const REDIS = { host: "127.0.0.1", port: 6379 }
const prefix = () => {
  const p = `predix:test:${process.pid}:${Math.random().toString(36).slice(2)}`
  prefixes.push(p)
  return p
}

const expectHeaders = (answer: Answer, limit: number, remaining: number) => {
  expect(answer.headers.get("x-ratelimit-limit")).toBe(String(limit))
  expect(answer.headers.get("x-ratelimit-remaining")).toBe(String(remaining))
  const reset = Number(answer.headers.get("x-ratelimit-reset"))
  const now = Date.now() / 1000
  expect(reset).toBeGreaterThan(now - 1)
  expect(reset).toBeLessThanOrEqual(now + 61)
}

const expectRefused = (answer: Answer, limit: number) => {
  expect(answer.status).toBe(429)
  expect(answer.body).toMatchObject({ error: "RATE_LIMIT_EXCEEDED", code: "RATE_LIMIT_EXCEEDED" })
  const retryAfter = Number(answer.headers.get("retry-after"))
  expect(retryAfter).toBeGreaterThanOrEqual(1)
  expect(retryAfter).toBeLessThanOrEqual(60)
  expectHeaders(answer, limit, 0)
}

const times = async (n: number, f: (i: number) => Promise<Answer>) => {
  const answers: Array<Answer> = []
  for (let i = 0; i < n; i++) answers.push(await f(i))
  return answers
}

const using = async (options: Parameters<Backends["start"]>[0], body: (instance: Instance) => Promise<void>) => {
  const instance = await backends.start(options)
  try {
    await body(instance)
  } finally {
    await instance.close()
  }
}

describe("the spec's limits", () => {
  it("the 61st request in a minute from one IP without a session is refused", () =>
    using({ rateLimits: SPEC_RATE_LIMITS }, async (app) => {
      const answers = await times(60, () => app.call("GET", "/api/auth/me"))
      answers.forEach((answer, i) => {
        expect(answer.status).toBe(401)
        expectHeaders(answer, 60, 59 - i)
      })
      expectRefused(await app.call("GET", "/api/auth/me"), 60)
      // Every /api answer carries the headers, errors included; the system endpoints are not limited.
      const unknown = await fetch(`${app.url}/api/nothing`)
      expect(unknown.status).toBe(429)
      expect(unknown.headers.get("x-ratelimit-remaining")).toBe("0")
      const health = await fetch(`${app.url}/version`)
      expect(health.status).toBe(200)
      expect(health.headers.get("x-ratelimit-limit")).toBeNull()
    }))

  it("the 6th sign-in request in a minute from one IP is refused", () =>
    using({ rateLimits: SPEC_RATE_LIMITS }, async (app) => {
      const address = privateKeyToAccount(generatePrivateKey()).address
      const answers = await times(5, () => app.call("GET", `/api/auth/challenge?address=${address}`))
      answers.forEach((answer, i) => {
        expect(answer.status).toBe(200)
        expectHeaders(answer, 5, 4 - i)
      })
      expectRefused(await app.call("GET", `/api/auth/challenge?address=${address}`), 5)
      expectRefused(await app.call("POST", "/api/auth/verify", { body: { address, signature: "0x00" } }), 5)
      // Other endpoints still have the IP's public budget.
      expect((await app.call("GET", "/api/auth/me")).status).toBe(401)
    }))

  it("the 301st request in a minute of a signed-in user is refused; the IP's own budget is separate", () =>
    using({ rateLimits: SPEC_RATE_LIMITS }, async (app) => {
      const { cookie } = await signIn(app, privateKeyToAccount(generatePrivateKey()))
      const headers = { cookie: `predix_session=${cookie}` }
      const answers = await times(300, () => app.call("GET", "/api/auth/me", { headers }))
      answers.forEach((answer, i) => {
        expect(answer.status).toBe(200)
        expectHeaders(answer, 300, 299 - i)
      })
      expectRefused(await app.call("GET", "/api/auth/me", { headers }), 300)
      const anonymous = await app.call("GET", "/api/auth/me")
      expect(anonymous.status).toBe(401)
      expect(anonymous.headers.get("x-ratelimit-limit")).toBe("60")
    }))

  it("the daily quota applies on top of the minute's", () =>
    using({ rateLimits: { ...SPEC_RATE_LIMITS, perDay: 10 } }, async (app) => {
      await times(10, () => app.call("GET", "/api/auth/me"))
      const refused = await app.call("GET", "/api/auth/me")
      expect(refused.status).toBe(429)
      expect(refused.body.message).toMatch(/per day/)
      expect(refused.headers.get("x-ratelimit-limit")).toBe("10")
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(60)
    }))
})

describe("client IP", () => {
  it("X-Forwarded-For counts only behind a trusted proxy", async () => {
    const limits = { ...SPEC_RATE_LIMITS, publicPerMinute: 2 }
    await using({ rateLimits: limits }, async (app) => {
      await app.call("GET", "/api/auth/me", { headers: { "x-forwarded-for": "1.1.1.1" } })
      await app.call("GET", "/api/auth/me", { headers: { "x-forwarded-for": "2.2.2.2" } })
      // Without TRUST_PROXY the header is the client's word: all three are 127.0.0.1.
      expect((await app.call("GET", "/api/auth/me", { headers: { "x-forwarded-for": "3.3.3.3" } })).status).toBe(429)
    })
    const trust = Either.getOrThrow(parseTrustProxy("1"))
    await using({ rateLimits: { ...limits, trustProxy: trust } }, async (app) => {
      const from = (ip: string) => app.call("GET", "/api/auth/me", { headers: { "x-forwarded-for": ip } })
      expect((await from("1.1.1.1")).status).toBe(401)
      expect((await from("1.1.1.1")).status).toBe(401)
      expect((await from("1.1.1.1")).status).toBe(429)
      expect((await from("9.9.9.9, 2.2.2.2")).status).toBe(401) // the client's own claim (9.9.9.9) is not believed
      expect((await from("8.8.8.8, 2.2.2.2")).status).toBe(401)
      expect((await from("7.7.7.7, 2.2.2.2")).status).toBe(429)
    })
  })

  it("hop counts and CIDR lists pick the right address", () => {
    const hops = Either.getOrThrow(parseTrustProxy("2"))
    expect(clientIp(hops, "10.0.0.1", "6.6.6.6, 5.5.5.5, 10.0.0.2")).toBe("5.5.5.5")
    expect(clientIp(hops, "10.0.0.1", "5.5.5.5")).toBe("5.5.5.5")
    const cidrs = Either.getOrThrow(parseTrustProxy("10.0.0.0/8, ::1"))
    expect(clientIp(cidrs, "::ffff:10.0.0.1", "6.6.6.6, 5.5.5.5, 10.9.9.9")).toBe("5.5.5.5")
    expect(clientIp(cidrs, "::1", "10.1.1.1")).toBe("10.1.1.1")
    expect(clientIp(cidrs, "192.168.1.1", "5.5.5.5")).toBe("192.168.1.1") // the peer is no trusted proxy
    expect(clientIp({ _tag: "None" }, "127.0.0.1", "5.5.5.5")).toBe("127.0.0.1")
    expect(Either.isLeft(parseTrustProxy("10.0.0.0/33"))).toBe(true)
    expect(Either.isLeft(parseTrustProxy("proxy.example"))).toBe(true)
  })
})

describe("shared store", () => {
  it("two instances on one Redis share one budget", async () => {
    const rateLimits = { ...SPEC_RATE_LIMITS, publicPerMinute: 10, redisUrl: `redis://${REDIS.host}:${REDIS.port}`, keyPrefix: prefix() }
    const a = await backends.start({ rateLimits })
    const b = await backends.start({ rateLimits })
    try {
      for (let i = 0; i < 5; i++) {
        expect((await a.call("GET", "/api/auth/me")).status).toBe(401)
        const fromB = await b.call("GET", "/api/auth/me")
        expect(fromB.status).toBe(401)
        expect(fromB.headers.get("x-ratelimit-remaining")).toBe(String(10 - 2 * (i + 1)))
      }
      expectRefused(await a.call("GET", "/api/auth/me"), 10)
      expectRefused(await b.call("GET", "/api/auth/me"), 10)
    } finally {
      await a.close()
      await b.close()
    }
  })

  it("Redis going away: each instance counts alone (logged), no request fails; back, the shared count resumes", async () => {
    const proxy = await startTcpProxy(REDIS)
    const rateLimits = { ...SPEC_RATE_LIMITS, publicPerMinute: 4, redisUrl: `redis://127.0.0.1:${proxy.port}`, keyPrefix: prefix() }
    const app = await backends.start({ rateLimits })
    try {
      const call = () => app.call("GET", "/api/auth/me")
      expect((await call()).headers.get("x-ratelimit-remaining")).toBe("3")
      expect((await call()).headers.get("x-ratelimit-remaining")).toBe("2")
      proxy.cut()
      // The in-process counters take over from zero: four more, then refused; never a 500.
      const during = await times(5, call)
      expect(during.map((a) => a.status)).toEqual([401, 401, 401, 401, 429])
      expect(app.logs.some((line) => line.includes("rate-limit store unavailable"))).toBe(true)
      proxy.restore()
      let back: Answer | undefined
      for (let i = 0; i < 50 && back?.headers.get("x-ratelimit-remaining") !== "1"; i++) {
        await new Promise((r) => setTimeout(r, 100))
        back = await call()
      }
      // Redis kept its count (2 of 4 spent); this request is its third.
      expect(back?.headers.get("x-ratelimit-remaining")).toBe("1")
      expect(app.logs.some((line) => line.includes("answers again"))).toBe(true)
    } finally {
      await app.close()
      await proxy.close()
    }
  })
})
