/**
 * Query and path parameters of the three HTTP surfaces (indexer API, backend API, WebSocket
 * stream): the one list of parameter names and the kind each name gives its value, the error each
 * API answers for a malformed value of each kind, and the schemas that decode the raw strings and
 * say in one sentence what is wrong with a bad one. The sentence names the parameter; the
 * request-error middlewares (`http/indexer/request-errors.ts`, `http/backend/edge/middleware.ts`) and
 * the backend's front door (`http/backend/edge/front-door.ts`) put it in a 400 body.
 *
 * Invariants:
 * - a parameter's kind follows from its NAME alone (`parameterKind`), the same in every API: an
 *   address-valued name always holds an address, a market-id name a market id. Path and query
 *   parameters are named so that this holds (`/api/events/{eventId}`, not `{id}`), and
 *   `test/http/core/params.test.ts` sends a bad value for every address- and market-id-valued
 *   parameter of every route of both APIs;
 * - the same bad input is the same error in both APIs (spec, Errors): `InvalidAddress` /
 *   INVALID_ADDRESS, `InvalidMarketId` / INVALID_MARKET_ID, else `InvalidParameter` /
 *   VALIDATION_FAILED (`PARAMETER_ERRORS`);
 * - addresses are read by the one parser at the ground (`schema/primitives.ts` `parseAddress`,
 *   through `Address`), market ids by `MarketId`;
 * - every parameter schema decodes from a string (or is optional), and the document lists every
 *   allowed value: a string with its pattern or enum, a whole number as an `integer` with its
 *   bounds, `true`/`false` as a `boolean` (a query string carries either as its text, so a
 *   generated client sends `limit=5` for `limit: 5`). The document's type is an annotation only:
 *   the server still reads the text, with the same checks and the same errors;
 * - query structs reject unknown parameters (`strictQuery`), so a misspelt filter is a 400
 *   instead of a silently unfiltered list;
 * - no pattern scans more characters than the longest valid value has (lengths are checked
 *   first), and every pattern is linear, so a hostile value costs what a short one does.
 */
import { Either, Option, ParseResult, Schema, SchemaAST } from "effect"
import { paginationFields } from "../../schema/envelopes.js"
import type { BackendErrorCode, IndexerErrorName } from "../../schema/errors.js"
import { Address, ADDRESS_INPUT_PATTERN, Bytes32, MarketId, MAX_INTEGER_DIGITS, TxHash } from "../../schema/primitives.js"

/** Names of the parameters that hold an address, in every API. */
export const ADDRESS_PARAMETERS = ["address", "owner", "trader", "maker", "taker", "provider", "account", "oracleContract"] as const

/** Names of the parameters that hold a market id (`idOrSlug` also a slug), in every API. */
export const MARKET_ID_PARAMETERS = ["id", "marketId", "idOrSlug"] as const

/** What a parameter's name says its value is. */
export type ParameterKind = "address" | "marketId" | "other"

export const parameterKind = (name: string): ParameterKind =>
  (ADDRESS_PARAMETERS as ReadonlyArray<string>).includes(name)
    ? "address"
    : (MARKET_ID_PARAMETERS as ReadonlyArray<string>).includes(name)
      ? "marketId"
      : "other"

/** The error each API answers for a malformed parameter of each kind (spec, Errors). */
export const PARAMETER_ERRORS = {
  address: { indexer: "InvalidAddress", backend: "INVALID_ADDRESS" },
  marketId: { indexer: "InvalidMarketId", backend: "INVALID_MARKET_ID" },
  other: { indexer: "InvalidParameter", backend: "VALIDATION_FAILED" }
} as const satisfies Record<ParameterKind, { readonly indexer: IndexerErrorName; readonly backend: BackendErrorCode }>

/** How the indexer reports a malformed parameter, by parameter name. */
export type ParameterError = (typeof PARAMETER_ERRORS)[ParameterKind]["indexer"]

/** The indexer's error name for a malformed value of parameter `name`. */
export const parameterError = (name: string): ParameterError => PARAMETER_ERRORS[parameterKind(name)].indexer

