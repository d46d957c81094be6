/**
 * Hostile request input (issue 22), on every path of the indexer API:
 *
 * - long and deeply nested or repeated inputs never cost more than short ones: no pattern with a
 *   quantifier ever scans more than `LONG` characters of a request while it is served (counted
 *   by watching every `RegExp` execution in this process, where the server runs; no clock);
 * - every spelling of one request (percent-encoding, parameter order, case, defaults) is one
 *   cache entry that answers without the database, and the cache never holds more than its bytes;
 * - absolute-form targets route and cache on their path (health stays uncached);
 * - `__proto__` is an unknown parameter, bad percent-encoding of a parameter is its 400, an empty
 *   parameter segment is a 404, an offset error states the range, and CORS headers are sent.
 */
import { Either, ParseResult } from "effect"
import fc from "fast-check"
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parseTarget } from "../../../http/core/request-target.js"
import { decodeRequest, matchRequest } from "../../../http/indexer/routes.js"
import { conformance, startHarness, type Harness } from "./support/harness.js"

const CACHE_BYTES = 256 * 1024

let api: Harness
beforeAll(async () => {
  api = await startHarness({ cacheBytes: CACHE_BYTES })
}, 120_000)
afterAll(async () => {
  await api?.close()
})

// ---------------------------------------------------------------------------------------------
// Counting what patterns scan

/** Longest input a pattern with a quantifier may scan; the longest valid parameter value is 66 characters. */
const LONG = 256

/** Whether a pattern has a quantifier (escapes, classes and group prefixes removed first). */
const hasQuantifier = (source: string): boolean => {
  let plain = ""
  let inClass = false
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!
    if (c === "\\") {
      i++
      plain += "x"
    } else if (inClass) {
      if (c === "]") inClass = false
    } else if (c === "[") {
      inClass = true
      plain += "x"
    } else if (c === "(" && source[i + 1] === "?") {
      // (?: (?= (?! (?<= (?<! (?<name>
      i +=
        source[i + 2] === "<" && source[i + 3] !== "=" && source[i + 3] !== "!" ? source.indexOf(">", i) - i : source[i + 2] === "<" ? 3 : 2
      plain += "("
    } else {
      plain += c
    }
  }
  return plain.includes("*") || plain.includes("+") || plain.includes("?") || plain.includes("{")
}

/**
 * Runs `work` while watching every pattern execution in this process (the server's included);
 * returns the patterns with a quantifier that scanned more than `LONG` characters, with the
 * longest input each saw.
 */
const longScans = async (work: () => Promise<void>): Promise<Map<string, number>> => {
  const exec = RegExp.prototype.exec
  const found = new Map<string, number>()
  RegExp.prototype.exec = function (this: RegExp, input: string) {
    const length = String(input).length
    if (length > LONG && !checking) {
      // Restored while classifying: hasQuantifier must not see itself.
      RegExp.prototype.exec = exec
      if (hasQuantifier(this.source)) found.set(this.source, Math.max(found.get(this.source) ?? 0, length))
      RegExp.prototype.exec = patched
    }
    return exec.call(this, input)
  } as typeof exec
  const patched = RegExp.prototype.exec
  try {
    await work()
  } finally {
    RegExp.prototype.exec = exec
  }
  return found
}

/** Set while the test's own checks run (the document's path patterns), which are not the server's work. */
let checking = false

const checked = <A>(check: () => A): A => {
  checking = true
  try {
    return check()
  } finally {
    checking = false
  }
}

