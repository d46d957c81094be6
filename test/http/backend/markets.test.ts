/**
 * Markets and events on the indexed fixture. Expected values come from SQL on the fixture or
 * from the indexer's own API (the backend must show what the indexer derived, in its own shapes).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startHarness, type Harness } from "./support/harness.js"

let h: Harness
const hex = (id: number | string) => `0x${BigInt(id).toString(16).padStart(64, "0")}`
const indexer = async (path: string) => (await (await fetch(`${h.indexerUrl}${path}`)).json()) as any

beforeAll(async () => {
  h = await startHarness()
})

afterAll(async () => {
  await h?.close()
})

const all = async (path: string) => {
  const out: Array<any> = []
  for (let offset = 0; ; offset += 100) {
    const answer = await h.get(`${path}${path.includes("?") ? "&" : "?"}limit=100&offset=${offset}`)
    expect(answer.status).toBe(200)
    out.push(...answer.body.data)
    if (answer.body.data.length < 100) return { rows: out, total: answer.body.meta.pagination.total }
  }
}

describe("GET /api/markets", () => {
  it("leaves out outcomes of events unless asked, and pages without overlap", async () => {
    const [counts] = await h.sql<{ all: string; standalone: string }>(`
      select count(*) as all, count(*) filter (where not exists (select 1 from event_group e where e.market_ids @> jsonb_build_array(m.id::text))) as standalone
      from market m`)
    const standalone = await all("/api/markets")
    expect(standalone.total).toBe(Number(counts!.standalone))
    expect(standalone.rows.every((m) => m.kind === "binary")).toBe(true)
    const everything = await all("/api/markets?includeEventChildren=true")
    expect(everything.total).toBe(Number(counts!.all))
    expect(new Set(everything.rows.map((m) => m.marketId)).size).toBe(everything.rows.length)
    expect(everything.rows.some((m) => m.kind === "multi")).toBe(true)
  })

  it("eventId gives that event's outcomes as multi records with their siblings", async () => {
    const [event] = await h.sql<{ id: string; market_ids: Array<string> }>("select id, market_ids from event_group order by id limit 1")
    const answer = await h.get(`/api/markets?eventId=${event!.id}&sortBy=newest&sortOrder=asc`)
    expect(answer.body.data.map((m: any) => m.id)).toEqual([...event!.market_ids].sort((a, b) => Number(a) - Number(b)))
    for (const market of answer.body.data) {
      expect(market.kind).toBe("multi")
      expect(market.multi.eventId).toBe(event!.id)
      expect(market.multi.members.map((m: any) => m.marketId)).toEqual(event!.market_ids.map(hex))
      expect(market.multi.members[market.multi.index].marketId).toBe(market.marketId)
    }
  })

  it("filters by status, category, featured and text", async () => {
    const resolved = await all("/api/markets?status=resolved&includeEventChildren=true")
    const [r] = await h.sql<{ n: string }>("select count(*) as n from market where is_resolved")
    expect(resolved.total).toBe(Number(r!.n))
    expect(resolved.rows.every((m) => m.status === "resolved" && m.outcome !== null && m.capabilities.redeem)).toBe(true)
    const crypto = await all("/api/markets?category=crypto&includeEventChildren=true")
    expect(crypto.total).toBeGreaterThan(0)
    expect(crypto.rows.every((m) => m.category === "crypto")).toBe(true)
    const featured = await all("/api/markets?featured=true&includeEventChildren=true")
    expect(featured.rows.every((m) => m.featured)).toBe(true)
    const eth = await all("/api/markets?q=eth&includeEventChildren=true")
    expect(eth.rows.map((m) => m.id)).toContain("1")
    // LIKE wildcards are literal text.
    expect((await all("/api/markets?q=%25&includeEventChildren=true")).rows.every((m) => JSON.stringify(m).includes("%"))).toBe(true)
  })

  it("sorts by volume either way, ending_soon and trending only live markets", async () => {
    const byVolume = (await all("/api/markets?sortBy=volume&includeEventChildren=true")).rows.map((m) => BigInt(m.volume.raw))
    expect(byVolume).toEqual([...byVolume].sort((a, b) => (a > b ? -1 : a < b ? 1 : 0)))
    const ascending = (await all("/api/markets?sortBy=volume&sortOrder=asc&includeEventChildren=true")).rows.map((m) =>
      BigInt(m.volume.raw)
    )
    expect(ascending).toEqual([...ascending].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)))
    const ending = (await all("/api/markets?sortBy=ending_soon&includeEventChildren=true")).rows
    expect(ending.every((m) => m.status === "active")).toBe(true)
    expect(ending.map((m) => m.endTime)).toEqual([...ending.map((m) => m.endTime)].sort((a, b) => a - b))
    const trending = (await all("/api/markets?sortBy=trending")).rows
    expect(trending.every((m) => m.status === "active")).toBe(true)
    const featuredFirst = (await all("/api/markets?sortBy=featured&includeEventChildren=true")).rows.map((m) => m.featured)
    expect(featuredFirst).toEqual([...featuredFirst].sort((a, b) => Number(b) - Number(a)))
  })

  it("Money, ids and addresses follow the wire primitives", async () => {
    const [market] = (await h.get("/api/markets?limit=1&sortBy=volume")).body.data
    expect(market.marketId).toMatch(/^0x[0-9a-f]{64}$/)
    expect(market.volume).toMatchObject({ unit: "USDC", decimals: 6 })
    expect(BigInt(market.volume.raw)).toBeGreaterThan(0n)
    expect(market.creator).toMatch(/^0x[0-9a-f]{40}$/)
    const [row] = await h.sql<{ volume: string }>("select volume from market where id = $1", [market.id])
    expect(market.volume.raw).toBe(row!.volume)
  })
})

describe("one market", () => {
  it("by decimal id, hex id (any case) or slug, with the title in the asked locale", async () => {
    const byId = await h.get("/api/markets/1")
    const byHex = await h.get(`/api/markets/${hex(1).toUpperCase().replace("0X", "0x")}`)
    const bySlug = await h.get(`/api/markets/${byId.body.data.slug}`)
    expect(byHex.body.data).toEqual(byId.body.data)
    expect(bySlug.body.data).toEqual(byId.body.data)
    expect(byId.body.data.title).toMatchObject({ key: "market.1.title", fallback: "Will ETH close above $4,000 on 31 Jan 2026?" })
    const vi = await h.get("/api/markets/1?locale=vi")
    expect(vi.body.data.title.fallback).toContain("ETH có")
    const ja = await h.get("/api/markets/1", { headers: { "accept-language": "fr;q=1, ja;q=0.8, en;q=0.5" } })
    expect(ja.body.data.title.fallback).toContain("2026年")
    expect((await h.get("/api/markets/1?locale=fr")).body.code).toBe("VALIDATION_FAILED")
  })

  it("resolve names the canonical ids", async () => {
    const slug = (await h.get("/api/markets/2")).body.data.slug
    const answer = await h.get(`/api/markets/resolve?idOrSlug=${slug}`)
    expect(answer.body.data).toEqual({ marketId: hex(2), id: "2", slug })
    expect((await h.get("/api/markets/resolve?idOrSlug=nope-nope")).status).toBe(404)
    expect((await h.get("/api/markets/resolve?idOrSlug=0xzz")).body.code).toBe("INVALID_MARKET_ID")
    expect((await h.get("/api/markets/resolve")).body.code).toBe("VALIDATION_FAILED")
  })

  it("hot puts featured live markets first", async () => {
    const hot = (await h.get("/api/markets/hot")).body.data
    expect(hot.length).toBeGreaterThan(0)
    expect(hot.length).toBeLessThanOrEqual(10)
    const flags = hot.map((m: any) => m.featured)
    expect(flags).toEqual([...flags].sort((a, b) => Number(b) - Number(a)))
    expect(hot.every((m: any) => m.status === "active")).toBe(true)
  })

  it("hot and trending count CLOB trades that did not go through the router", async () => {
    const before = (await h.get("/api/markets/hot?limit=50")).body.data as Array<any>
    const last = before.filter((m) => !m.featured).at(-1)
    expect(last).toBeDefined()
    // A crossing limit order on the lowest-scored live market, inside the 24 h window: one order
    // match (500,000 USDC at 0.50) in a transaction with no router trade.
    await h.sql(
      `insert into order_match (block_number, log_index, tx_hash, timestamp, market_id, maker_order_id, taker_order_id, match_type, amount, price)
       values (2000000000, 0, '0x${"ab".repeat(32)}', greatest((select max(timestamp) from trade), (select max(timestamp) from order_match)), $1,
               '0x${"01".repeat(32)}', '0x${"02".repeat(32)}', 0, 1000000000000, 500000)`,
      [last.id]
    )
    const after = (await h.get("/api/markets/hot?limit=49")).body.data as Array<any>
    expect(after.filter((m) => !m.featured)[0].id).toBe(last.id)
    const trending = (await h.get("/api/markets?sortBy=trending&limit=3")).body.data as Array<any>
    expect(trending[0].id).toBe(last.id)
  })

  it("outcomes: yes/no of a market, or a member of its event by slug", async () => {
    const yes = await h.get("/api/markets/1/outcomes/yes")
    expect(yes.body.data).toMatchObject({ outcome: "YES", market: { id: "1" } })
    expect(yes.body.data.token).toBe(yes.body.data.market.binary.yesToken)
    const no = await h.get("/api/markets/1/outcomes/no")
    expect(no.body.data.token).toBe(no.body.data.market.binary.noToken)
    const [event] = await h.sql<{ id: string; market_ids: Array<string> }>("select id, market_ids from event_group order by id limit 1")
    const memberId = event!.market_ids[1]!
    const member = (await h.get(`/api/markets/${memberId}`)).body.data
    const eventSlug = (await h.get(`/api/events/${event!.id}`)).body.data.slug
    if (member.slug !== null) {
      const viaEvent = await h.get(`/api/markets/${eventSlug}/outcomes/${member.slug}`)
      expect(viaEvent.body.data.market.id).toBe(memberId)
      const viaSibling = await h.get(`/api/markets/${event!.market_ids[0]}/outcomes/${member.slug}`)
      expect(viaSibling.body.data.market.id).toBe(memberId)
    }
    expect((await h.get("/api/markets/1/outcomes/maybe")).status).toBe(404)
  })
})

describe("activity", () => {
  it("orderbook levels are the indexer's, in Money", async () => {
    const ids = await h.sql<{ market_id: string }>("select distinct market_id from order_book_level order by market_id limit 1")
    const id = ids[0]?.market_id ?? "1"
    const book = (await h.get(`/api/markets/${id}/orderbook`)).body.data
    const theirs = (await indexer(`/api/markets/${id}/orderbook`)).data
    expect(book.yes.bids.map((l: any) => [l.price, l.shares.decimal, l.orders])).toEqual(
      theirs.yes.bids.map((l: any) => [l.price, l.amount, l.orders])
    )
    expect(book.no.asks.map((l: any) => l.shares.unit).every((u: string) => u === "NO")).toBe(true)
    expect(book.bestBidYes).toBe(theirs.bestBidYes)
  })

  it("trades, prices and candles are the indexer's, paged the same", async () => {
    const [busiest] = await h.sql<{ id: string }>("select id from market order by trade_count desc, id limit 1")
    const id = busiest!.id
    const trades = await h.get(`/api/markets/${id}/trades?limit=50`)
    const theirTrades = await indexer(`/api/markets/${id}/trades?limit=50`)
    expect(trades.body.meta.pagination.total).toBe(theirTrades.meta.count)
    expect(trades.body.data.map((t: any) => [t.txHash, t.logIndex, t.amountOut.decimal])).toEqual(
      theirTrades.data.map((t: any) => [t.txHash, t.logIndex, t.amountOut])
    )
    const buy = trades.body.data.find((t: any) => t.tradeType.startsWith("BUY"))
    if (buy !== undefined) expect([buy.amountIn.unit, buy.amountOut.unit]).toEqual(["USDC", buy.tradeType.slice(4)])
    const prices = await h.get(`/api/markets/${id}/prices?limit=100`)
    expect(prices.body.meta.pagination.total).toBe((await indexer(`/api/markets/${id}/prices?limit=1`)).meta.count)
    const candles = await h.get(`/api/markets/${id}/candles?timeframe=1d`)
    const theirCandles = await indexer(`/api/markets/${id}/candles?timeframe=1d`)
    expect(candles.body.data.map((c: any) => [c.timestamp, c.close, c.volume.decimal])).toEqual(
      theirCandles.data.map((c: any) => [c.timestamp, c.close, c.volume])
    )
    expect((await h.get(`/api/markets/${id}/candles?timeframe=2h`)).body.code).toBe("VALIDATION_FAILED")
    expect((await h.get(`/api/markets/${id}/prices?from=10&to=5`)).body.code).toBe("VALIDATION_FAILED")
    expect((await h.get(`/api/markets/${id}/trades?trader=0x12`)).body.code).toBe("INVALID_ADDRESS")
    expect((await h.get("/api/markets/999999/trades")).body.code).toBe("MARKET_NOT_FOUND")
  })
})

describe("events", () => {
  it("list and detail by id or slug", async () => {
    const [n] = await h.sql<{ n: string }>("select count(*) as n from event_group")
    const list = await h.get("/api/events")
    expect(list.body.meta.pagination.total).toBe(Number(n!.n))
    const first = list.body.data.find((e: any) => e.eventId === "1")
    expect(first.name.key).toBe("event.1.name")
    const detail = await h.get("/api/events/1")
    const bySlug = await h.get(`/api/events/${detail.body.data.slug}`)
    expect(bySlug.body.data).toEqual(detail.body.data)
    expect(detail.body.data.members.length).toBe(detail.body.data.childMarketCount)
    expect(detail.body.data.marketIds).toEqual(detail.body.data.members.map((m: any) => m.marketId))
  })

  it("an unknown event is 404 NOT_FOUND (not MARKET_NOT_FOUND); a malformed id or slug is 400 VALIDATION_FAILED", async () => {
    for (const unknown of ["999999", "no-such-event", "9".repeat(77)]) {
      const answer = await h.get(`/api/events/${unknown}`)
      expect([answer.status, answer.body.code], unknown).toEqual([404, "NOT_FOUND"])
      expect(answer.body.message, unknown).toMatch(/^no event "/)
    }
    for (const malformed of ["0", "01", "-1", "1.5", "9".repeat(78), "No-Such", "a--b", "x".repeat(65), "%00", "%E2%82%AC"]) {
      const answer = await h.get(`/api/events/${malformed}`)
      expect([answer.status, answer.body.code], malformed).toEqual([400, "VALIDATION_FAILED"])
      // A NUL is refused earlier, by the front door's text check (http/core/text.ts), with its own words.
      expect(answer.body.message, malformed).toMatch(/^invalid event id|contains a NUL/)
      expect(answer.body.details, malformed).toEqual([
        { path: "eventIdOrSlug", message: expect.stringMatching(/^invalid event id|contains a NUL/) }
      ])
    }
  })
})
