import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Either, ParseResult, Schema } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  BACKEND_VERSION,
  BackendItem,
  BackendList,
  backendItem,
  backendList,
  backendMeta,
  DEFAULT_LIMIT,
  IndexerItem,
  IndexerList,
  indexerItem,
  indexerList,
  MAX_LIMIT,
  PaginationQuery,
  paginationFields
} from "../../schema/envelopes.js"
import { Address, Amount6 } from "../../schema/primitives.js"

/** A small record in the indexer's style: amounts as six-decimal strings, addresses lowercase. */
const Position = Schema.Struct({ user: Address, yesBalance: Amount6 }).annotations({ identifier: "Position" })
const position = { user: Schema.decodeSync(Address)(`0x${"Ab".repeat(20)}`), yesBalance: 1_500_000n }
const positionWire = { user: `0x${"ab".repeat(20)}`, yesBalance: "1.500000" }

const failure = (result: Either.Either<unknown, ParseResult.ParseError>) => {
  if (Either.isRight(result)) throw new Error("expected a failure")
  return { tree: ParseResult.TreeFormatter.formatErrorSync(result.left), issues: ParseResult.ArrayFormatter.formatErrorSync(result.left) }
}

describe("indexer envelopes", () => {
  it("a list encodes as { data: [...], meta: { limit, offset, count } }", () => {
    const wire = Schema.encodeSync(IndexerList(Position))(indexerList([position], { limit: 20, offset: 0, count: 57 }))
    expect(wire).toStrictEqual({ data: [positionWire], meta: { limit: 20, offset: 0, count: 57 } })
    expect(JSON.parse(JSON.stringify(wire))).toStrictEqual(wire)
    expect(Schema.decodeUnknownSync(IndexerList(Position))(wire)).toStrictEqual({
      data: [position],
      meta: { limit: 20, offset: 0, count: 57 }
    })
  })

  it("a single item encodes as { data, meta: null }", () => {
    expect(Schema.encodeSync(IndexerItem(Position))(indexerItem(position))).toStrictEqual({ data: positionWire, meta: null })
    expect(Either.isLeft(Schema.decodeUnknownEither(IndexerItem(Position))({ data: positionWire, meta: {} }))).toBe(true)
  })

  it("list meta must be three non-negative integers", () => {
    const List = IndexerList(Schema.String)
    expect(Either.isLeft(Schema.decodeUnknownEither(List)({ data: [], meta: { limit: 20, offset: 0 } }))).toBe(true)
    expect(Either.isLeft(Schema.decodeUnknownEither(List)({ data: [], meta: { limit: 20, offset: -1, count: 0 } }))).toBe(true)
    expect(Either.isLeft(Schema.decodeUnknownEither(List)({ data: [], meta: { limit: 20, offset: 0, count: 1.5 } }))).toBe(true)
    expect(Either.isLeft(Schema.decodeUnknownEither(List)({ data: [], meta: null }))).toBe(true)
  })
})

describe("backend envelopes", () => {
  it("a single item has meta { timestamp, version } and no list fields", () => {
    const wire = Schema.encodeSync(BackendItem(Position))(backendItem(position, backendMeta(1_700_000_000)))
    expect(wire).toStrictEqual({ data: positionWire, meta: { timestamp: 1_700_000_000, version: "v2" } })
    expect(Object.keys(wire.meta)).toEqual(["timestamp", "version"])
    expect(BACKEND_VERSION).toBe("v2")
  })

  it("reqId is optional and appears when given", () => {
    const wire = Schema.encodeSync(BackendItem(Schema.Null))(backendItem(null, backendMeta(5, "req-1")))
    expect(wire).toStrictEqual({ data: null, meta: { timestamp: 5, version: "v2", reqId: "req-1" } })
  })

  it("a list adds meta.pagination { limit, offset, total }", () => {
    const wire = Schema.encodeSync(BackendList(Position))(backendList([position], backendMeta(5), { limit: 20, offset: 40, total: 41 }))
    expect(wire).toStrictEqual({
      data: [positionWire],
      meta: { timestamp: 5, version: "v2", pagination: { limit: 20, offset: 40, total: 41 } }
    })
    expect(Either.isLeft(Schema.decodeUnknownEither(BackendList(Position))({ data: [], meta: { timestamp: 5, version: "v2" } }))).toBe(true)
  })

  it("meta.timestamp is integer unix seconds", () => {
    const result = Schema.decodeUnknownEither(BackendItem(Schema.String))({ data: "x", meta: { timestamp: 1.5, version: "v2" } })
    expect(failure(result).issues).toEqual([
      {
        _tag: "Refinement",
        path: ["meta", "timestamp"],
        message: "expected a unix timestamp in seconds (a non-negative whole number), got 1.5, which is fractional"
      }
    ])
  })
})

