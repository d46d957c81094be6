/**
 * Pricing on the indexed fixture: the view agrees with the indexer's book and pool, quotes add
 * up and follow the router's rules, every refusal is a typed error, batches are bounded.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startHarness, type Harness } from "./support/harness.js"

let h: Harness
let live: string
const indexer = async (path: string) => (await (await fetch(`${h.indexerUrl}${path}`)).json()) as any
const quote = (id: string, body: unknown) => h.call("POST", `/api/markets/${id}/pricing/quote`, { body })

beforeAll(async () => {
  h = await startHarness()
  const active = (await h.get("/api/markets?status=active&sortBy=volume&includeEventChildren=true&limit=100")).body.data
  const withPool = await h.sql<{ market_id: string }>("select market_id from amm_pool where initialized and liquidity > 0")
  const pooled = new Set(withPool.map((r) => r.market_id))
  live = active.find((m: any) => pooled.has(m.id)).id
})

afterAll(async () => {
  await h?.close()
})

describe("pricing view", () => {
  it("book bests and AMM spot are the indexer's", async () => {
    const view = (await h.get(`/api/markets/${live}/pricing/view`)).body.data
    const book = (await indexer(`/api/markets/${live}/orderbook`)).data
    const amm = (await indexer(`/api/markets/${live}/amm-state`)).data
    expect([view.bestBidYes, view.bestAskYes, view.bestBidNo, view.bestAskNo]).toEqual([
      book.bestBidYes,
      book.bestAskYes,
      book.bestBidNo,
      book.bestAskNo
    ])
    expect(view.amm.yesPrice).toBe(amm.yesPrice)
    expect(view.impliedProbability).toBe(amm.yesPrice)
    expect(Number(view.amm.buyYes)).toBeGreaterThanOrEqual(Number(view.amm.yesPrice))
    expect(Number(view.amm.sellYes)).toBeLessThanOrEqual(Number(view.amm.yesPrice))
    expect(view.tradable).toBe(true)
    // The fixture pauses the exchange once and unpauses it: the book fills again at the head.
    expect(view.clobPaused).toBe(false)
    expect(view.indexedAt.number).toBeGreaterThan(0)
  })
})

describe("quote", () => {
  it("every trade type adds up: clob + amm = out, minAmountOut is out less slippage", async () => {
    for (const tradeType of ["BUY_YES", "SELL_YES", "BUY_NO", "SELL_NO"]) {
      const answer = await quote(live, { tradeType, amountIn: "25", slippageBps: 100 })
      expect(answer.status, JSON.stringify(answer.body)).toBe(200)
      const q = answer.body.data
      expect(BigInt(q.clobFilled.raw) + BigInt(q.ammFilled.raw)).toBe(BigInt(q.amountOut.raw))
      expect(BigInt(q.minAmountOut.raw)).toBe((BigInt(q.amountOut.raw) * 9_900n) / 10_000n)
      expect(q.amountIn.unit).toBe(tradeType.startsWith("BUY") ? "USDC" : tradeType.slice(5))
      expect(q.amountOut.unit).toBe(tradeType.startsWith("BUY") ? tradeType.slice(4) : "USDC")
      expect(q.route.length).toBeGreaterThan(0)
      expect(Number(q.averagePrice)).toBeGreaterThan(0)
      expect(Number(q.averagePrice)).toBeLessThanOrEqual(1)
    }
  })

  it("is cached per body and says so", async () => {
    const body = { tradeType: "BUY_YES", amountIn: "3.5" }
    const first = await quote(live, body)
    const second = await quote(live, body)
    expect(first.headers.get("x-cache")).toBe("MISS")
    expect(second.headers.get("x-cache")).toBe("HIT")
    expect(second.body.data).toEqual(first.body.data)
    expect((await quote(live, { ...body, amountIn: "3.6" })).headers.get("x-cache")).toBe("MISS")
  })

  it("resolved and refunding markets are MARKET_PAUSED, never a zero quote", async () => {
    const [resolved] = await h.sql<{ id: string }>("select id from market where is_resolved order by id limit 1")
    const answer = await quote(resolved!.id, { tradeType: "BUY_YES", amountIn: "10" })
    expect(answer.status).toBe(400)
    expect(answer.body.code).toBe("MARKET_PAUSED")
    const [refunding] = await h.sql<{ id: string }>("select id from market where refund_mode and not is_resolved order by id limit 1")
    if (refunding !== undefined)
      expect((await quote(refunding.id, { tradeType: "SELL_NO", amountIn: "10" })).body.code).toBe("MARKET_PAUSED")
  })

  it("bad bodies are VALIDATION_FAILED with the field, and change nothing", async () => {
    const cases: Array<[unknown, string]> = [
      [{ tradeType: "BUY_YES", amountIn: "10", colour: "red" }, "colour"],
      [{ tradeType: "BUY_YES", amountIn: 10 }, "amountIn"],
      [{ tradeType: "BUY", amountIn: "10" }, "tradeType"],
      [{ tradeType: "BUY_YES", amountIn: "1.1234567" }, "amountIn"],
      [{ tradeType: "BUY_YES", amountIn: "0.0001" }, "amountIn"],
      [{ tradeType: "BUY_YES", amountIn: "10", maxFills: 21 }, "maxFills"],
      [{ amountIn: "10" }, "tradeType"]
    ]
    for (const [body, path] of cases) {
      const answer = await quote(live, body)
      expect(answer.status, JSON.stringify(body)).toBe(400)
      expect(answer.body.code).toBe("VALIDATION_FAILED")
      expect(answer.body.details.map((d: any) => d.path)).toContain(path)
    }
    const notJson = await quote(live, "{not json")
    expect(notJson.body.code).toBe("VALIDATION_FAILED")
    expect((await quote("0xabc", { tradeType: "BUY_YES", amountIn: "1" })).body.code).toBe("INVALID_MARKET_ID")
    expect((await quote("999999", { tradeType: "BUY_YES", amountIn: "1" })).body.code).toBe("MARKET_NOT_FOUND")
  })

  it("a sell beyond the wallet's tokens is INSUFFICIENT_BALANCE", async () => {
    const nobody = `0x${"0".repeat(38)}42`
    const answer = await quote(live, { tradeType: "SELL_YES", amountIn: "5", address: nobody })
    expect(answer.body.code).toBe("INSUFFICIENT_BALANCE")
    expect((await quote(live, { tradeType: "SELL_YES", amountIn: "5", address: "0x42" })).body.code).toBe("INVALID_ADDRESS")
  })

  it("a buy with address needs the chain's USDC balance: without a chain RPC endpoint, VALIDATION_FAILED on address, never a guess", async () => {
    const answer = await quote(live, { tradeType: "BUY_YES", amountIn: "5", address: `0x${"0".repeat(38)}42` })
    expect(answer.status).toBe(400)
    expect(answer.body.code).toBe("VALIDATION_FAILED")
    expect(answer.body.details).toEqual([{ path: "address", message: expect.stringMatching(/no chain RPC endpoint/) }])
  })
})

describe("batches", () => {
  it("price views: 1 to 50 ids in the order asked; 51 is VALIDATION_FAILED", async () => {
    const answer = await h.call("POST", "/api/markets-batch/price-views", { body: { marketIds: [live, "1"] } })
    expect(answer.body.data.map((v: any) => BigInt(v.marketId).toString())).toEqual([live, "1"])
    const tooMany = await h.call("POST", "/api/markets-batch/price-views", { body: { marketIds: Array.from({ length: 51 }, () => "1") } })
    expect(tooMany.status).toBe(400)
    expect(tooMany.body.code).toBe("VALIDATION_FAILED")
    expect((await h.call("POST", "/api/markets-batch/price-views", { body: { marketIds: [] } })).body.code).toBe("VALIDATION_FAILED")
    expect((await h.call("POST", "/api/markets-batch/price-views", { body: { marketIds: ["999999"] } })).body.code).toBe("MARKET_NOT_FOUND")
  })

  it("candles of several markets", async () => {
    const answer = await h.call("POST", "/api/markets-batch/candles", { body: { marketIds: [live, "1"], timeframe: "1d", limit: 5 } })
    expect(answer.status).toBe(200)
    expect(answer.body.data[0].timeframe).toBe("1d")
    const theirs = await indexer(`/api/markets/${live}/candles?timeframe=1d&limit=5`)
    expect(answer.body.data[0].candles.map((c: any) => c.close)).toEqual(theirs.data.map((c: any) => c.close))
  })
})
