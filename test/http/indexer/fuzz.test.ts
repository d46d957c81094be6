/**
 * Property: whatever a client sends to any endpoint (random and hostile strings, huge and
 * negative numbers, unicode, SQL metacharacters, unknown or repeated parameters), the indexer
 * never answers 500; an error is always `{ error: PascalCase, message }` with a documented status,
 * and every answer, good or bad, conforms to the published OpenAPI document.
 *
 * The operations and their parameters are read from that document, so an endpoint added later is
 * fuzzed without touching this file.
 */
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { conformance, startHarness, type Harness } from "./support/harness.js"

let api: Harness
beforeAll(async () => {
  api = await startHarness()
}, 120_000)
afterAll(async () => {
  await api?.close()
})

const USER = "0xa0ee7a142d267c1f36714e4a8f75612f20a79720"

/** Values a real client would send, per parameter name (so the fuzz also reaches the database). */
const VALID: Record<string, ReadonlyArray<string>> = {
  id: ["1", "15", "28", "29", `0x${"0".repeat(62)}0f`],
  marketId: ["1", "11", "15", `0x${"0".repeat(63)}b`],
  eventId: ["1", "2", "3"],
  address: [USER, "0x000000000000000000000000000000000000dead"],
  owner: [USER],
  trader: [USER],
  maker: [USER],
  taker: [USER],
  provider: [USER],
  account: [USER],
  oracleContract: ["0xa51c1fc2f0d1a1b8494ed1fe312d7c3a78ed91c0", "0x9a676e781a523b5d0c0e43731313a708cb607508"],
  orderId: [`0x${"ab".repeat(32)}`],
  txHash: [`0x${"0".repeat(64)}`],
  role: [`0x${"0".repeat(64)}`],
  limit: ["1", "20", "100"],
  offset: ["0", "3", "1000"],
  from: ["0", "1767225600"],
  to: ["1767300000", "253402300799"],
  window: ["1", "24", "720"],
  category: ["crypto", "sports", "nothing-here"]
}

const SQL_AND_FRIENDS = [
  "'",
  '"',
  "';--",
  "' OR '1'='1",
  "1; DROP TABLE market; --",
  "1 OR 1=1",
  "$1",
  "1::text",
  "\\x00",
  "%",
  "_",
  "*",
  "NULL",
  "null",
  "undefined",
  "true",
  "[]",
  "{}",
  "__proto__",
  "constructor",
  "../../etc/passwd",
  "<script>alert(1)</script>"
]

const NUMBERS = [
  "",
  " ",
  "0",
  "-0",
  "-1",
  "00",
  "01",
  "1.0",
  "1e3",
  "1E400",
  "NaN",
  "Infinity",
  "-Infinity",
  "0x10",
  "0b11",
  "9007199254740993",
  "99999999999999999999999999999999999999999999999999999999999999999999999999999999",
  `0x${"f".repeat(64)}`,
  `0x${"F".repeat(40)}`,
  `0X${"0".repeat(63)}1`,
  `0x${"0".repeat(64)}`,
  "+5",
  " 5",
  "5 ",
  "５"
]

const UNICODE = ["😀", "Ω", "\u202e", "\u0000", "\uffff", "ä", "𝟙", "日本", "\ud800", "\t\n"]

const hostile: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...SQL_AND_FRIENDS, ...NUMBERS, ...UNICODE),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.bigInt({ min: -(1n << 300n), max: 1n << 300n }).map(String),
  fc.integer().map(String),
  fc.double().map(String),
  fc.constantFrom("a".repeat(3000), "9".repeat(500))
)

type Parameter = {
  readonly name: string
  readonly in: "path" | "query"
  readonly schema: { readonly enum?: ReadonlyArray<string>; readonly type?: string }
}
type Operation = { readonly template: string; readonly parameters: ReadonlyArray<Parameter> }

const operationsOf = (): Array<Operation> =>
  Object.entries(api.document.paths).map(([template, item]) => ({
    template,
    parameters: ((item as Record<string, { parameters?: Array<Parameter> }>)["get"]?.parameters ?? []) as ReadonlyArray<Parameter>
  }))

