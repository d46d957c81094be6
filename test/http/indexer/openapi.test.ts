/**
 * The published OpenAPI document: it lists every path of the spec's indexer table, documents
 * every parameter's allowed values and every response's body and freshness headers, and only the
 * error bodies the server sends. Also the docs page, and the freshness header following the
 * pipeline's NOTIFY.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { conformance, startHarness, type Harness } from "./support/harness.js"

let api: Harness
beforeAll(async () => {
  api = await startHarness()
}, 120_000)
afterAll(async () => {
  await api?.close()
})

/** The spec's "Indexer endpoints (public, GET)" table, path parameters written `{}`. */
const SPEC_PATHS = [
  "/api/markets",
  "/api/markets/{}",
  "/api/markets/{}/trades",
  "/api/markets/{}/prices",
  "/api/markets/{}/positions",
  "/api/markets/{}/orderbook",
  "/api/markets/{}/liquidity",
  "/api/markets/{}/amm-state",
  "/api/markets/{}/price-delta",
  "/api/markets/{}/volume-window",
  "/api/markets/{}/candles",
  "/api/events",
  "/api/events/{}",
  "/api/portfolio/{}",
  "/api/portfolio/{}/history",
  "/api/portfolio/{}/pnl",
  "/api/user-stats",
  "/api/user-stats/{}",
  "/api/users/{}/accuracy",
  "/api/users/{}/resolved-positions",
  "/api/users/{}/maker-fills",
  "/api/exchange/orders",
  "/api/exchange/orders/{}",
  "/api/exchange/matches",
  "/api/trades/{}/breakdown",
  "/api/liquidity/positions/{}",
  "/api/liquidity/events",
  "/api/oracles/approved",
  "/api/oracles/manual/{}/reports",
  "/api/oracles/pricefeed/{}/markets",
  "/api/admin/role-changes",
  "/api/admin/pauses",
  "/api/admin/diamond-cuts",
  "/api/admin/fee-changes",
  "/api/admin/hook-proxy-upgrades",
  "/api/stats",
  "/api/health"
]

type Operation = { parameters: Array<any>; responses: Record<string, any>; summary?: string }

const operations = (): Array<[string, Operation]> =>
  Object.entries(api.document.paths).map(([path, item]) => [path, (item as Record<string, Operation>)["get"]!])

