import { HttpApiSchema } from "@effect/platform"
import { Either, ParseResult, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { BACKEND_ERROR_CODES, BackendErrors, backendErrorStatus, IndexerErrors, toBackendErrorBody, ValidationFailed } from "../../schema/errors.js"
import { MatchType, orderStatus, Side, TIMEFRAME_SECONDS, TradeType } from "../../schema/enums.js"
import { IndexerItem, IndexerList, PaginationQuery } from "../../schema/envelopes.js"

describe("error codes", () => {
  it("the backend set is exactly the spec's, each with the spec's HTTP status on its wire schema", () => {
    expect(backendErrorStatus).toEqual({
      MARKET_NOT_FOUND: 404, MARKET_PAUSED: 400, INDEXER_UNAVAILABLE: 503, INVALID_ADDRESS: 400, INVALID_MARKET_ID: 400,
      AUTH_REQUIRED: 401, AUTH_INVALID: 401, FORBIDDEN: 403, VALIDATION_FAILED: 400, RATE_LIMIT_EXCEEDED: 429,
      INSUFFICIENT_BALANCE: 400, SLIPPAGE_EXCEEDED: 400
    })
    for (const code of BACKEND_ERROR_CODES) {
      const Class = BackendErrors[code]
      const wire = Class.wire as unknown as Schema.Schema<unknown, unknown>
      expect(HttpApiSchema.getStatusError(wire)).toBe(backendErrorStatus[code])
      const body = Schema.encodeSync(wire)(new Class({ message: "m" }))
      expect(body).toEqual({ error: code, code, message: "m" })
    }
  })

  it("validation failures carry details with path and message", () => {
    const error = new ValidationFailed({ message: "body invalid", details: [{ path: "amountIn", message: "must be positive" }] })
    expect(toBackendErrorBody(error)).toEqual({ error: "VALIDATION_FAILED", code: "VALIDATION_FAILED", message: "body invalid", details: [{ path: "amountIn", message: "must be positive" }] })
  })

  it("indexer errors are PascalCase {error, message} with their statuses", () => {
    const statuses = Object.fromEntries(
      IndexerErrors.map((E) => {
        const wire = E.wire as unknown as Schema.Schema<unknown, { error: string }>
        return [Schema.encodeSync(wire)(new E({ message: "x" })).error, HttpApiSchema.getStatusError(wire)]
      })
    )
    expect(statuses).toEqual({
      MarketNotFound: 404, EventNotFound: 404, OrderNotFound: 404, NotFound: 404, InvalidAddress: 400, InvalidMarketId: 400, InvalidParameter: 400, ServiceUnavailable: 503
    })
  })
})

describe("enumerations", () => {
  it("map codes to names and back, and reject unknown codes", () => {
    expect(Schema.decodeSync(TradeType.FromCode)(2)).toBe("BUY_NO")
    expect(Schema.encodeSync(Side.FromCode)("SELL_NO")).toBe(3)
    expect(Schema.decodeSync(MatchType.FromCode)(1)).toBe("MINT")
    const bad = Schema.decodeUnknownEither(TradeType.FromCode)(7)
    expect(Either.isLeft(bad) && ParseResult.TreeFormatter.formatErrorSync(bad.left)).toMatch(/TradeType code 0..3, got 7/)
    expect(Either.isLeft(MatchType.fromCode(3))).toBe(true)
  })

  it("derive order status from amounts", () => {
    expect(orderStatus({ amount: 10n, filled: 0n, cancelled: false })).toBe("OPEN")
    expect(orderStatus({ amount: 10n, filled: 4n, cancelled: false })).toBe("PARTIALLY_FILLED")
    expect(orderStatus({ amount: 10n, filled: 10n, cancelled: false })).toBe("FILLED")
    expect(orderStatus({ amount: 10n, filled: 4n, cancelled: true })).toBe("CANCELLED")
    expect(TIMEFRAME_SECONDS["4h"]).toBe(14_400)
  })
})

describe("envelopes and pagination", () => {
  it("lists carry limit, offset and count; single items have meta null", () => {
    const list = Schema.decodeUnknownSync(IndexerList(Schema.String))({ data: ["a"], meta: { limit: 20, offset: 0, count: 1 } })
    expect(list.meta.count).toBe(1)
    expect(() => Schema.decodeUnknownSync(IndexerItem(Schema.String))({ data: "a", meta: {} })).toThrow()
  })

  it("limit defaults to 20 and is capped at 100; bad values name the parameter", () => {
    expect(Schema.decodeUnknownSync(PaginationQuery)({})).toEqual({ limit: 20, offset: 0 })
    expect(Schema.decodeUnknownSync(PaginationQuery)({ limit: "100", offset: "40" })).toEqual({ limit: 100, offset: 40 })
    const tooBig = Schema.decodeUnknownEither(PaginationQuery)({ limit: "101" })
    expect(Either.isLeft(tooBig) && ParseResult.TreeFormatter.formatErrorSync(tooBig.left)).toMatch(/limit must be between 1 and 100, got 101/)
    const negative = Schema.decodeUnknownEither(PaginationQuery)({ offset: "-1" })
    expect(Either.isLeft(negative) && ParseResult.TreeFormatter.formatErrorSync(negative.left)).toMatch(/offset must be a whole number/)
  })
})