describe("the pattern watch itself", () => {
  it("tells quantified patterns from plain ones", () => {
    expect(hasQuantifier("^(\\d+\\.?\\d*|\\.\\d+)[eE][+-]?\\d*$")).toBe(true)
    expect(hasQuantifier("^[1-9][0-9]{0,77}$")).toBe(true)
    expect(hasQuantifier("^0[xX]")).toBe(false)
    expect(hasQuantifier("[^\\u0021-\\u00ff]")).toBe(false)
    expect(hasQuantifier("\\+")).toBe(false)
    expect(hasQuantifier("(?:ab)")).toBe(false)
  })

  it("sees a backtracking pattern scan a long input", async () => {
    const scans = await longScans(async () => {
      ;/^(\d+\.?\d*|\.\d+)[eE][+-]?\d*$/.test("1".repeat(1_000))
      "x".repeat(1_000).replace(/\+/g, " ")
    })
    expect([...scans.keys()]).toEqual(["^(\\d+\\.?\\d*|\\.\\d+)[eE][+-]?\\d*$"])
  })
})

// ---------------------------------------------------------------------------------------------
// Long, nested and repeated inputs

/** Raw values of about `n` characters that have broken parsers elsewhere: digits, near-numbers, nesting, escapes. */
const longValue = (n: number): fc.Arbitrary<string> =>
  fc.constantFrom(
    "1".repeat(n),
    `${"1".repeat(n)}x`,
    `${"9".repeat(n)}e5`,
    `1e${"1".repeat(n)}`,
    "1.".repeat(n / 2),
    `1.${"1".repeat(n)}`,
    `-${"1".repeat(n)}`,
    `0x${"f".repeat(n)}`,
    `0x${"F".repeat(n)}g`,
    `0X${"0".repeat(n)}`,
    " ".repeat(n),
    `${" ".repeat(n)}1`,
    "a-".repeat(n / 2),
    `${"a".repeat(n)}-`,
    "[".repeat(n),
    '{"a":'.repeat(n / 5),
    "%25".repeat(n / 3),
    "%zz".repeat(n / 3),
    "\u00e4".repeat(n / 2),
    "../".repeat(n / 3),
    "1,".repeat(n / 2)
  )

const longInput = fc.oneof(
  fc.integer({ min: 300, max: 1_000 }).chain(longValue),
  fc.integer({ min: 1_000, max: 4_000 }).chain(longValue),
  fc.string({ minLength: 300, maxLength: 3_000 })
)

type Parameter = { readonly name: string; readonly in: "path" | "query" }

const operations = () =>
  Object.entries(api.document.paths).map(([template, item]) => ({
    template,
    parameters: ((item as Record<string, { parameters?: Array<Parameter> }>)["get"]?.parameters ?? []) as ReadonlyArray<Parameter>
  }))

/** `arbitrary`'s value one time in five, else null. */
const rarely = <A>(arbitrary: fc.Arbitrary<A>) => fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, { weight: 1, arbitrary })

/** At most this long, so Node's 16 KiB request-head limit never answers before the API does. */
const MAX_TARGET = 14_000

/** A request to an operation with long path parameters and some long, nested or repeated query parameters. */
const hostileRequest = () =>
  fc.constantFrom(...operations()).chain((operation) => {
    const pathParams = operation.parameters.filter((p) => p.in === "path")
    const queryNames = operation.parameters.filter((p) => p.in === "query").map((p) => p.name)
    return fc
      .record({
        path: fc.tuple(...pathParams.map(() => longInput)),
        query: fc.array(fc.tuple(fc.constantFrom(...queryNames, "x", "__proto__", `a${"[b]".repeat(500)}`), longInput), { maxLength: 3 }),
        repeated: rarely(fc.tuple(fc.constantFrom(...queryNames, "limit"), fc.integer({ min: 100, max: 2_000 }))),
        segments: rarely(fc.integer({ min: 100, max: 2_000 }))
      })
      .map(({ path, query, repeated, segments }) => {
        let i = 0
        let pathname = operation.template.replace(/\{[^}]+\}/g, () => encodeURIComponent(path[i++] ?? ""))
        if (segments !== null) pathname += "/x".repeat(segments)
        const pairs = query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
        if (repeated !== null) pairs.push(...Array.from({ length: repeated[1] }, () => `${repeated[0]}=1`))
        const url = pairs.length === 0 ? pathname : `${pathname}?${pairs.join("&")}`
        return url.slice(0, MAX_TARGET)
      })
  })

