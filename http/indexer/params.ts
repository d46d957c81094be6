/**
 * Query and path parameters of the indexer API, as schemas that decode the raw strings and say in
 * one sentence what is wrong with a bad one. The sentence names the parameter; the request-error
 * middleware (`request-errors.ts`) puts it in a 400 body unchanged.
 *
 * Invariants:
 * - every parameter schema decodes from a string (or is optional), so OpenAPI lists it as a
 *   string with its pattern or enum: every allowed value is documented;
 * - a parameter's error name follows from its NAME alone (`PARAMETER_ERROR`): an address-valued
 *   name always holds an address and gives `InvalidAddress`, a market-id name gives
 *   `InvalidMarketId`, every other name `InvalidParameter`. Path parameters are named so that
 *   this holds (`/api/events/{eventId}`, not `{id}`);
 * - query structs reject unknown parameters (`strictQuery`), so a misspelt filter is a 400
 *   instead of a silently unfiltered list;
 * - no pattern scans more characters than the longest valid value has (lengths are checked
 *   first), and every pattern is linear, so a hostile value costs what a short one does.
 */
import { Option, ParseResult, Schema, SchemaAST } from "effect"
import { paginationFields } from "../../schema/envelopes.js"
import { Address, Bytes32, MarketId, MAX_INTEGER_DIGITS, TxHash } from "../../schema/primitives.js"

/** How a malformed parameter is reported, by parameter name. */
export type ParameterError = "InvalidAddress" | "InvalidMarketId" | "InvalidParameter"

const ADDRESS_PARAMETERS = ["address", "owner", "trader", "maker", "taker", "provider", "account", "oracleContract"] as const
const MARKET_ID_PARAMETERS = ["id", "marketId"] as const

export const parameterError = (name: string): ParameterError =>
  (ADDRESS_PARAMETERS as ReadonlyArray<string>).includes(name)
    ? "InvalidAddress"
    : (MARKET_ID_PARAMETERS as ReadonlyArray<string>).includes(name)
      ? "InvalidMarketId"
      : "InvalidParameter"

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
  Schema.transform(literalParam(name, ["true", "false"], description), Schema.Boolean, {
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
    Schema.String.annotations({ jsonSchema: { type: "string", pattern: "^(0|[1-9][0-9]*)$" } }),
    Schema.Int.pipe(Schema.between(min, max)),
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
