/**
 * Typed errors of both HTTP layers, each carrying its HTTP status as an `HttpApiSchema` annotation.
 *
 * Backend: the spec's CLOSED code set (Errors table). Wire body
 * `{ error, message, code, details? }`: `error` and `code` are both the code, `details` lists
 * `{ path, message }` for validation failures.
 * Indexer: PascalCase names. Wire body `{ error, message }`.
 *
 * Each error is a `Schema.TaggedError` class (so handlers can `catchTag`), annotated with its
 * status (`HttpApiSchema.getStatusError(MarketNotFound) === 404`). Each class also has a static
 * `wire` schema: a transformation between the spec's body and the class, annotated with the same
 * status, so `HttpApiEndpoint.addError(MarketNotFound.wire)` documents and writes exactly the
 * spec's body (no `_tag` on the wire) with the right status.
 */
import { HttpApiSchema } from "@effect/platform"
import { ParseResult, Schema } from "effect"

// ---------------------------------------------------------------------------------------------
// Backend

/** Status of every backend error code, exactly the spec's Errors table. */
export const backendErrorStatus = {
  MARKET_NOT_FOUND: 404,
  MARKET_PAUSED: 400,
  INDEXER_UNAVAILABLE: 503,
  INVALID_ADDRESS: 400,
  INVALID_MARKET_ID: 400,
  AUTH_REQUIRED: 401,
  AUTH_INVALID: 401,
  FORBIDDEN: 403,
  VALIDATION_FAILED: 400,
  RATE_LIMIT_EXCEEDED: 429,
  INSUFFICIENT_BALANCE: 400,
  SLIPPAGE_EXCEEDED: 400
} as const satisfies Record<string, number>

export type BackendErrorCode = keyof typeof backendErrorStatus

/** The condition of each code, from the spec; used as descriptions in OpenAPI. */
export const backendErrorCondition: Record<BackendErrorCode, string> = {
  MARKET_NOT_FOUND: "market id does not exist",
  MARKET_PAUSED: "market is paused",
  INDEXER_UNAVAILABLE: "indexer circuit breaker tripped",
  INVALID_ADDRESS: "address malformed",
  INVALID_MARKET_ID: "market id malformed",
  AUTH_REQUIRED: "endpoint requires a session",
  AUTH_INVALID: "session expired or invalid",
  FORBIDDEN: "insufficient role",
  VALIDATION_FAILED: "request body failed validation",
  RATE_LIMIT_EXCEEDED: "rate limit exceeded",
  INSUFFICIENT_BALANCE: "wallet balance too low",
  SLIPPAGE_EXCEEDED: "on-chain revert caused by slippage"
}

export const BACKEND_ERROR_CODES = Object.keys(backendErrorStatus) as unknown as readonly [BackendErrorCode, ...Array<BackendErrorCode>]

/** The closed set of backend error codes. */
export const BackendErrorCode = Schema.Literal(...BACKEND_ERROR_CODES).annotations({
  identifier: "BackendErrorCode",
  title: "Backend error code",
  description: `backend error code, a closed set: ${BACKEND_ERROR_CODES.map((c) => `${c} (${backendErrorStatus[c]})`).join(", ")}`
})

/** One validation problem: where (`path`, dotted, e.g. `items.0.amount`) and what. */
export const ErrorDetail = Schema.Struct({
  path: Schema.String.annotations({ description: 'dotted path of the offending field, e.g. "items.0.amount"; empty for the whole body' }),
  message: Schema.String.annotations({ description: "what is wrong with it" })
}).annotations({ identifier: "ErrorDetail", title: "Error detail", description: "one validation problem: path and message" })
export type ErrorDetail = typeof ErrorDetail.Type

/** The backend error body. */
export const BackendErrorBody = Schema.Struct({
  error: Schema.String.annotations({ description: "the error code (same as `code`)" }),
  message: Schema.String.annotations({ description: "human-readable explanation" }),
  code: BackendErrorCode,
  details: Schema.optional(Schema.Array(ErrorDetail).annotations({ description: "validation problems, one per offending field" }))
}).annotations({
  identifier: "BackendErrorBody",
  title: "Backend error",
  description: "backend error body: error and code (the code), message, and details for validation failures"
})
export type BackendErrorBody = typeof BackendErrorBody.Type