describe("long, nested and repeated inputs on every path", () => {
  it("are answered with a documented 400 or 404 (or the answer), and no quantified pattern scans them", async () => {
    expect(operations().length).toBe(37)
    const statuses = new Map<number, number>()
    const scans = await longScans(async () => {
      await fc.assert(
        fc.asyncProperty(hostileRequest(), async (url) => {
          const response = await api.raw(url)
          const text = await response.text()
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1)
          expect([200, 400, 404], `${url.slice(0, 200)}: ${response.status} ${text.slice(0, 200)}`).toContain(response.status)
          const body = JSON.parse(text)
          if (response.status !== 200) expect(Object.keys(body).sort()).toEqual(["error", "message"])
          // Messages show a long value's start only: an answer never echoes a request back in full.
          if (response.status !== 200) expect(body.message.length).toBeLessThan(600)
          const pathname = new URL(url, api.url).pathname
          expect(checked(() => conformance(api.document, pathname, { status: response.status, body, headers: response.headers }))).toEqual(
            []
          )
        }),
        { numRuns: Number(process.env["FUZZ_RUNS"] ?? 300), seed: Number(process.env["FUZZ_SEED"] ?? 20261125), endOnFailure: true }
      )
    })
    expect(Object.fromEntries(scans)).toEqual({})
    expect(statuses.get(400) ?? 0).toBeGreaterThan(100)
    expect(statuses.get(404) ?? 0).toBeGreaterThan(10)
  }, 300_000)

  it("every parameter of every endpoint decodes inputs of tens of thousands of characters without a quantified pattern scanning them", async () => {
    const huge = fc.integer({ min: 10_000, max: 60_000 }).chain(longValue)
    const scans = await longScans(async () => {
      fc.assert(
        fc.property(fc.constantFrom(...operations()), huge, huge, (operation, pathValue, queryValue) => {
          let pathname = operation.template.replace(/\{[^}]+\}/g, () => encodeURIComponent(pathValue))
          const names = operation.parameters.filter((p) => p.in === "query").map((p) => p.name)
          pathname += names.length === 0 ? "" : `?${names.map((n) => `${n}=${encodeURIComponent(queryValue)}`).join("&")}`
          const target = parseTarget(pathname)!
          const matched = matchRequest(target)
          expect(matched, pathname.slice(0, 100)).toBeDefined()
          const decoded = decodeRequest(matched!, target)
          // The 400's sentence is computed from the input too.
          if (Either.isLeft(decoded)) expect(ParseResult.ArrayFormatter.formatErrorSync(decoded.left)[0]?.message.length).toBeLessThan(400)
        }),
        { numRuns: 400, seed: 20261125 }
      )
    })
    expect(Object.fromEntries(scans)).toEqual({})
  }, 120_000)

  it("a 16,000-digit market id is refused as InvalidMarketId after no more scanning than a short one", async () => {
    // Each on a connection of its own: a kept-alive one the server closes as idle just as the
    // request goes out is reset (seen on a loaded machine), which says nothing about the answer.
    const freshGet = (path: string) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const request = http.get(`${api.url}${path}`, { agent: false }, (response) => {
          let text = ""
          response.setEncoding("utf8")
          response.on("data", (chunk: string) => (text += chunk))
          response.on("end", () => resolve({ status: response.statusCode ?? 0, text }))
        })
        request.on("error", reject)
      })
    const scans = await longScans(async () => {
      const response = await freshGet(`/api/markets/${"1".repeat(16_000)}`)
      const body = JSON.parse(response.text) as { error: string; message: string }
      expect(response.status).toBe(400)
      expect(body.error).toBe("InvalidMarketId")
      expect(body.message).toMatch(/16000 characters long; at most 78 fit/)
      // Beyond Node's 16 KiB request head, Node answers before any of our code runs.
      expect((await freshGet(`/api/markets/${"1".repeat(20_000)}`)).status).toBe(431)
    })
    expect(Object.fromEntries(scans)).toEqual({})
  })
})