describe("the OpenAPI document at /api/openapi.json", () => {
  it("is OpenAPI 3.1 and lists exactly the spec's indexer paths, all GET", () => {
    expect((api.document as any).openapi).toBe("3.1.0")
    expect((api.document as any).info).toMatchObject({ title: "Indexer API", version: "1.0.0" })
    const documented = Object.keys(api.document.paths).map((p) => p.replace(/\{[^}]+\}/g, "{}"))
    expect([...documented].sort()).toEqual([...SPEC_PATHS].sort())
    for (const [path, item] of Object.entries(api.document.paths)) expect(Object.keys(item as object), path).toEqual(["get"])
  })

  it("documents every parameter's allowed values (an enum, a pattern, an integer's bounds or a boolean), and every operation", () => {
    for (const [path, operation] of operations()) {
      expect(operation.summary, path).toBeTruthy()
      for (const parameter of operation.parameters) {
        const schema = parameter.schema
        const constrained =
          schema.enum !== undefined ||
          schema.pattern !== undefined ||
          schema.$ref !== undefined ||
          (schema.type === "integer" && schema.minimum !== undefined && schema.maximum !== undefined) ||
          schema.type === "boolean"
        expect(constrained, `${path} ${parameter.name}`).toBe(true)
        expect(parameter.description ?? schema.description, `${path} ${parameter.name}`).toBeTruthy()
      }
    }
    const markets = operations().find(([path]) => path === "/api/markets")![1]
    const sort = markets.parameters.find((p) => p.name === "sort")
    expect(sort.schema.enum).toContain("volume")
    const candles = operations().find(([path]) => path.endsWith("/candles"))![1]
    expect(candles.parameters.find((p) => p.name === "timeframe").schema.enum).toEqual(["1m", "5m", "15m", "1h", "4h", "1d", "1w"])
    const leaderboard = operations().find(([path]) => path === "/api/user-stats")![1]
    expect(leaderboard.parameters.find((p) => p.name === "sort").schema.enum).toEqual(["pnl", "volume", "accuracy"])
  })

  it("documents a JSON body and the freshness headers for every response, and no decode-error body", () => {
    const text = JSON.stringify(api.document)
    expect(text).not.toContain("HttpApiDecodeError")
    for (const [path, operation] of operations()) {
      expect(operation.responses["200"], path).toBeDefined()
      expect(operation.responses["400"], path).toBeDefined()
      expect(operation.responses["503"], path).toBeDefined()
      for (const [status, response] of Object.entries(operation.responses)) {
        expect(response.content?.["application/json"]?.schema, `${path} ${status}`).toBeDefined()
        expect(Object.keys(response.headers ?? {}), `${path} ${status}`).toEqual([
          "X-Indexed-Block",
          "X-Indexed-Block-Hash",
          "X-Indexed-Generation",
          "X-Indexed-Status",
          "X-Indexed-Lag"
        ])
      }
    }
    const market = operations().find(([path]) => path === "/api/markets/{id}")![1]
    expect(JSON.stringify(market.responses["404"])).toContain("MarketNotFound")
    expect(JSON.stringify(market.responses["400"])).toContain("InvalidMarketId")
  })

  it("uses JSON integers only for times, block numbers, counts, ticks and the like, never for a uint256 or an amount", () => {
    const schemas = (api.document as any).components.schemas as Record<string, any>
    const resolve = (schema: any): any => (schema?.$ref ? resolve(schemas[schema.$ref.split("/").pop()]) : schema)
    const isInteger = (schema: any): boolean => {
      const s = resolve(schema)
      return schema?.type === "integer" || s?.type === "integer" || (Array.isArray(s?.anyOf) && s.anyOf.some(isInteger))
    }
    const integers = new Set<string>()
    const walk = (schema: any, seen: Set<any>) => {
      const s = resolve(schema)
      if (s === undefined || seen.has(s)) return
      seen.add(s)
      for (const [name, property] of Object.entries<any>(s.properties ?? {})) {
        if (isInteger(property)) integers.add(name)
        walk(property, seen)
      }
      for (const key of ["items", "additionalProperties"]) if (typeof s[key] === "object") walk(s[key], seen)
      for (const key of ["anyOf", "oneOf", "allOf"]) for (const alternative of s[key] ?? []) walk(alternative, seen)
    }
    for (const [, operation] of operations()) walk(operation.responses["200"].content["application/json"].schema, new Set())
    expect([...integers].sort()).toEqual(
      [
        // unix seconds
        "approvedAt",
        "baselineAt",
        "cancelledAt",
        "closedAt",
        "createdAt",
        "endTime",
        "filledAt",
        "finalizesAt",
        "lastTradeAt",
        "latestAt",
        "placedAt",
        "readyAt",
        "registeredAt",
        "reportedAt",
        "resolvedAt",
        "snapshotAt",
        "timestamp",
        "updatedAt",
        "windowEnd",
        "windowStart",
        // block numbers and log positions
        "approvedBlock",
        "blockNumber",
        "createdBlock",
        "headBlock",
        "lagBlocks",
        "latestIndexedBlock",
        "logIndex",
        "placedBlock",
        "registeredBlock",
        "updatedBlock",
        // counts, pagination, ranks
        "correctPositions",
        "count",
        "limit",
        "marketCount",
        "marketsTraded",
        "matchCount",
        "offset",
        "openPositions",
        "orders",
        "positions",
        "rank",
        "resolvedPositions",
        "tradeCount",
        // protocol totals (counts)
        "activeMarkets",
        "refundMarkets",
        "resolvedMarkets",
        "totalMarkets",
        "totalTrades",
        "totalUsers",
        // small protocol integers (int24 ticks, uint24 fee), chain id, hours, basis points
        "chainId",
        "fee",
        "percentBps",
        "tick",
        "tickLower",
        "tickSpacing",
        "tickUpper",
        "windowHours"
      ].sort()
    )
  })

  it("has a validator that catches what the document forbids (the checks are not vacuous)", async () => {
    const answer = await api.get("/api/markets/1")
    const pathname = "/api/markets/1"
    expect(conformance(api.document, pathname, answer)).toEqual([])
    const tamper = (change: (data: any) => void) => {
      const body = structuredClone(answer.body)
      change(body.data)
      return conformance(api.document, pathname, { ...answer, body })
    }
    expect(tamper((d) => (d.volume = 1659.213116)).join()).toMatch(/volume: expected string/)
    expect(tamper((d) => (d.volume = "1659.21")).join()).toMatch(/volume/)
    expect(tamper((d) => (d.creator = d.creator.toUpperCase())).join()).toMatch(/creator/)
    expect(tamper((d) => delete d.tradeCount).join()).toMatch(/missing required property tradeCount/)
    expect(tamper((d) => (d.extra = 1)).join()).toMatch(/extra/)
    expect(conformance(api.document, pathname, { ...answer, status: 418 }).join()).toMatch(/418 is not documented/)
  })
})