const pascal = (code: string): string =>
  code
    .toLowerCase()
    .split("_")
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join("")

/** A backend error class for `code`: status annotation on the class and on its `wire` schema. */
const backendError = <const Code extends BackendErrorCode>(code: Code) => {
  const status = backendErrorStatus[code]
  const description = `${code} (HTTP ${status}): ${backendErrorCondition[code]}`
  class BackendError extends Schema.TaggedError<BackendError>()(
    code,
    {
      code: Schema.Literal(code).pipe(
        Schema.propertySignature,
        Schema.withConstructorDefault(() => code)
      ),
      message: Schema.String,
      details: Schema.optional(Schema.Array(ErrorDetail))
    },
    { ...HttpApiSchema.annotations({ status }), identifier: `${pascal(code)}Error`, title: code, description }
  ) {
    static readonly status: number = status
    /** The spec's body `{ error, code, message, details? }` <-> this class, with the status annotation. */
    static readonly wire = Schema.transform(
      Schema.Struct({
        error: Schema.Literal(code),
        message: Schema.String,
        code: Schema.Literal(code),
        details: Schema.optional(Schema.Array(ErrorDetail))
      }),
      BackendError,
      {
        strict: true,
        decode: (body) => ({ _tag: code, code, message: body.message, ...(body.details === undefined ? {} : { details: body.details }) }),
        encode: (error) => ({
          error: code,
          message: error.message,
          code,
          ...(error.details === undefined ? {} : { details: error.details })
        })
      }
    ).annotations({ ...HttpApiSchema.annotations({ status }), identifier: code, title: code, description })
  }
  return BackendError
}

// The classes are exported as the factory's own classes (not subclasses of them), so that values
// decoded through `wire` are instances of exactly the exported class.

/** MARKET_NOT_FOUND, 404: market id does not exist. */
export const MarketNotFound = backendError("MARKET_NOT_FOUND")
export type MarketNotFound = InstanceType<typeof MarketNotFound>
/** MARKET_PAUSED, 400: market is paused. */
export const MarketPaused = backendError("MARKET_PAUSED")
export type MarketPaused = InstanceType<typeof MarketPaused>
/** INDEXER_UNAVAILABLE, 503: indexer circuit breaker tripped. */
export const IndexerUnavailable = backendError("INDEXER_UNAVAILABLE")
export type IndexerUnavailable = InstanceType<typeof IndexerUnavailable>
/** INVALID_ADDRESS, 400: address malformed. */
export const InvalidAddress = backendError("INVALID_ADDRESS")
export type InvalidAddress = InstanceType<typeof InvalidAddress>
/** INVALID_MARKET_ID, 400: market id malformed. */
export const InvalidMarketId = backendError("INVALID_MARKET_ID")
export type InvalidMarketId = InstanceType<typeof InvalidMarketId>
/** AUTH_REQUIRED, 401: endpoint requires a session. */
export const AuthRequired = backendError("AUTH_REQUIRED")
export type AuthRequired = InstanceType<typeof AuthRequired>
/** AUTH_INVALID, 401: session expired or invalid. */
export const AuthInvalid = backendError("AUTH_INVALID")
export type AuthInvalid = InstanceType<typeof AuthInvalid>
/** FORBIDDEN, 403: insufficient role. */
export const Forbidden = backendError("FORBIDDEN")
export type Forbidden = InstanceType<typeof Forbidden>
/**
 * VALIDATION_FAILED, 400: request body failed validation. `ValidationFailed.fromParseError(e)`
 * lists every problem of a parse error in `details`.
 */
