import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, HttpServer, OpenApi } from "@effect/platform"
import { Effect, Either, Layer, Option, Schema, SchemaAST } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { Address } from "../../schema/primitives.js"
import {
  AuthInvalid,
  AuthRequired,
  BACKEND_ERROR_CODES,
  BackendErrorBody,
  BackendErrorCode,
  BackendErrors,
  backendErrorStatus,
  backendErrorStatusOf,
  detailsFromParseError,
  EventNotFound,
  Forbidden,
  IndexerErrorBody,
  IndexerErrors,
  IndexerErrorsByName,
  IndexerInvalidAddress,
  IndexerInvalidMarketId,
  IndexerMarketNotFound,
  IndexerUnavailable,
  InsufficientBalance,
  InvalidAddress,
  InvalidMarketId,
  InvalidParameter,
  makeBackendError,
  MarketNotFound,
  MarketPaused,
  NotFound,
  OrderNotFound,
  RateLimitExceeded,
  ServiceUnavailable,
  SlippageExceeded,
  toBackendErrorBody,
  toIndexerErrorBody,
  ValidationFailed
} from "../../schema/errors.js"

/** The spec's Errors table, written out independently of the module. */
const SPEC = [
  ["MARKET_NOT_FOUND", 404, MarketNotFound],
  ["MARKET_PAUSED", 400, MarketPaused],
  ["INDEXER_UNAVAILABLE", 503, IndexerUnavailable],
  ["INVALID_ADDRESS", 400, InvalidAddress],
  ["INVALID_MARKET_ID", 400, InvalidMarketId],
  ["AUTH_REQUIRED", 401, AuthRequired],
  ["AUTH_INVALID", 401, AuthInvalid],
  ["FORBIDDEN", 403, Forbidden],
  ["VALIDATION_FAILED", 400, ValidationFailed],
  ["RATE_LIMIT_EXCEEDED", 429, RateLimitExceeded],
  ["INSUFFICIENT_BALANCE", 400, InsufficientBalance],
  ["SLIPPAGE_EXCEEDED", 400, SlippageExceeded]
] as const

const INDEXER = [
  ["MarketNotFound", 404, IndexerMarketNotFound],
  ["EventNotFound", 404, EventNotFound],
  ["OrderNotFound", 404, OrderNotFound],
  ["NotFound", 404, NotFound],
  ["InvalidAddress", 400, IndexerInvalidAddress],
  ["InvalidMarketId", 400, IndexerInvalidMarketId],
  ["InvalidParameter", 400, InvalidParameter],
  ["ServiceUnavailable", 503, ServiceUnavailable]
] as const

/**
 * The status annotation read straight from a schema's AST. A Schema class is a transformation
 * whose class-level annotations sit on its `to` side (the declaration).
 */
const statusAnnotation = (schema: Schema.Schema.All): unknown => {
  const ast = schema.ast
  const own = SchemaAST.getAnnotation(ast, HttpApiSchema.AnnotationStatus)
  return Option.getOrUndefined(
    SchemaAST.isTransformation(ast) ? Option.orElse(own, () => SchemaAST.getAnnotation(ast.to, HttpApiSchema.AnnotationStatus)) : own
  )
}

