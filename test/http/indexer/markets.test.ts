/**
 * /api/markets and /api/markets/{id} against the indexed fixture. Expected values are computed
 * here from the trade and price-snapshot tables (volume is the USDC side of every router Trade),
 * never copied from an answer.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startHarness, type Harness } from "./support/harness.js"

let api: Harness
beforeAll(async () => {
  api = await startHarness()
}, 120_000)
afterAll(async () => {
  await api?.close()
})

/** Volume, trade count and latest snapshot price of a market, from the append-only tables. */
const expectedMarket = async (id: number) => {
  const [trades] = await api.sql(
    `select coalesce(sum(case when trade_type in (0, 2) then amount_in else amount_out end), 0) / 1e6 as volume, count(*) as trades
       from trade where market_id = $1`,
    [id]
  )
  const [price] = await api.sql(
    `select yes_price from price_snapshot where market_id = $1 order by block_number desc, log_index desc limit 1`,
    [id]
  )
  return {
    volume: Number(trades!["volume"]).toFixed(6),
    tradeCount: Number(trades!["trades"]),
    yesPrice: price === undefined ? null : (Number(price["yes_price"]) / 1e6).toFixed(6)
  }
}

describe("GET /api/markets/{id}", () => {
  it("answers a known market with its volume, trade count and yesPrice from the trade table", async () => {
    const expected = await expectedMarket(15)
    const answer = await api.get("/api/markets/15")
    expect(answer.status).toBe(200)
    expect(answer.body.meta).toBeNull()
    expect(answer.body.data).toMatchObject({
      id: "15",
      marketIdHex: `0x${"0".repeat(62)}0f`,
      question: "Will ETH gas average below 5 gwei this week?",
      volume: expected.volume,
      tradeCount: expected.tradeCount,
      yesPrice: expected.yesPrice,
      isResolved: false,
      outcome: null,
      status: "active",
      eventId: null,
      metadata: { slug: "eth-gas-below-5-gwei", category: "crypto", featured: false }
    })
    // Hand-checked against the fixture once: these are the numbers the recording produced.
    expect(answer.body.data.volume).toBe("1566.000000")
    expect(answer.body.data.tradeCount).toBe(13)
    expect(answer.body.data.yesPrice).toBe("0.398933")
    expect(answer.body.data.noPrice).toBe("0.601067")
  })

  it("accepts the 64-hex marketIdHex, in any case, for the same market", async () => {
    const decimal = await api.get("/api/markets/26")
    const hex = await api.get(`/api/markets/0x${"0".repeat(62)}1A`)
    expect(hex.status).toBe(200)
    expect(hex.body).toEqual(decimal.body)
    expect(decimal.body.data).toMatchObject({ eventId: "1", isResolved: true, outcome: false, metadata: { category: "sports" } })
  })

  it("says MarketNotFound (404) for an id nobody created", async () => {
    for (const id of ["29", "999999", `0x${"f".repeat(64)}`]) {
      const answer = await api.get(`/api/markets/${id}`)
      expect(answer.status).toBe(404)
      expect(answer.body.error).toBe("MarketNotFound")
    }
  })

  it("takes no query parameter: any is a 400 naming it", async () => {
    const answer = await api.get("/api/markets/15?limit=5")
    expect(answer.status).toBe(400)
    expect(answer.body).toEqual({ error: "InvalidParameter", message: 'unknown query parameter "limit"; this endpoint takes none' })
  })

  it("says InvalidMarketId (400) for a malformed id, naming it", async () => {
    for (const id of ["abc", "0", "-1", "1.5", "01", "0x12", `0x${"g".repeat(64)}`, "1e3"]) {
      const answer = await api.get(`/api/markets/${encodeURIComponent(id)}`)
      expect(answer.status, id).toBe(400)
      expect(answer.body.error).toBe("InvalidMarketId")
      expect(answer.body.message).toMatch(/^invalid market id "id": /)
    }
  })
})

