/**
 * The backend's request path under hostile input (issue 27, items 1 to 4 and 9), over real HTTP
 * against the fixture's Postgres:
 * - text Postgres cannot hold is a 400 before any query, and bad input never opens the breaker;
 * - a malformed or deeply nested body is a 400 on every route that reads one (taken from the
 *   published document, so a later route is covered without touching this);
 * - spellings of one request share one cache entry, and the cache holds at most its bytes;
 * - `__proto__` and undecodable path segments are 400s with the indexer's codes;
 * - warm answers outlive a new indexed head, hot ones do not.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startHarness, type Harness } from "./support/harness.js"

const CACHE_BYTES = 512 * 1024
const USER = "0xa0ee7a142d267c1f36714e4a8f75612f20a79720"

let h: Harness

beforeAll(async () => {
  // A breaker that two outages in a row open for a minute: a bad request counted as one would show.
  h = await startHarness({ breakerThreshold: 2, breakerOpenForMs: 60_000, cacheBytes: CACHE_BYTES })
}, 120_000)

afterAll(async () => {
  await h?.close()
})

const waitFor = async (check: () => Promise<boolean>, ms = 30_000) => {
  const until = Date.now() + ms
  while (Date.now() < until) {
    if (await check()) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error("condition not reached")
}

/**
 * Moves the indexed head as the indexer's commit does (the checkpoint row, which the backend
 * re-reads every few seconds, and its NOTIFY) and waits until a cache lookup is under it.
 */
const moveHead = async (block: number, hash: string) => {
  await h.sql("update indexer_checkpoint set block_number = $1, block_hash = $2 where chain_id = 130", [block, hash])
  await h.sql("select pg_notify('predix_indexed', $1)", [JSON.stringify({ chainId: 130, block, hash, reverted: false })])
  await waitFor(async () => {
    await h.get("/api/markets/2")
    // The cache's head names its generation too (a notification without one is the active one's: public).
    return h.cache!.heldHead === `${block}:${hash}@public`
  })
}

const checkpoint = async () =>
  (
    await h.sql<{ block: string; hash: string }>(
      "select block_number::text as block, block_hash as hash from indexer_checkpoint where chain_id = 130"
    )
  )[0]!

describe("bad input and the breaker (item 1)", () => {
  it("text Postgres cannot hold is VALIDATION_FAILED before any query; 20 such requests leave every normal read a 200", async () => {
    const hostile = [
      "/api/markets?q=%00",
      "/api/markets?q=a%00b",
      "/api/markets?q=%ED%A0%80",
      "/api/markets?q=%ff",
      "/api/markets?q=%C3",
      "/api/events?q=%00"
    ]
    for (let i = 0; i < 20; i++) {
      const path = hostile[i % hostile.length]!
      const answer = await h.raw(path)
      const body = (await answer.json()) as { code?: string }
      if (path.startsWith("/api/events")) expect(answer.status).toBe(400)
      else expect([answer.status, body.code], path).toEqual([400, "VALIDATION_FAILED"])
    }
    for (let i = 0; i < 30; i++) {
      const answer = await h.get(i % 2 === 0 ? `/api/markets?limit=${1 + (i % 20)}` : "/api/markets/1/trades")
      expect(answer.status).toBe(200)
    }
  })

  it("a NUL in a JSON body is VALIDATION_FAILED too", async () => {
    const answer = await h.call("POST", "/api/markets/1/pricing/quote", { body: { tradeType: "BUY_YES", amountIn: "1\u0000" } })
    expect(answer.status).toBe(400)
    expect(answer.body.code).toBe("VALIDATION_FAILED")
  })
})

/** Every operation that reads a body (documents a request body), from the published document, with its path parameters filled. */
const bodyOperations = () =>
  Object.entries(h.document.paths).flatMap(([template, item]) =>
    Object.entries(item as Record<string, { requestBody?: unknown }>)
      .filter(([method, operation]) => ["post", "put", "patch"].includes(method) && operation.requestBody !== undefined)
      .map(([method]) => method)
      .map((method) => ({
        method: method.toUpperCase(),
        path: template.replace(/\{([^}]+)\}/g, (_, name: string) => (name === "address" ? USER : "1"))
      }))
  )

describe("malformed bodies (item 2)", () => {
  it("20,000 nested brackets, broken JSON and NUL text are VALIDATION_FAILED on every route with a body", async () => {
    const operations = bodyOperations()
    // quote, both batches, auth verify, settings, role, comments, the passkey and ecdsa routes, bundler, sponsor
    expect(operations.length).toBeGreaterThanOrEqual(11)
    expect(operations.map((o) => o.path)).toContain("/api/auth/verify")
    const deep = `${"[".repeat(20_000)}${"]".repeat(20_000)}`
    const deepObject = `${'{"a":'.repeat(5_000)}1${"}".repeat(5_000)}`
    for (const { method, path } of operations) {
      for (const body of [deep, deepObject, '{"a": [1, 2', '{"\\u0000": 1}']) {
        const answer = await h.call(method, path, { body })
        expect([answer.status, answer.body.code], `${method} ${path} ${body.slice(0, 20)}`).toEqual([400, "VALIDATION_FAILED"])
      }
    }
  }, 120_000)
})