describe("backend error codes", () => {
  it("are exactly the spec's closed set with its statuses", () => {
    expect(BACKEND_ERROR_CODES).toEqual(SPEC.map(([code]) => code))
    expect(backendErrorStatus).toEqual(Object.fromEntries(SPEC.map(([code, status]) => [code, status])))
    expect(Object.keys(BackendErrors)).toEqual(SPEC.map(([code]) => code))
    expect(Schema.is(BackendErrorCode)("MARKET_NOT_FOUND")).toBe(true)
    expect(Schema.is(BackendErrorCode)("market_not_found")).toBe(false)
    expect(Schema.is(BackendErrorCode)("INTERNAL_ERROR")).toBe(false)
  })

  it.each(SPEC)("%s carries HTTP %i as an HttpApiSchema annotation on the class and on its wire schema", (code, status, Class) => {
    expect(BackendErrors[code]).toBe(Class)
    expect(HttpApiSchema.getStatusError(Class)).toBe(status)
    expect(statusAnnotation(Class)).toBe(status)
    expect(HttpApiSchema.getStatusError(Class.wire)).toBe(status)
    expect(statusAnnotation(Class.wire)).toBe(status)
    expect(Class.status).toBe(status)
  })

  it.each(SPEC)("%s has a code field and encodes as the spec's body", (code, status, Class) => {
    const error = new Class({ message: "something went wrong" })
    expect(error._tag).toBe(code)
    expect(error.code).toBe(code)
    expect(error).toBeInstanceOf(Error)
    expect(backendErrorStatusOf(error)).toBe(status)
    const body = { error: code, message: "something went wrong", code }
    expect(Schema.encodeSync(Class.wire as unknown as Schema.Schema<unknown, unknown>)(error)).toEqual(body)
    expect(toBackendErrorBody(error)).toEqual(body)
    expect(Schema.decodeUnknownSync(BackendErrorBody)(body)).toEqual(body)
    const decoded = Schema.decodeUnknownSync(Class.wire as unknown as Schema.Schema<unknown, unknown>)(body)
    expect(decoded).toBeInstanceOf(Class)
    expect(makeBackendError(code, "x")).toBeInstanceOf(Class)
  })

  it("the body schema requires a code from the closed set", () => {
    const bad = Schema.decodeUnknownEither(BackendErrorBody)({ error: "NOPE", message: "m", code: "NOPE" })
    expect(Either.isLeft(bad)).toBe(true)
  })

  it("validation failures carry details with path and message", () => {
    const error = new ValidationFailed({ message: "body invalid", details: [{ path: "amountIn", message: "must be positive" }] })
    const body = {
      error: "VALIDATION_FAILED",
      message: "body invalid",
      code: "VALIDATION_FAILED",
      details: [{ path: "amountIn", message: "must be positive" }]
    }
    expect(toBackendErrorBody(error)).toEqual(body)
    expect(Schema.encodeSync(ValidationFailed.wire)(error)).toEqual(body)
    expect(Schema.decodeUnknownSync(BackendErrorBody)(body)).toEqual(body)
  })

  it("ValidationFailed.fromParseError lists every problem by dotted path", () => {
    const Body = Schema.Struct({ trader: Address, legs: Schema.Array(Schema.Struct({ trader: Address })) })
    const result = Schema.decodeUnknownEither(Body, { errors: "all" })({ trader: "0x12", legs: [{ trader: "nope" }] })
    if (Either.isRight(result)) throw new Error("expected a failure")
    expect(detailsFromParseError(result.left)).toEqual([
      { path: "trader", message: 'expected an address: 0x followed by 40 hex digits, got "0x12" (2 hex digits)' },
      { path: "legs.0.trader", message: 'expected an address: 0x followed by 40 hex digits, got "nope", which does not start with 0x' }
    ])
    const error = ValidationFailed.fromParseError(result.left)
    expect(error.code).toBe("VALIDATION_FAILED")
    expect(error.details).toHaveLength(2)
  })
})

describe("indexer errors", () => {
  it("are the eight PascalCase names", () => {
    expect(IndexerErrors.map((E) => new E({ message: "m" })._tag)).toEqual(INDEXER.map(([name]) => name))
    expect(Object.keys(IndexerErrorsByName)).toEqual(INDEXER.map(([name]) => name))
  })

  it.each(INDEXER)("%s carries HTTP %i on the class and its wire schema, and encodes as { error, message }", (name, status, Class) => {
    expect(HttpApiSchema.getStatusError(Class)).toBe(status)
    expect(statusAnnotation(Class)).toBe(status)
    expect(HttpApiSchema.getStatusError(Class.wire)).toBe(status)
    expect(Class.status).toBe(status)
    const error = new Class({ message: "m" })
    const body = { error: name, message: "m" }
    expect(Schema.encodeSync(Class.wire as unknown as Schema.Schema<unknown, unknown>)(error)).toEqual(body)
    expect(toIndexerErrorBody(error)).toEqual(body)
    expect(Schema.decodeUnknownSync(IndexerErrorBody)(body)).toEqual(body)
  })

  it("InvalidParameter names the parameter in its message", () => {
    const error = InvalidParameter.forParameter("limit", "limit must be between 1 and 100, got 101")
    expect(error.message).toBe('invalid parameter "limit": limit must be between 1 and 100, got 101')
    expect(toIndexerErrorBody(error)).toEqual({ error: "InvalidParameter", message: error.message })
  })

  it("the body schema wants a PascalCase name", () => {
    expect(Either.isLeft(Schema.decodeUnknownEither(IndexerErrorBody)({ error: "MARKET_NOT_FOUND", message: "m" }))).toBe(true)
    expect(Either.isLeft(Schema.decodeUnknownEither(IndexerErrorBody)({ error: "MarketNotFound" }))).toBe(true)
  })
})