// ---------------------------------------------------------------------------------------------
// The answer cache under a flood of spellings

/** Percent-encodes some characters of `text` (either hex case), as a client or an attacker may. */
const respell = (text: string, picks: ReadonlyArray<number>): string =>
  [...text]
    .map((c, i) => {
      const pick = picks[i % picks.length]!
      if (pick % 3 === 0 || c === "&" || c === "=" || c === "?" || c === "/") return c
      const hex = c.charCodeAt(0).toString(16).padStart(2, "0")
      return `%${pick % 3 === 1 ? hex.toUpperCase() : hex.toLowerCase()}`
    })
    .join("")

describe("the answer cache", () => {
  it("serves every spelling of one request from one entry, without the database", async () => {
    const first = await api.raw("/api/markets?sort=volume&limit=5")
    expect(first.status).toBe(200)
    const body = await first.text()
    const block = first.headers.get("x-indexed-block")
    // A market id in either form is one entry as well.
    const detail = await (await api.raw("/api/markets/15")).text()
    const detailEntries = api.cache?.size
    for (const spelling of [`/api/markets/0x${"0".repeat(62)}0f`, `/api/markets/0x${"0".repeat(62)}0F`, "/api/markets/%31%35"]) {
      expect(await (await api.raw(spelling)).text()).toBe(detail)
    }
    expect(api.cache!.size).toBe(detailEntries)
    const entries = api.cache?.size
    // Behind the cache's back (no NOTIFY, same head): an answer read from the database would differ.
    await api.sql(`update market set question = question || ' (changed)'`)
    try {
      const spellings = fc.sample(
        fc.record({
          order: fc.boolean(),
          defaults: fc.boolean(),
          picks: fc.array(fc.nat(), { minLength: 1, maxLength: 40 })
        }),
        { numRuns: 2_000, seed: 7 }
      )
      const distinct = new Set<string>()
      for (const { order, defaults, picks } of spellings) {
        const pairs = order ? ["limit=5", "sort=volume"] : ["sort=volume", "limit=5"]
        if (defaults) pairs.push("offset=0")
        const url = `/${respell(`api/markets?${pairs.join("&")}`, picks)}`
        distinct.add(url)
        const response = await api.raw(url)
        expect(response.status, url).toBe(200)
        expect(response.headers.get("x-indexed-block")).toBe(block)
        expect(await response.text(), url).toBe(body)
      }
      expect(distinct.size).toBeGreaterThan(1_000)
      expect(api.cache!.size).toBe(entries)
      expect(api.cache!.bytes).toBeLessThanOrEqual(CACHE_BYTES)
    } finally {
      await api.sql(`update market set question = left(question, length(question) - length(' (changed)'))`)
    }
  }, 120_000)

  it("never changes an answer: any spelling of a valid request, cached or not, answers what the plain spelling answers uncached", async () => {
    const uncached = await startHarness({ cacheBytes: 0 })
    try {
      const USER = "0xa0ee7a142d267c1f36714e4a8f75612f20a79720"
      const valid: Record<string, ReadonlyArray<string>> = {
        id: ["1", "15", `0x${"0".repeat(62)}0f`],
        marketId: ["11", "15"],
        eventId: ["1", "2"],
        address: [USER, USER.toUpperCase().replace("0X", "0x")],
        owner: [USER],
        trader: [USER],
        maker: [USER],
        account: [USER],
        limit: ["1", "3", "20"],
        offset: ["0", "2"],
        timeframe: ["1h", "1d"],
        sort: ["volume", "trades"],
        status: ["active", "resolved"]
      }
      type Param = { readonly name: string; readonly in: "path" | "query"; readonly schema: { readonly enum?: ReadonlyArray<string> } }
      // Health is a live probe, never cached: its ages move between two reads by design.
      const cachedPaths = Object.entries(api.document.paths).filter(([template]) => template !== "/api/health")
      const requests = fc.constantFrom(...cachedPaths).chain(([template, item]) => {
        const parameters = ((item as Record<string, { parameters?: Array<Param> }>)["get"]?.parameters ?? []) as ReadonlyArray<Param>
        const values = (p: Param) => fc.constantFrom(...(valid[p.name] ?? p.schema.enum ?? ["1"]))
        const path = parameters.filter((p) => p.in === "path")
        const query = parameters.filter((p) => p.in === "query" && (valid[p.name] !== undefined || p.schema.enum !== undefined))
        return fc
          .record({
            path: fc.tuple(...path.map(values)),
            query: fc.subarray(query).chain((chosen) => fc.tuple(...chosen.map((p) => values(p).map((v) => `${p.name}=${v}`)))),
            picks: fc.array(fc.nat(), { minLength: 1, maxLength: 30 }),
            reversed: fc.boolean()
          })
          .map(({ path: pathValues, query: pairs, picks, reversed }) => {
            let i = 0
            const pathname = template.replace(/\{[^}]+\}/g, () => pathValues[i++]!)
            const plain = pairs.length === 0 ? pathname : `${pathname}?${pairs.join("&")}`
            const ordered = reversed ? [...pairs].reverse() : pairs
            const spelled = `/${respell(`${pathname.slice(1)}${ordered.length === 0 ? "" : `?${ordered.join("&")}`}`, picks)}`
            return { plain, spelled }
          })
      })
      let answered = 0
      await fc.assert(
        fc.asyncProperty(requests, async ({ plain, spelled }) => {
          const expected = await uncached.raw(plain)
          const expectedBody = await expected.text()
          if (expected.status === 200) answered++
          for (const [server, url] of [
            [api, spelled],
            [api, spelled],
            [uncached, spelled],
            [api, plain]
          ] as const) {
            const response = await server.raw(url)
            expect(response.status, `${url} (plain ${plain})`).toBe(expected.status)
            expect(await response.text(), `${url} (plain ${plain})`).toBe(expectedBody)
          }
        }),
        { numRuns: 150, seed: 20261125 }
      )
      expect(answered).toBeGreaterThan(100)
    } finally {
      await uncached.close()
    }
  }, 300_000)

  it("holds at most its bytes whatever distinct requests and spellings arrive", async () => {
    let peak = 0
    for (let i = 0; i < 1_500; i++) {
      // Distinct answers (about 20 KiB each), then a new spelling of one request (a new alias).
      const distinct = await api.raw(
        `/api/markets?limit=100&offset=${i % 30}&sort=${["volume", "newest", "oldest", "trades", "ending_soon"][i % 5]}&featured=${i % 2 === 0}`
      )
      await distinct.arrayBuffer()
      const spelling = await api.raw(`/${respell("api/markets?limit=100&offset=0&sort=volume", [i, i >> 2, i >> 4, 1, i >> 6])}`)
      await spelling.arrayBuffer()
      peak = Math.max(peak, api.cache!.bytes)
    }
    expect(peak).toBeGreaterThan(CACHE_BYTES / 2)
    expect(peak).toBeLessThanOrEqual(CACHE_BYTES)
  }, 120_000)
})