export const ValidationFailed = Object.assign(backendError("VALIDATION_FAILED"), {
  fromParseError: (error: ParseResult.ParseError, message = "request failed validation"): ValidationFailed =>
    new ValidationFailed({ message, details: detailsFromParseError(error) })
})
export type ValidationFailed = InstanceType<typeof ValidationFailed>
/** RATE_LIMIT_EXCEEDED, 429: rate limit exceeded. */
export const RateLimitExceeded = backendError("RATE_LIMIT_EXCEEDED")
export type RateLimitExceeded = InstanceType<typeof RateLimitExceeded>
/** INSUFFICIENT_BALANCE, 400: wallet balance too low. */
export const InsufficientBalance = backendError("INSUFFICIENT_BALANCE")
export type InsufficientBalance = InstanceType<typeof InsufficientBalance>
/** SLIPPAGE_EXCEEDED, 400: on-chain revert caused by slippage. */
export const SlippageExceeded = backendError("SLIPPAGE_EXCEEDED")
export type SlippageExceeded = InstanceType<typeof SlippageExceeded>

/** Every backend error class, by code. */
export const BackendErrors = {
  MARKET_NOT_FOUND: MarketNotFound,
  MARKET_PAUSED: MarketPaused,
  INDEXER_UNAVAILABLE: IndexerUnavailable,
  INVALID_ADDRESS: InvalidAddress,
  INVALID_MARKET_ID: InvalidMarketId,
  AUTH_REQUIRED: AuthRequired,
  AUTH_INVALID: AuthInvalid,
  FORBIDDEN: Forbidden,
  VALIDATION_FAILED: ValidationFailed,
  RATE_LIMIT_EXCEEDED: RateLimitExceeded,
  INSUFFICIENT_BALANCE: InsufficientBalance,
  SLIPPAGE_EXCEEDED: SlippageExceeded
} as const satisfies { readonly [C in BackendErrorCode]: { readonly status: number } }

export type BackendError = InstanceType<(typeof BackendErrors)[BackendErrorCode]>

/** The backend error of `code`. */
export const makeBackendError = <C extends BackendErrorCode>(
  code: C,
  message: string,
  details?: ReadonlyArray<ErrorDetail>
): InstanceType<(typeof BackendErrors)[C]> => {
  const Class = BackendErrors[code] as unknown as new (props: {
    message: string
    details?: ReadonlyArray<ErrorDetail>
  }) => InstanceType<(typeof BackendErrors)[C]>
  return new Class(details === undefined ? { message } : { message, details })
}

/** The spec's body of a backend error: `{ error: code, message, code, details? }`. */
export const toBackendErrorBody = (err: BackendError): BackendErrorBody => ({
  error: err.code,
  message: err.message,
  code: err.code,
  ...(err.details === undefined ? {} : { details: err.details })
})

/** The HTTP status of a backend error. */
export const backendErrorStatusOf = (err: BackendError): number => backendErrorStatus[err.code]

/** Every problem of a parse error as `{ path, message }`, the path dotted (`items.0.amount`). */
export const detailsFromParseError = (error: ParseResult.ParseError): Array<ErrorDetail> =>
  ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
    path: issue.path.map((segment) => String(segment)).join("."),
    message: issue.message
  }))

// ---------------------------------------------------------------------------------------------
// Indexer

/** The indexer error body: a PascalCase name and a message. */
export const IndexerErrorBody = Schema.Struct({
  error: Schema.String.pipe(
    Schema.pattern(/^[A-Z][A-Za-z0-9]*$/, {
      description: 'PascalCase error name, e.g. "MarketNotFound"',
      message: () => ({ message: 'expected a PascalCase error name such as "MarketNotFound"', override: true })
    })
  ),
  message: Schema.String.annotations({ description: "human-readable explanation" })
}).annotations({
  identifier: "IndexerErrorBody",
  title: "Indexer error",
  description: "indexer error body: PascalCase name in error, and a message"
})
export type IndexerErrorBody = typeof IndexerErrorBody.Type