/** The backend's error code for a malformed value of parameter `name`. */
export const parameterCode = (name: string): (typeof PARAMETER_ERRORS)[ParameterKind]["backend"] =>
  PARAMETER_ERRORS[parameterKind(name)].backend

const decodeMarketId = Schema.decodeUnknownEither(MarketId)

/**
 * A market id as the decimal id or `0x` + 64 hex digits (the `MarketId` primitive), or the one
 * sentence that says what is wrong with it.
 */
export const parseMarketId = (input: string): Either.Either<bigint, string> =>
  Either.mapLeft(decodeMarketId(input), (error) => ParseResult.TreeFormatter.formatErrorSync(error))

const shown = (actual: unknown): string =>
  typeof actual === "string"
    ? JSON.stringify(actual.length > 90 ? `${actual.slice(0, 87)}...` : actual)
    : Array.isArray(actual)
      ? "several values (give the parameter once)"
      : String(actual)

const listed = (values: ReadonlyArray<string>) => values.map((v) => JSON.stringify(v)).join(", ")

/** A string parameter that takes one of `values`; the message lists them all. */
export const literalParam = <const V extends ReadonlyArray<string>>(name: string, values: V, description: string) =>
  Schema.Literal(...values).annotations({
    title: name,
    description: `${description}; one of ${values.join(", ")}`,
    message: (issue) => ({
      message: `${name} must be one of ${listed(values)}, got ${shown("actual" in issue ? issue.actual : undefined)}`,
      override: true
    })
  })

/** `true` or `false`. */
export const booleanParam = (name: string, description: string) =>
  Schema.transform(literalParam(name, ["true", "false"], description).annotations({ jsonSchema: { type: "boolean" } }), Schema.Boolean, {
    strict: true,
    decode: (s) => s === "true",
    encode: (b) => (b ? "true" : "false")
  }).annotations({ title: name, description: `${description}; true or false` })

/**
 * A string parameter decoded by `schema` (a wire primitive with its own one-sentence messages);
 * the sentence is prefixed with the parameter's name.
 */
const namedPrimitive = <A, I extends string>(name: string, schema: Schema.Schema<A, I>, description: string) => {
  // The primitive's own sentence, computed by its message annotation (formatting the issue here
  // would call this annotation again).
  const own = SchemaAST.getMessageAnnotation(schema.ast)
  const sentence = (issue: ParseResult.ParseIssue): string => {
    const actual = "actual" in issue ? issue.actual : undefined
    if (Array.isArray(actual)) return `got ${shown(actual)}`
    const message: unknown = Option.isSome(own) ? own.value(issue) : undefined
    if (typeof message === "string") return message
    if (typeof message === "object" && message !== null && "message" in message && typeof message.message === "string")
      return message.message
    return `expected ${description}, got ${shown(actual)}`
  }
  return schema.annotations({
    title: name,
    description,
    message: (issue) => ({ message: sentence(issue), override: true })
  })
}

/** An address (any case in, lowercase out). */
export const addressParam = (name: (typeof ADDRESS_PARAMETERS)[number], description: string) =>
  namedPrimitive(name, Address, `${description}: 0x followed by 40 hex digits, any case`)

/** A market id: the decimal `id` or the 64-hex `marketIdHex`. */
export const marketIdParam = (name: (typeof MARKET_ID_PARAMETERS)[number], description: string) =>
  namedPrimitive(name, MarketId, `${description}: the decimal id (1, 2, ...) or the 0x + 64 hex digits marketIdHex`)

/** A 32-byte hex value (order ids). */
export const bytes32Param = (name: string, description: string) =>
  namedPrimitive(name, Bytes32, `${description}: 0x followed by 64 hex digits, any case`)

/** A transaction hash. */
export const txHashParam = (name: string, description: string) =>
  namedPrimitive(name, TxHash, `${description}: 0x followed by 64 hex digits, any case`)

const DIGITS = /^(0|[1-9][0-9]*)$/

/** Digits of the largest value an integer parameter takes (unix seconds up to year 9999: 12). */
const MAX_INTEGER_PARAM_DIGITS = 16

/**
 * A whole number in [min, max] from a string of digits. Larger inputs are compared as text first,
 * so `99999999999999999999999` is "out of range", never a rounded double.
 */