describe("GET /api/markets", () => {
  it("lists every market with the total count, newest first by default", async () => {
    const [{ count }] = (await api.sql(`select count(*)::int as count from market`)) as [{ count: number }]
    const answer = await api.get("/api/markets?limit=100")
    expect(answer.status).toBe(200)
    expect(answer.body.meta).toEqual({ limit: 100, offset: 0, count })
    expect(answer.body.data.map((m: { id: string }) => Number(m.id))).toEqual(Array.from({ length: count }, (_, i) => count - i))
  })

  it("defaults to limit 20, offset 0", async () => {
    const answer = await api.get("/api/markets")
    expect(answer.body.meta).toEqual({ limit: 20, offset: 0, count: 28 })
    expect(answer.body.data).toHaveLength(20)
  })

  it("sorts by volume (descending, ties by id) and pages without overlap or gaps", async () => {
    const rows = await api.sql(`select id::text as mid from market order by volume desc, id asc`)
    const seen: Array<string> = []
    for (let offset = 0; offset < 28; offset += 5) {
      const answer = await api.get(`/api/markets?sort=volume&limit=5&offset=${offset}`)
      expect(answer.body.meta.count).toBe(28)
      seen.push(...answer.body.data.map((m: { id: string }) => m.id))
    }
    expect(seen).toEqual(rows.map((r) => r["mid"]))
    const top = await api.get("/api/markets?sort=volume&limit=1")
    expect(top.body.data[0]).toMatchObject(await expectedMarket(Number(rows[0]!["mid"])))
  })

  it("sorts by trades, oldest and ending_soon with unique tie-breaks", async () => {
    const orders = {
      trades: `trade_count desc, id asc`,
      oldest: `id asc`,
      ending_soon: `end_time asc, id asc`
    }
    for (const [sort, order] of Object.entries(orders)) {
      const expected = (await api.sql(`select id::text as mid from market order by ${order} limit 30`)).map((r) => r["mid"])
      const answer = await api.get(`/api/markets?sort=${sort}&limit=100`)
      expect(
        answer.body.data.map((m: { id: string }) => m.id),
        sort
      ).toEqual(expected)
    }
  })

  it("filters by status", async () => {
    const expected = {
      active: `not is_resolved and not refund_mode`,
      resolved: `is_resolved`,
      refunding: `refund_mode and not is_resolved`
    }
    for (const [status, where] of Object.entries(expected)) {
      const ids = (await api.sql(`select id::text as mid from market where ${where} order by id desc`)).map((r) => r["mid"])
      const answer = await api.get(`/api/markets?status=${status}&limit=100`)
      expect(answer.body.meta.count, status).toBe(ids.length)
      expect(answer.body.data.map((m: { id: string }) => m.id)).toEqual(ids)
      expect(answer.body.data.every((m: { status: string }) => m.status === status)).toBe(true)
    }
  })

  it("filters by the display metadata: category and featured", async () => {
    const sports = await api.get("/api/markets?category=sports&limit=100")
    expect(sports.body.data.map((m: { id: string }) => m.id)).toEqual(["26", "25", "24", "23", "12", "5"])
    const featured = await api.get("/api/markets?featured=true&limit=100")
    expect(featured.body.data.map((m: { id: string }) => m.id)).toEqual(["21", "16", "12", "3", "2", "1"])
    const notFeatured = await api.get("/api/markets?featured=false&limit=1")
    expect(notFeatured.body.meta.count).toBe(22)
    const featuredCrypto = await api.get("/api/markets?featured=true&category=crypto&sort=oldest")
    expect(featuredCrypto.body.data.map((m: { id: string }) => m.id)).toEqual(["1", "2", "16", "21"])
  })

  it("answers an empty page, with the count, past the end or for an unknown category", async () => {
    const past = await api.get("/api/markets?offset=28")
    expect(past.body).toEqual({ data: [], meta: { limit: 20, offset: 28, count: 28 } })
    const none = await api.get("/api/markets?category=no-such-category")
    expect(none.body).toEqual({ data: [], meta: { limit: 20, offset: 0, count: 0 } })
  })

  it("rejects every malformed parameter with a 400 that names it", async () => {
    const cases: Array<[string, string]> = [
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["limit=ten", "limit"],
      ["offset=-1", "offset"],
      ["sort=price", "sort"],
      ["status=open", "status"],
      ["featured=yes", "featured"],
      ["category=Sports", "category"],
      ["category=a'%20or%201=1--", "category"],
      ["unknown=1", "unknown"]
    ]
    for (const [query, name] of cases) {
      const answer = await api.get(`/api/markets?${query}`)
      expect(answer.status, query).toBe(400)
      expect(answer.body.error).toBe("InvalidParameter")
      expect(answer.body.message).toContain(`"${name}"`)
    }
  })
})