describe("pagination query", () => {
  const decode = Schema.decodeUnknownEither(PaginationQuery)

  it("defaults limit to 20 and offset to 0", () => {
    expect(decode({})).toEqual(Either.right({ limit: DEFAULT_LIMIT, offset: 0 }))
    expect(DEFAULT_LIMIT).toBe(20)
    expect(MAX_LIMIT).toBe(100)
  })

  it("reads both from query strings within bounds", () => {
    expect(decode({ limit: "1", offset: "0" })).toEqual(Either.right({ limit: 1, offset: 0 }))
    expect(decode({ limit: "100", offset: "40" })).toEqual(Either.right({ limit: 100, offset: 40 }))
    expect(Schema.encodeSync(PaginationQuery)({ limit: 5, offset: 10 })).toEqual({ limit: "5", offset: "10" })
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100 }), fc.nat(), (limit, offset) => {
        expect(decode({ limit: String(limit), offset: String(offset) })).toEqual(Either.right({ limit, offset }))
      })
    )
  })

  it.each([
    [{ limit: "101" }, "limit", "limit must be between 1 and 100, got 101"],
    [{ limit: "0" }, "limit", "limit must be between 1 and 100, got 0"],
    [{ limit: "abc" }, "limit", 'limit must be a whole number between 1 and 100, got "abc"'],
    [{ limit: "10.5" }, "limit", 'limit must be a whole number between 1 and 100, got "10.5"'],
    [{ limit: "" }, "limit", 'limit must be a whole number between 1 and 100, got ""'],
    [{ offset: "-1" }, "offset", 'offset must be a whole number from 0 to 9007199254740991, got "-1"'],
    [{ offset: "1e3" }, "offset", 'offset must be a whole number from 0 to 9007199254740991, got "1e3"'],
    // Digits beyond the range: the message states the range, not merely "0 or more".
    [
      { offset: "99999999999999999999" },
      "offset",
      'offset must be a whole number from 0 to 9007199254740991, got "99999999999999999999", which is too large'
    ],
    [{ offset: "9007199254740992" }, "offset", 'offset must be from 0 to 9007199254740991, got "9007199254740992"']
  ])("rejects %j with a message naming %s", (query, parameter, message) => {
    const { issues, tree } = failure(decode(query))
    expect(issues).toEqual([{ _tag: "Transformation", path: [parameter], message }])
    expect(tree).toContain(message)
  })

  it("the fields spread into an endpoint's own parameters and show up in OpenAPI", () => {
    const Params = Schema.Struct({ ...paginationFields, q: Schema.optional(Schema.String) })
    expect(Schema.decodeUnknownSync(Params)({ q: "rain" })).toEqual({ limit: 20, offset: 0, q: "rain" })
    const api = HttpApi.make("p").add(
      HttpApiGroup.make("g").add(HttpApiEndpoint.get("list", "/items").setUrlParams(PaginationQuery).addSuccess(Schema.String))
    )
    const parameters = OpenApi.fromApi(api).paths["/items"]?.get?.parameters ?? []
    expect(parameters.map((p) => [p.name, p.in, p.required])).toEqual([
      ["limit", "query", false],
      ["offset", "query", false]
    ])
    expect(parameters[0]?.description).toBe("page size, 1 to 100, default 20")
  })
})
