/**
 * The backend's foundation: envelope and request ids, error bodies and codes, unknown routes,
 * the OpenAPI document, the cache tiers and the indexer breaker.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { startHarness, type Harness } from "./support/harness.js"

let h: Harness

beforeAll(async () => {
  h = await startHarness()
})

afterAll(async () => {
  await h?.close()
})

describe("envelope", () => {
  it("lists carry meta.pagination and echo a sane X-Request-Id as meta.reqId", async () => {
    const answer = await h.get("/api/markets?limit=3", { headers: { "x-request-id": "client-42" } })
    expect(answer.status).toBe(200)
    expect(answer.headers.get("x-request-id")).toBe("client-42")
    expect(answer.body.meta).toMatchObject({ version: "v2", reqId: "client-42", pagination: { limit: 3, offset: 0 } })
    expect(Number.isInteger(answer.body.meta.timestamp)).toBe(true)
    expect(answer.body.data.length).toBeLessThanOrEqual(3)
  })

  it("generates a request id when none (or an unsafe one) is sent, on errors too", async () => {
    const plain = await h.get("/api/markets/999999")
    const id = plain.headers.get("x-request-id")
    expect(id).toMatch(/^[0-9a-f-]{36}$/)
    const unsafe = await h.get("/api/markets", { headers: { "x-request-id": 'x","meta":{' } })
    expect(unsafe.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
    expect(unsafe.body.meta.reqId).toBe(unsafe.headers.get("x-request-id"))
  })

  it("limit defaults to 20 and is at most 100", async () => {
    const answer = await h.get("/api/markets?includeEventChildren=true")
    expect(answer.body.meta.pagination.limit).toBe(20)
    const tooMany = await h.get("/api/markets?limit=101")
    expect(tooMany.status).toBe(400)
    expect(tooMany.body).toMatchObject({ error: "VALIDATION_FAILED", code: "VALIDATION_FAILED" })
    expect(tooMany.body.details[0].path).toBe("limit")
  })
})

describe("errors", () => {
  it("unknown routes are 404 with the error body", async () => {
    for (const path of ["/api/nothing", "/api/markets/1/nothing", "/nothing"]) {
      const answer = await h.get(path)
      expect(answer.status).toBe(404)
      expect(answer.body).toMatchObject({ error: "NOT_FOUND", code: "NOT_FOUND" })
    }
  })

  it("malformed and unknown market ids", async () => {
    expect((await h.get("/api/markets/0x1234")).body.code).toBe("INVALID_MARKET_ID")
    expect((await h.get("/api/markets/0")).body.code).toBe("INVALID_MARKET_ID")
    expect((await h.get("/api/markets/Not%20A%20Slug")).body.code).toBe("INVALID_MARKET_ID")
    const unknown = await h.get("/api/markets/999999")
    expect(unknown.status).toBe(404)
    expect(unknown.body.code).toBe("MARKET_NOT_FOUND")
    expect((await h.get("/api/markets/no-such-slug")).body.code).toBe("MARKET_NOT_FOUND")
  })

  it("unknown and mistyped query parameters are VALIDATION_FAILED naming them", async () => {
    const unknown = await h.get("/api/markets?colour=red")
    expect(unknown.status).toBe(400)
    expect(unknown.body.code).toBe("VALIDATION_FAILED")
    expect(unknown.body.details[0].path).toBe("colour")
    const wrong = await h.get("/api/markets?featured=yes")
    expect(wrong.body.details[0]).toMatchObject({ path: "featured" })
    expect((await h.get("/api/markets?q=")).body.code).toBe("VALIDATION_FAILED")
  })
})

describe("OpenAPI", () => {
  it("is 3.1 with a real title and version, and documents every market kind", async () => {
    const doc = h.document as any
    expect(doc.openapi).toBe("3.1.0")
    expect(doc.info.title).toBe("PrediX backend API")
    expect(doc.info.version).toBe("2.0.0")
    const schemas = doc.components.schemas
    for (const kind of ["BinaryMarket", "MultiMarket", "ScalarMarket", "SportsMarket", "GroupedMarket"]) expect(schemas[kind]).toBeDefined()
    expect(JSON.stringify(doc)).not.toContain("HttpApiDecodeError")
  })
})

describe("cache", () => {
  it("hot answers are MISS then HIT with the tier, and meta stays per request", async () => {
    const path = `/api/markets?limit=2&offset=${Math.floor(Math.random() * 3)}`
    const first = await h.get(path, { headers: { "x-request-id": "a1" } })
    const second = await h.get(path, { headers: { "x-request-id": "b2" } })
    expect(first.headers.get("x-cache")).toBe("MISS")
    expect(second.headers.get("x-cache")).toBe("HIT")
    expect(second.headers.get("x-cache-tier")).toBe("hot")
    expect(second.body.data).toEqual(first.body.data)
    expect(second.body.meta.reqId).toBe("b2")
  })

  it("the locale is part of the key", async () => {
    const en = await h.get("/api/markets/1?locale=en")
    const vi = await h.get("/api/markets/1", { headers: { "accept-language": "vi-VN,vi;q=0.9" } })
    expect(vi.headers.get("x-cache")).toBe("MISS")
    expect(en.body.data.title.key).toBe(vi.body.data.title.key)
  })

  it("concurrent misses of one key compute it once and share the answer (single flight)", async () => {
    const path = "/api/markets?limit=9&offset=3&sortBy=volume"
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => h.get(path, { headers: { "x-request-id": `c${i}` } })))
    expect(answers.filter((a) => a.headers.get("x-cache") === "MISS")).toHaveLength(1)
    for (const [i, a] of answers.entries()) {
      expect(a.body.data).toEqual(answers[0]!.body.data)
      expect(a.body.meta.reqId).toBe(`c${i}`)
    }
  })

  it("warm answers say so", async () => {
    const path = "/api/markets/1/prices?limit=5"
    await h.get(path)
    const again = await h.get(path)
    expect(again.headers.get("x-cache")).toBe("HIT")
    expect(again.headers.get("x-cache-tier")).toBe("warm")
  })
})

describe("typed client", () => {
  it("reads a market and decodes MARKET_NOT_FOUND as its error class", async () => {
    const market = await h.client((c) => c.markets.get({ path: { idOrSlug: "1" }, urlParams: {} }))
    expect(market.data.marketId).toBe(`0x${"1".padStart(64, "0")}`)
    const missing = await h.client((c) => Effect.flip(c.markets.get({ path: { idOrSlug: "999999" }, urlParams: {} })))
    expect((missing as any).code).toBe("MARKET_NOT_FOUND")
  })
})