export const integerParam = (name: string, min: number, max: number, description: string) => {
  const range = `a whole number from ${min} to ${max}`
  return Schema.transformOrFail(
    // Documented as the integer it stands for (the text is its decimal digits, checked below).
    Schema.String.annotations({ jsonSchema: { type: "integer", minimum: min, maximum: max } }),
    // A parameter with a default takes its title and description from this side in OpenAPI.
    Schema.Int.pipe(Schema.between(min, max, { title: name, description: `${description}; ${range}` })),
    {
      strict: true,
      decode: (input, _, ast) => {
        // Length first: no pattern scans more than a valid value's characters (a hostile client sends 16 KiB).
        if (input.length > MAX_INTEGER_PARAM_DIGITS) {
          return ParseResult.fail(
            new ParseResult.Type(ast, input, `${name} must be ${range}, got ${shown(input)}, which is ${input.length} characters long`)
          )
        }
        if (!DIGITS.test(input)) return ParseResult.fail(new ParseResult.Type(ast, input, `${name} must be ${range}, got ${shown(input)}`))
        const value = Number(input)
        return value >= min && value <= max
          ? ParseResult.succeed(value)
          : ParseResult.fail(new ParseResult.Type(ast, input, `${name} must be ${range}, got ${shown(input)}, which is out of range`))
      },
      encode: (value) => ParseResult.succeed(String(value))
    }
  ).annotations({
    title: name,
    description: `${description}; ${range}`,
    message: (issue) => {
      const actual = "actual" in issue ? issue.actual : undefined
      const inner = issue._tag === "Type" && issue.message !== undefined ? issue.message : undefined
      return { message: typeof inner === "string" ? inner : `${name} must be ${range}, got ${shown(actual)}`, override: true }
    }
  })
}

/** Largest unix time accepted in a query (year 9999), so every value fits a JS number and a BIGINT. */
export const MAX_QUERY_TIMESTAMP = 253_402_300_799

/** Unix seconds. */
export const timestampParam = (name: string, description: string) =>
  integerParam(name, 0, MAX_QUERY_TIMESTAMP, `${description} (unix seconds)`)

/** A category or slug: lowercase letters and digits in hyphen-separated words, 1 to 64 characters. */
export const SLUG_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/

export const slugParam = (name: string, description: string) =>
  Schema.String.pipe(
    Schema.filter((s) => s.length <= 64 && SLUG_PATTERN.test(s), {
      jsonSchema: { pattern: SLUG_PATTERN.source, maxLength: 64 },
      title: name,
      description: `${description}; lowercase letters and digits in hyphen-separated words, at most 64 characters`,
      message: (issue) => ({
        message: `${name} must be lowercase letters and digits in hyphen-separated words (at most 64 characters), got ${shown("actual" in issue ? issue.actual : undefined)}`,
        override: true
      })
    })
  )

/** An event id (decimal uint256, from 1). */
export const eventIdParam = (name: string, description: string) =>
  Schema.transformOrFail(
    Schema.String.annotations({ jsonSchema: { type: "string", pattern: "^[1-9][0-9]{0,77}$" } }),
    Schema.BigIntFromSelf,
    {
      strict: true,
      decode: (input, _, ast) =>
        input.length <= MAX_INTEGER_DIGITS && /^[1-9][0-9]{0,77}$/.test(input) && BigInt(input) < 1n << 256n
          ? ParseResult.succeed(BigInt(input))
          : ParseResult.fail(new ParseResult.Type(ast, input, `${name} must be a decimal id from 1 (a uint256), got ${shown(input)}`)),
      encode: (value) => ParseResult.succeed(value.toString())
    }
  ).annotations({
    title: name,
    description: `${description}: decimal id from 1`,
    message: (issue) => ({
      message: `${name} must be a decimal id from 1 (a uint256), got ${shown("actual" in issue ? issue.actual : undefined)}`,
      override: true
    })
  })

/**
 * A query struct that rejects parameters it does not name. No `identifier`: OpenAPI lists URL
 * parameters only from an inline object schema.
 */