// ---------------------------------------------------------------------------------------------
// Absolute-form targets

/** GET with the request target written as is (fetch always sends origin-form). */
const rawGet = (target: string, method = "GET") =>
  new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const { hostname, port } = new URL(api.url)
    const request = http.request({ host: hostname, port, path: target, method }, (response) => {
      let body = ""
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => (body += chunk))
      response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }))
    })
    request.on("error", reject)
    request.end()
  })

describe("absolute-form requests", () => {
  it("route and cache on their path: health is never cached", async () => {
    const before = JSON.parse((await rawGet("http://example.com/api/health")).body)
    expect(before.data).toMatchObject({ status: "ok", lagBlocks: 0 })
    await api.sql(`update indexer_checkpoint set head_block = head_block + 5`)
    try {
      for (const target of ["http://example.com/api/health", "HTTP://example.com/api/health?x=1", "https://h:1/api/health"]) {
        const answer = await rawGet(target)
        expect(answer.status, target).toBe(200)
        expect(JSON.parse(answer.body).data, target).toMatchObject({ lagBlocks: 5 })
      }
    } finally {
      await api.sql(`update indexer_checkpoint set head_block = head_block - 5`)
    }
  })

  it("share the origin-form request's cache entry", async () => {
    const origin = await (await api.raw("/api/markets?limit=3")).text()
    const size = api.cache!.size
    const absolute = await rawGet("http://example.com/api/markets?limit=3")
    expect(absolute.status).toBe(200)
    expect(absolute.body).toBe(origin)
    expect(api.cache!.size).toBe(size)
  })
})