const valueFor = (parameter: Parameter): fc.Arbitrary<string> => {
  const valid =
    parameter.schema.enum ?? (parameter.schema.type === "boolean" ? ["true", "false"] : undefined) ?? VALID[parameter.name] ?? []
  return valid.length === 0 ? hostile : fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...valid) }, { weight: 3, arbitrary: hostile })
}

/** encodeURIComponent, except that a lone surrogate (which it refuses) goes out as invalid UTF-8 bytes. */
const encode = (value: string): string => {
  try {
    return encodeURIComponent(value)
  } catch {
    return [...value].map((c) => (/[\ud800-\udfff]/.test(c) ? "%ED%A0%80" : encodeURIComponent(c))).join("")
  }
}

/** One request to `operation`: its path filled, some of its query parameters, maybe an unknown or repeated one. */
const requestTo = (operation: Operation): fc.Arbitrary<string> => {
  const pathParams = operation.parameters.filter((p) => p.in === "path")
  const queryParams = operation.parameters.filter((p) => p.in === "query")
  return fc
    .record({
      path: fc.tuple(...pathParams.map(valueFor)),
      query: fc.subarray(queryParams).chain((chosen) => fc.tuple(...chosen.map((p) => valueFor(p).map((v) => [p.name, v] as const)))),
      extra: fc.option(
        fc.tuple(fc.oneof(fc.constantFrom(...queryParams.map((p) => p.name), "x", "limit"), fc.string({ maxLength: 8 })), hostile),
        { freq: 4 }
      )
    })
    .map(({ path, query, extra }) => {
      let i = 0
      const pathname = operation.template.replace(/\{[^}]+\}/g, () => encode(path[i++] ?? ""))
      const pairs = [...query, ...(extra === null ? [] : [extra])]
      const search = pairs.map(([k, v]) => `${encode(k)}=${encode(v)}`).join("&")
      return search === "" ? pathname : `${pathname}?${search}`
    })
}

/** Fetches `url` once and checks the property; the answer's status and the problems. */
const checked = async (url: string): Promise<{ status: number; problems: Array<string> }> => {
  const response = await api.raw(url)
  const text = await response.text()
  let body: any
  try {
    body = JSON.parse(text)
  } catch {
    return { status: response.status, problems: [`${url}: ${response.status} with a body that is not JSON: ${text.slice(0, 120)}`] }
  }
  const problems: Array<string> = []
  if (response.status >= 500) problems.push(`${url}: answered ${response.status} ${text.slice(0, 200)}`)
  if (response.status >= 400) {
    const keys = Object.keys(body ?? {})
      .sort()
      .join(",")
    if (keys !== "error,message" || !/^[A-Z][A-Za-z0-9]*$/.test(body.error) || typeof body.message !== "string" || body.message === "") {
      problems.push(`${url}: error body not {error, message}: ${text.slice(0, 200)}`)
    }
  }
  const pathname = new URL(url, api.url).pathname
  problems.push(
    ...conformance(api.document, pathname, { status: response.status, body, headers: response.headers }).map((p) => `${url}: ${p}`)
  )
  return { status: response.status, problems }
}

/** Fetches `url` and checks the property; returns the problems. */
const check = async (url: string): Promise<Array<string>> => (await checked(url)).problems