describe("the answer cache (item 3)", () => {
  it("spellings of one request are one entry: one miss, then hits", async () => {
    // Candles are warm (60 s): no entry expires while the test runs, however loaded the machine.
    const spellings = [
      "/api/markets/1/candles?limit=7",
      "/api/markets/1/candles?%6Cimit=7",
      "/api/markets/1/candles?limit=%37",
      "/api/markets/1/candles?limit=7&offset=0",
      "/api/markets/1/candles?offset=0&limit=7",
      "/api/markets/1/candles?timeframe=1h&limit=7",
      "/api/markets/1/candles?limit=7&timeframe=%31h&offset=0",
      "/api/%6Darkets/%31/candles?limit=7",
      "/api/markets/1/candles?limit=7&",
      "/api/markets/1/candles?&&limit=7"
    ]
    // The first spelling computes the answer (or finds it from an earlier test): the others are hits.
    await h.get(spellings[0]!)
    const size = h.cache!.size
    for (const path of spellings.slice(1)) {
      const answer = await h.raw(path)
      expect([answer.status, answer.headers.get("x-cache")], path).toEqual([200, "HIT"])
    }
    expect(h.cache!.size).toBe(size)
    // An address in another case is the same request too.
    await h.get(`/api/users/${USER}/profile`)
    expect((await h.get(`/api/users/${USER.toUpperCase().replace("0X", "0x")}/profile`)).headers.get("x-cache")).toBe("HIT")
  })

  it("holds at most its bytes however many distinct requests arrive", async () => {
    for (let i = 0; i < 300; i++) {
      const answer = await h.get(`/api/markets?limit=${1 + (i % 100)}&offset=${i}`)
      expect(answer.status).toBe(200)
      expect(h.cache!.bytes).toBeLessThanOrEqual(CACHE_BYTES)
    }
    expect(h.cache!.size).toBeGreaterThan(0)
  })
})

describe("F7 leftovers (item 4)", () => {
  it("__proto__ is an unknown parameter like any other", async () => {
    for (const path of ["/api/markets?__proto__=1", "/api/markets?limit=1&__proto__=x", "/api/leaderboard?constructor=1"]) {
      const answer = await h.get(path)
      expect([answer.status, answer.body.code], path).toEqual([400, "VALIDATION_FAILED"])
    }
  })

  it("undecodable path segments are the parameter's 400, as on the indexer", async () => {
    const cases = [
      ["/api/markets/%zz", "INVALID_MARKET_ID", "/api/markets/%zz", "InvalidMarketId"],
      ["/api/markets/%", "INVALID_MARKET_ID", "/api/markets/%", "InvalidMarketId"],
      ["/api/trading/%zz/portfolio", "INVALID_ADDRESS", "/api/portfolio/%zz", "InvalidAddress"]
    ] as const
    for (const [path, code, indexerPath, name] of cases) {
      const answer = await h.get(path)
      expect([answer.status, answer.body.code], path).toEqual([400, code])
      const indexer = await fetch(`${h.indexerUrl}${indexerPath}`)
      expect([indexer.status, ((await indexer.json()) as { error?: string }).error], indexerPath).toEqual([400, name])
    }
  })

  it("a percent-encoded sign-in path is the sign-in path for the cross-site check too", async () => {
    const answer = await h.raw("/api/auth/%76erify", {
      method: "POST",
      body: JSON.stringify({ address: USER, signature: "0x" }),
      headers: { "content-type": "application/json", origin: "https://evil.example" }
    })
    expect([answer.status, ((await answer.json()) as { code?: string }).code]).toEqual([403, "FORBIDDEN"])
  })
})

describe("the warm tier (item 9)", () => {
  it("a warm answer outlives a new indexed head; a hot one does not; a reorg drops both", async () => {
    const start = await checkpoint()
    const block = Number(start.block)
    try {
      await h.get("/api/leaderboard")
      expect((await h.get("/api/leaderboard")).headers.get("x-cache-tier")).toBe("warm")
      await moveHead(block + 1, `0x${"a1".repeat(32)}`)
      await h.get("/api/markets/3")
      await moveHead(block + 2, `0x${"a2".repeat(32)}`)
      const warm = await h.get("/api/leaderboard")
      expect([warm.headers.get("x-cache"), warm.headers.get("x-cache-tier")]).toEqual(["HIT", "warm"])
      expect((await h.get("/api/markets/3")).headers.get("x-cache")).toBe("MISS")
      // The same number with another hash is a reorg: warm answers may reflect the dropped block.
      await moveHead(block + 2, `0x${"b2".repeat(32)}`)
      expect((await h.get("/api/leaderboard")).headers.get("x-cache")).toBe("MISS")
    } finally {
      await moveHead(block, start.hash)
    }
  })
})