// ---------------------------------------------------------------------------------------------
// Smaller rules

describe("parameters, paths and CORS", () => {
  it("__proto__ is an unknown parameter like any other", async () => {
    for (const url of ["/api/markets?__proto__=1", "/api/stats?__proto__=1", "/api/markets/1/trades?constructor=1&__proto__=x"]) {
      const answer = await api.get(url)
      expect(answer.status, url).toBe(400)
      expect(answer.body.error).toBe("InvalidParameter")
      expect(answer.body.message).toMatch(/unknown query parameter "(__proto__|constructor)"/)
    }
  })

  it("a malformed percent-escape in a parameter is that parameter's 400", async () => {
    const market = await api.get("/api/markets/%zz")
    expect(market.status).toBe(400)
    expect(market.body).toEqual({ error: "InvalidMarketId", message: expect.stringContaining('"%zz"') })
    const address = await api.get("/api/portfolio/%zz")
    expect(address.status).toBe(400)
    expect(address.body.error).toBe("InvalidAddress")
    // Not a parameter: no such path.
    expect((await api.get("/api/%zz")).body.error).toBe("NotFound")
  })

  it("an empty segment where a parameter goes names nothing: 404 NotFound", async () => {
    for (const url of ["/api/markets/", "/api/markets//trades", "/api/portfolio/", "/api/events/"]) {
      const answer = await api.get(url)
      expect(answer.status, url).toBe(404)
      expect(answer.body.error, url).toBe("NotFound")
    }
  })

  it("an offset error states the allowed range", async () => {
    for (const offset of ["-1", "99999999999999999999", "1e3"]) {
      const answer = await api.get(`/api/markets?offset=${offset}`)
      expect(answer.status).toBe(400)
      expect(answer.body.message).toMatch(/offset must be a whole number from 0 to 9007199254740991/)
    }
  })

  it("every answer allows any origin without credentials, and a preflight is a 204", async () => {
    for (const url of ["/api/markets?limit=2", "/api/markets?limit=2", "/api/markets/abc", "/nothing", "/api/health"]) {
      const response = await api.raw(url)
      await response.arrayBuffer()
      expect(response.headers.get("access-control-allow-origin"), url).toBe("*")
      expect(response.headers.get("access-control-allow-credentials"), url).toBeNull()
      expect(response.headers.get("access-control-expose-headers")).toMatch(/x-indexed-block/)
    }
    const preflight = await rawGet("/api/markets?limit=2", "OPTIONS")
    expect(preflight.status).toBe(204)
    expect(preflight.headers["access-control-allow-origin"]).toBe("*")
    expect(preflight.headers["access-control-allow-methods"]).toMatch(/GET/)
    expect(preflight.headers["access-control-allow-credentials"]).toBeUndefined()
  })
})