describe("fuzzing every endpoint's parameters", () => {
  it("never answers 500, always the error shape, always the published document", async () => {
    const operations = operationsOf()
    expect(operations.length).toBe(37)
    const statuses = new Map<number, number>()
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...operations).chain((operation) => requestTo(operation)),
        async (url) => {
          // One request per case: the status counted is the answer checked.
          const { status, problems } = await checked(url)
          statuses.set(status, (statuses.get(status) ?? 0) + 1)
          expect(problems).toEqual([])
        }
      ),
      // A fixed seed keeps CI reproducible; FUZZ_SEED / FUZZ_RUNS explore further by hand.
      { numRuns: Number(process.env["FUZZ_RUNS"] ?? 1_200), seed: Number(process.env["FUZZ_SEED"] ?? 20261123), endOnFailure: true }
    )
    // The fuzz reached the database (200s) as well as every rejection path (400s, 404s).
    expect(statuses.get(200) ?? 0).toBeGreaterThan(100)
    expect(statuses.get(400) ?? 0).toBeGreaterThan(100)
    expect(statuses.get(404) ?? 0).toBeGreaterThan(10)
    expect([...statuses.keys()].every((s) => s === 200 || s === 400 || s === 404)).toBe(true)
  }, 300_000)

  it("answers hostile raw paths with NotFound or a 400, never a 500", async () => {
    const paths = [
      "/api/markets/%zz",
      "/api/markets/%00",
      "/api/markets/%2e%2e%2fstats",
      "/api/markets/1%2F2",
      "/api/markets//trades",
      "/api/markets/1/trades/extra",
      "/api/markets/1?limit=%zz",
      "/api/markets?limit=%ff%fe",
      "/api/markets?=&&=&limit",
      "/api/markets?limit",
      "/api/markets?limit=1&limit=2",
      "/api/markets?status[]=active",
      "/api/markets/",
      "/api/markets/1/trades/",
      "/API/MARKETS",
      "/api/Markets/1",
      "/api/markets/1?foo=bar",
      "/api/stats?limit=1",
      "/api/markets?status[0]=active",
      "/api/markets?__proto__=1",
      "/api/markets?constructor=x",
      `/api/markets/${"1".repeat(5_000)}`,
      "/api/portfolio/0x" + "ä".repeat(40),
      "/api",
      "/",
      "/api/openapi.json/../markets"
    ]
    for (const path of paths) expect(await check(path)).toEqual([])
    for (const method of ["POST", "PUT", "DELETE", "PATCH"]) {
      const response = await fetch(`${api.url}/api/markets`, { method, body: method === "DELETE" ? null : "{}" })
      expect(response.status, method).toBe(404)
      expect(await response.json()).toMatchObject({ error: "NotFound" })
    }
  })

  it("answers every market, address, order and transaction of the fixture within the document (no record fails to encode)", async () => {
    const markets = (await api.sql(`select id::text as id from market order by id`)).map((r) => r["id"] as string)
    const addresses = (
      await api.sql(
        `select address as a from user_stats union select holder from token_holder union select user_address from position
         union select owner from exchange_order union select owner from liquidity_position`
      )
    ).map((r) => r["a"] as string)
    const orders = (await api.sql(`select id from exchange_order`)).map((r) => r["id"] as string)
    const txs = (
      await api.sql(`select tx_hash as t from trade union select tx_hash from order_match union select tx_hash from taker_fill`)
    ).map((r) => r["t"] as string)
    const urls = [
      ...markets.flatMap((id) =>
        [
          "",
          "/trades?limit=100",
          "/prices?limit=100",
          "/positions?limit=100",
          "/orderbook",
          "/liquidity?limit=100",
          "/amm-state",
          "/price-delta?window=720",
          "/volume-window",
          "/candles?timeframe=1m&limit=100"
        ].map((suffix) => `/api/markets/${id}${suffix}`)
      ),
      ...addresses.flatMap((a) => [
        `/api/portfolio/${a}`,
        `/api/portfolio/${a}/history?timeframe=1h&limit=100`,
        `/api/portfolio/${a}/pnl`,
        `/api/user-stats/${a}`,
        `/api/users/${a}/accuracy`,
        `/api/users/${a}/resolved-positions?limit=100`,
        `/api/users/${a}/maker-fills?limit=100`,
        `/api/liquidity/positions/${a}?limit=100`
      ]),
      ...orders.map((id) => `/api/exchange/orders/${id}`),
      ...txs.map((tx) => `/api/trades/${tx}/breakdown`),
      ...["pnl", "volume", "accuracy"].map((sort) => `/api/user-stats?sort=${sort}&limit=100`),
      "/api/markets?limit=100",
      "/api/events?limit=100",
      "/api/exchange/orders?limit=100",
      "/api/exchange/matches?limit=100",
      "/api/liquidity/events?limit=100"
    ]
    expect(urls.length).toBeGreaterThan(700)
    const problems: Array<string> = []
    for (let i = 0; i < urls.length; i += 8) {
      const batch = await Promise.all(urls.slice(i, i + 8).map(check))
      problems.push(...batch.flat())
    }
    expect(problems).toEqual([])
  }, 300_000)
})