describe("the docs page at /api/docs", () => {
  it("serves a browsable HTML page carrying the document", async () => {
    const response = await api.raw("/api/docs")
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toMatch(/text\/html/)
    const html = await response.text()
    expect(html).toContain("Indexer API")
    expect(html).toContain("/api/markets/{id}/candles")
    expect(response.headers.get("x-indexed-block")).toBe(String(api.headBlock))
  })
})

describe("freshness", () => {
  it("follows the pipeline's predix_indexed NOTIFY (including a reorg back to an ancestor)", async () => {
    const notify = (block: number, hash: string, reverted = false) =>
      api.sql(`select pg_notify('predix_indexed', $1)`, [JSON.stringify({ chainId: 130, block, hash, reverted })])
    const waitFor = async (block: string) => {
      for (let i = 0; i < 100; i++) {
        const answer = await api.raw("/api/stats")
        await answer.arrayBuffer()
        if (answer.headers.get("x-indexed-block") === block) return answer
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      throw new Error(`X-Indexed-Block never became ${block}`)
    }
    const ancestor = `0x${"a".repeat(64)}`
    await notify(api.headBlock - 3, ancestor, true)
    const reverted = await waitFor(String(api.headBlock - 3))
    expect(reverted.headers.get("x-indexed-block-hash")).toBe(ancestor)
    // Another chain's notifications are not this indexer's.
    await api.sql(`select pg_notify('predix_indexed', $1)`, [JSON.stringify({ chainId: 1, block: 5, hash: ancestor, reverted: false })])
    const [{ hash }] = (await api.sql(`select block_hash as hash from indexer_checkpoint`)) as [{ hash: string }]
    await notify(api.headBlock, hash)
    await waitFor(String(api.headBlock))
  })

  it("answers a cache hit (at the Node level) exactly as it answered the miss", async () => {
    const url = "/api/markets?sort=trades&limit=7&offset=1"
    const headersOf = (response: Response) =>
      Object.fromEntries([...response.headers].filter(([name]) => name !== "date" && name !== "connection" && name !== "keep-alive"))
    const miss = await api.raw(url)
    const missBody = await miss.text()
    const hit = await api.raw(url)
    const hitBody = await hit.text()
    expect(hit.status).toBe(miss.status)
    expect(hitBody).toBe(missBody)
    expect(headersOf(hit)).toEqual(headersOf(miss))
    expect(Object.keys(headersOf(hit)).sort()).toEqual([
      "access-control-allow-origin",
      "access-control-expose-headers",
      "content-length",
      "content-type",
      "x-indexed-block",
      "x-indexed-block-hash",
      "x-indexed-generation",
      "x-indexed-lag",
      "x-indexed-status"
    ])
  })

  it("serves answers from the per-head cache until the head moves, then reads the database again", async () => {
    const [{ hash }] = (await api.sql(`select block_hash as hash from indexer_checkpoint`)) as [{ hash: string }]
    const before = await api.get("/api/markets/1")
    const [{ question }] = (await api.sql(`select question from market where id = 1`)) as [{ question: string }]
    try {
      // A write the pipeline never makes without a NOTIFY: the cached answer stands.
      await api.sql(`update market set question = 'changed behind the cache' where id = 1`)
      expect((await api.get("/api/markets/1")).body).toEqual(before.body)
      expect((await api.get("/api/markets/1/price-delta")).status).toBe(200)
      // The next head (here: the same block announced again after a revert) empties it.
      await api.sql(`select pg_notify('predix_indexed', $1)`, [
        JSON.stringify({ chainId: 130, block: api.headBlock - 1, hash: `0x${"b".repeat(64)}`, reverted: true })
      ])
      for (let i = 0; i < 100 && (await api.raw("/api/stats")).headers.get("x-indexed-block") !== String(api.headBlock - 1); i++) {
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      expect((await api.get("/api/markets/1")).body.data.question).toBe("changed behind the cache")
    } finally {
      await api.sql(`update market set question = $1 where id = 1`, [question])
      await api.sql(`select pg_notify('predix_indexed', $1)`, [
        JSON.stringify({ chainId: 130, block: api.headBlock, hash, reverted: false })
      ])
      for (let i = 0; i < 100 && (await api.raw("/api/stats")).headers.get("x-indexed-block") !== String(api.headBlock); i++) {
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    }
    expect((await api.get("/api/markets/1")).body).toEqual(before.body)
  })
})