export const strictQuery = <F extends Schema.Struct.Fields>(fields: F) =>
  Schema.Struct(fields).annotations({ parseOptions: { onExcessProperty: "error" } })

/** Optional query parameter (absent means "no filter" or the documented default). */
export const optional = <S extends Schema.Schema.All>(schema: S) => Schema.optionalWith(schema, { exact: true })

/** Optional with a default. */
export const withDefault = <S extends Schema.Schema.AnyNoContext>(schema: S, value: () => Schema.Schema.Type<S>) =>
  Schema.optionalWith(schema, { exact: true, default: value })

/** `limit` (1..100, default 20) and `offset` (default 0). */
export const page = paginationFields

/**
 * No query parameters at all: any given is an unknown parameter, a 400 naming it. (An empty
 * `Schema.Struct` accepts every object whatever its parse options, hence the filter.)
 */
export const NoQuery = Schema.Struct({}).pipe(
  Schema.filter((params) => {
    const name = Object.keys(params)[0]
    return name === undefined
      ? true
      : new ParseResult.Pointer(
          name,
          params,
          new ParseResult.Unexpected((params as Record<string, unknown>)[name], "is unexpected, expected: none")
        )
  })
)

/** `?limit&offset` alone. */
export const PageQuery = strictQuery(page)

/** The `/api/markets/{id}` path. */
export const MarketPath = Schema.Struct({ id: marketIdParam("id", "market id") })

/** A `{address}` path. */
export const AddressPath = Schema.Struct({ address: addressParam("address", "account address") })

/** Time-window length in hours (price delta, volume window): 1 to 720, default 24. */
export const WindowQuery = strictQuery({
  window: withDefault(integerParam("window", 1, 720, "window length in hours, ending at the indexed head's time, default 24"), () => 24)
})

// ---------------------------------------------------------------------------------------------
// Parameters the backend reads as text and parses in its handler (`http/backend/lookup.ts`), so a
// malformed one is INVALID_MARKET_ID / INVALID_ADDRESS with a message that says which forms are
// accepted. Their documented patterns are what those parsers accept.

/** A market id or slug, parsed by the handler. */
export const IdOrSlug = Schema.String.annotations({
  title: "idOrSlug",
  description: "market id (decimal, or 0x followed by 64 hex digits) or the market's slug",
  jsonSchema: { type: "string", pattern: "^([1-9][0-9]*|0x[0-9a-fA-F]{64}|[a-z0-9]+(-[a-z0-9]+)*)$" }
})

/** A market id, parsed by the handler. */
export const MarketIdString = Schema.String.annotations({
  title: "marketId",
  description: "market id: decimal, or 0x followed by 64 hex digits",
  jsonSchema: { type: "string", pattern: "^([1-9][0-9]*|0x[0-9a-fA-F]{64})$" }
})

const addressTextAnnotations = {
  title: "address",
  description: "account address: 0x followed by 40 hex digits (any case; answers are lowercase)",
  jsonSchema: { type: "string", pattern: ADDRESS_INPUT_PATTERN.source }
}

/** An address, parsed by the handler. */
export const AddressString = Schema.String.annotations(addressTextAnnotations)

export const IdOrSlugPath = Schema.Struct({ idOrSlug: IdOrSlug })
export const MarketIdPath = Schema.Struct({ marketId: MarketIdString })

/**
 * An address in a path, its hex digits lowercased as it is decoded: every case of one address
 * names one resource, and so one answer-cache entry (`http/backend/edge/front-door.ts`). Only a
 * well-formed address is lowercased (`0x` and 40 hex digits): anything else reaches the handler's
 * parser (`parseAddress`) as written, so a `0X` address stays malformed, as the indexer's
 * `AddressPath` refuses it, and the refusal quotes what the client sent.
 */
const AddressTextPathValue = Schema.transform(Schema.String, Schema.String, {
  strict: true,
  decode: (s) => (/^0x[0-9a-fA-F]{40}$/.test(s) ? s.toLowerCase() : s),
  encode: (s) => s
}).annotations(addressTextAnnotations)

export const AddressTextPath = Schema.Struct({ address: AddressTextPathValue })