describe("errors served through HttpApi", () => {
  const backendFail = HttpApiEndpoint.get("fail", "/backend/:code")
    .setPath(Schema.Struct({ code: BackendErrorCode }))
    .addSuccess(Schema.String)
    .addError(MarketNotFound.wire)
    .addError(MarketPaused.wire)
    .addError(IndexerUnavailable.wire)
    .addError(InvalidAddress.wire)
    .addError(InvalidMarketId.wire)
    .addError(AuthRequired.wire)
    .addError(AuthInvalid.wire)
    .addError(Forbidden.wire)
    .addError(ValidationFailed.wire)
    .addError(RateLimitExceeded.wire)
    .addError(InsufficientBalance.wire)
    .addError(SlippageExceeded.wire)
  const indexerFail = HttpApiEndpoint.get("fail", "/indexer/:name")
    .setPath(Schema.Struct({ name: Schema.Literal(...INDEXER.map(([name]) => name)) }))
    .addSuccess(Schema.String)
    .addError(IndexerMarketNotFound.wire)
    .addError(EventNotFound.wire)
    .addError(OrderNotFound.wire)
    .addError(NotFound.wire)
    .addError(IndexerInvalidAddress.wire)
    .addError(IndexerInvalidMarketId.wire)
    .addError(InvalidParameter.wire)
    .addError(ServiceUnavailable.wire)
  const Api = HttpApi.make("errors").add(HttpApiGroup.make("backend").add(backendFail)).add(HttpApiGroup.make("indexer").add(indexerFail))

  const BackendLive = HttpApiBuilder.group(Api, "backend", (handlers) =>
    handlers.handle("fail", ({ path }) => Effect.fail(makeBackendError(path.code, `failed with ${path.code}`)))
  )
  const IndexerLive = HttpApiBuilder.group(Api, "indexer", (handlers) =>
    handlers.handle("fail", ({ path }) => {
      const Class = IndexerErrorsByName[path.name]
      return Effect.fail(new Class({ message: `failed with ${path.name}` }))
    })
  )
  const { dispose, handler } = HttpApiBuilder.toWebHandler(
    Layer.mergeAll(HttpApiBuilder.api(Api).pipe(Layer.provide([BackendLive, IndexerLive])), HttpServer.layerContext)
  )
  afterAll(() => dispose())

  it.each(SPEC)("a handler failing with %s answers HTTP %i and the spec's body", async (code, status) => {
    const response = await handler(new Request(`http://localhost/backend/${code}`))
    expect(response.status).toBe(status)
    expect(await response.json()).toEqual({ error: code, message: `failed with ${code}`, code })
  })

  it.each(INDEXER)("a handler failing with %s answers HTTP %i and { error, message }", async (name, status) => {
    const response = await handler(new Request(`http://localhost/indexer/${name}`))
    expect(response.status).toBe(status)
    expect(await response.json()).toEqual({ error: name, message: `failed with ${name}` })
  })

  it("the OpenAPI document lists each error under its status, named by its code", () => {
    const spec = OpenApi.fromApi(Api)
    const responses = spec.paths["/backend/{code}"]?.get?.responses ?? {}
    for (const [code, status] of SPEC) {
      expect(JSON.stringify(responses[status])).toContain(`#/components/schemas/${code}`)
      expect(spec.components.schemas[code]).toMatchObject({ properties: { code: { enum: [code] }, error: { enum: [code] } } })
    }
    const indexerResponses = spec.paths["/indexer/{name}"]?.get?.responses ?? {}
    for (const [name, status] of INDEXER) expect(JSON.stringify(indexerResponses[status])).toContain(`#/components/schemas/${name}`)
  })
})