/** An indexer error class named `name`: status annotation on the class and on its `wire` schema. */
const indexerError = <const Name extends string>(name: Name, status: number, condition: string) => {
  const description = `${name} (HTTP ${status}): ${condition}`
  class IndexerError extends Schema.TaggedError<IndexerError>()(
    name,
    { message: Schema.String },
    { ...HttpApiSchema.annotations({ status }), identifier: `Indexer${name}Error`, title: name, description }
  ) {
    static readonly status: number = status
    /** The spec's body `{ error: name, message }` <-> this class, with the status annotation. */
    static readonly wire = Schema.transform(Schema.Struct({ error: Schema.Literal(name), message: Schema.String }), IndexerError, {
      strict: true,
      decode: (body) => ({ _tag: name, message: body.message }),
      encode: (error) => ({ error: name, message: error.message })
    }).annotations({ ...HttpApiSchema.annotations({ status }), identifier: name, title: name, description })
  }
  return IndexerError
}

/** MarketNotFound, 404 (named `IndexerMarketNotFound` here: the backend's class is `MarketNotFound`). */
export const IndexerMarketNotFound = indexerError("MarketNotFound", 404, "no market with this id")
export type IndexerMarketNotFound = InstanceType<typeof IndexerMarketNotFound>
/** EventNotFound, 404. */
export const EventNotFound = indexerError("EventNotFound", 404, "no event with this id")
export type EventNotFound = InstanceType<typeof EventNotFound>
/** OrderNotFound, 404. */
export const OrderNotFound = indexerError("OrderNotFound", 404, "no order with this id")
export type OrderNotFound = InstanceType<typeof OrderNotFound>
/** NotFound, 404: unknown route or resource. */
export const NotFound = indexerError("NotFound", 404, "no such route or resource")
export type NotFound = InstanceType<typeof NotFound>
/** InvalidAddress, 400 (named `IndexerInvalidAddress` here). */
export const IndexerInvalidAddress = indexerError("InvalidAddress", 400, "an address parameter is malformed")
export type IndexerInvalidAddress = InstanceType<typeof IndexerInvalidAddress>
/** InvalidMarketId, 400 (named `IndexerInvalidMarketId` here). */
export const IndexerInvalidMarketId = indexerError("InvalidMarketId", 400, "the market id is malformed")
export type IndexerInvalidMarketId = InstanceType<typeof IndexerInvalidMarketId>
/**
 * InvalidParameter, 400. The message names the parameter: build it with
 * `InvalidParameter.forParameter("limit", "limit must be between 1 and 100, got 101")`.
 */
export const InvalidParameter = Object.assign(
  indexerError("InvalidParameter", 400, "a query or path parameter is malformed; the message names it"),
  {
    forParameter: (parameter: string, problem: string): InvalidParameter =>
      new InvalidParameter({ message: `invalid parameter ${JSON.stringify(parameter)}: ${problem}` })
  }
)
export type InvalidParameter = InstanceType<typeof InvalidParameter>
/** ServiceUnavailable, 503: the database or chain source does not answer. */
export const ServiceUnavailable = indexerError("ServiceUnavailable", 503, "the database or chain source does not answer")
export type ServiceUnavailable = InstanceType<typeof ServiceUnavailable>

/** Every indexer error class. */
export const IndexerErrors = [
  IndexerMarketNotFound,
  EventNotFound,
  OrderNotFound,
  NotFound,
  IndexerInvalidAddress,
  IndexerInvalidMarketId,
  InvalidParameter,
  ServiceUnavailable
] as const

/** Every indexer error class by its wire name. */
export const IndexerErrorsByName = {
  MarketNotFound: IndexerMarketNotFound,
  EventNotFound,
  OrderNotFound,
  NotFound,
  InvalidAddress: IndexerInvalidAddress,
  InvalidMarketId: IndexerInvalidMarketId,
  InvalidParameter,
  ServiceUnavailable
} as const

export type IndexerErrorName = keyof typeof IndexerErrorsByName
export type IndexerError = InstanceType<(typeof IndexerErrors)[number]>

/** The spec's body of an indexer error: `{ error: name, message }`. */
export const toIndexerErrorBody = (err: IndexerError): IndexerErrorBody => ({ error: err._tag, message: err.message })
