/**
 * The spec's wire primitives as Effect Schemas.
 *
 * - Inputs are accepted in any letter case where the format allows it and normalized; outputs are
 *   lowercase (`Address`, `MarketIdHex`, `TxHash`, `Bytes32`, `Hex`).
 * - uint256 values are `bigint` in code and decimal strings on the wire, never JS numbers; amounts
 *   and prices are formatted from `bigint` base units by string arithmetic only.
 * - Every failure is one sentence that says what was expected, what was received and what is
 *   wrong with it, e.g. `expected a uint256 as a decimal string, got "-1", which is negative`.
 *   The sentence is the schema's `message` annotation (with `override`), so
 *   `ParseResult.TreeFormatter` and `ArrayFormatter` print exactly it and an HTTP 400 can repeat it.
 * - Request input is hostile: every parser refuses an input longer than its longest valid value
 *   before any pattern scans it (78 digits for a uint256, 40 or 64 hex digits), and every pattern
 *   is linear (no quantifier nested in or next to another that can match the same characters), so
 *   rejecting a 16,000-digit id costs what rejecting a short one does.
 * - Every schema carries `identifier`, `title` and `description` (they end up in OpenAPI), and
 *   string-encoded schemas document their wire pattern through a `jsonSchema` annotation.
 */
import { Either, ParseResult, Schema } from "effect"

// ---------------------------------------------------------------------------------------------
// Describing received values

/** `"text"` as JSON, shortened when long so messages stay readable. */
export const quote = (s: string): string => JSON.stringify(s.length > 90 ? `${s.slice(0, 87)}...` : s)

const kindOf = (u: unknown): string => {
  if (u === null) return "null"
  if (Array.isArray(u)) return "an array"
  switch (typeof u) {
    case "string":
      return "a string"
    case "number":
      return "a number"
    case "bigint":
      return "a bigint"
    case "boolean":
      return "a boolean"
    case "undefined":
      return "undefined"
    case "object":
      return "an object"
    default:
      return `a ${typeof u}`
  }
}

/** `got "x"` for strings, `got 42 (a number)` for anything else. */
const got = (u: unknown): string => {
  if (typeof u === "string") return `got ${quote(u)}`
  if (u === null || u === undefined) return `got ${String(u)}`
  if (typeof u === "number" || typeof u === "boolean") return `got ${String(u)} (${kindOf(u)})`
  if (typeof u === "bigint") return `got ${u}n (a bigint)`
  return `got ${kindOf(u)}`
}

// ---------------------------------------------------------------------------------------------
// A string-encoded primitive: one parse function, one sentence per failure

interface StringPrimitiveOptions<A, I> {
  readonly identifier: string
  readonly title: string
  readonly description: string
  /** Start of every failure sentence, e.g. `expected an address: 0x followed by 40 hex digits`. */
  readonly expected: string
  /** Appended when the input is not a string at all. */
  readonly notAString?: string
  /** JSON Schema of the wire form (pattern, examples) for OpenAPI. */
  readonly jsonSchema: Record<string, unknown>
  /** The schema of the decoded value; its own messages explain failures when encoding. */
  readonly to: Schema.Schema<A, I>
  /** Either the decoded (type-side encoded) value or the tail of the failure sentence. */
  readonly parse: (input: string) => { readonly ok: I } | { readonly problem: string }
  readonly format: (value: I) => string
}

const stringPrimitive = <A, I>(options: StringPrimitiveOptions<A, I>) => {
  const sentence = (actual: unknown, problem?: string): string => {
    if (typeof actual !== "string") return `${options.expected}, ${got(actual)}${options.notAString ?? ""}`
    return `${options.expected}, ${got(actual)}${problem ?? ""}`
  }
  const explain = (issue: ParseResult.ParseIssue): string => {
    // Encoding a value that the decoded-side schema rejects: its own message says why.
    if (issue._tag === "Transformation" && issue.kind === "Type") return ParseResult.TreeFormatter.formatIssueSync(issue.issue)
    const actual = issue._tag === "Transformation" || issue._tag === "Type" ? issue.actual : undefined
    if (typeof actual === "string") {
      const parsed = options.parse(actual)
      return sentence(actual, "problem" in parsed ? parsed.problem : undefined)
    }
    return sentence(actual)
  }
  return Schema.transformOrFail(Schema.String.annotations({ jsonSchema: { type: "string", ...options.jsonSchema } }), options.to, {
    strict: true,
    decode: (input, _, ast) => {
      const parsed = options.parse(input)
      return "ok" in parsed
        ? ParseResult.succeed(parsed.ok)
        : ParseResult.fail(new ParseResult.Type(ast, input, sentence(input, parsed.problem)))
    },
    encode: (value) => ParseResult.succeed(options.format(value))
  }).annotations({
    identifier: options.identifier,
    title: options.title,
    description: options.description,
    message: (issue) => ({ message: explain(issue), override: true })
  })
}

/** A `message` annotation for refinements: the sentence is computed from the received value. */
const overrideMessage = (explain: (actual: unknown) => string) => (issue: ParseResult.ParseIssue) => ({
  message: explain("actual" in issue ? issue.actual : undefined),
  override: true
})

// ---------------------------------------------------------------------------------------------
// Hex strings

type HexCheck = { readonly ok: `0x${string}` } | { readonly problem: string }

/**
 * `0x` + hex digits, checking the digit count with `count` (a description of the rule). A body
 * longer than `maxDigits` is refused by its length before any pattern scans it.
 */
const checkHex = (
  input: string,
  valid: (digits: number) => boolean,
  count: (digits: number) => string,
  maxDigits = Number.POSITIVE_INFINITY
): HexCheck => {
  if (input === "") return { problem: ", which is empty" }
  if (input.startsWith("0X")) return { problem: `, whose prefix is "0X"; write a lowercase "0x"` }
  if (!input.startsWith("0x")) return { problem: ", which does not start with 0x" }
  const body = input.slice(2)
  if (body.length > maxDigits) return { problem: ` (${count(body.length)})` }
  const bad = /[^0-9a-fA-F]/.exec(body)
  if (bad !== null) {
    const what = /\s/.test(bad[0]) ? "whitespace" : `a non-hex character ${quote(bad[0])}`
    return { problem: `, which contains ${what} at position ${bad.index + 2}` }
  }
  if (!valid(body.length)) return { problem: ` (${count(body.length)})` }
  return { ok: `0x${body.toLowerCase()}` }
}

const digitsWord = (n: number) => `${n} hex digit${n === 1 ? "" : "s"}`

/** The decoded side of a hex primitive: `0x${string}`, lowercase, checked by `pattern`. */
const lowercaseHex = (identifier: string, pattern: RegExp, what: string) =>
  Schema.TemplateLiteral("0x", Schema.String).pipe(
    Schema.filter((s) => pattern.test(s), {
      identifier: `${identifier}Lowercase`,
      description: `${what}, lowercase`,
      message: overrideMessage((actual) => `expected ${what} in lowercase, ${got(actual)}`)
    })
  )

const fixedHex = (identifier: string, title: string, what: string, digits: number, description: string) => {
  const pattern = new RegExp(`^0x[0-9a-f]{${digits}}$`)
  return stringPrimitive({
    identifier,
    title,
    description,
    expected: `expected ${what}: 0x followed by ${digits} hex digits`,
    jsonSchema: { pattern: `^0x[0-9a-fA-F]{${digits}}$`, minLength: digits + 2, maxLength: digits + 2 },
    to: lowercaseHex(identifier, pattern, what),
    parse: (input) => checkHex(input, (n) => n === digits, digitsWord, digits),
    format: (value) => value.toLowerCase()
  })
}

/** A decoded address: `0x` + 40 lowercase hex digits. */
export const ADDRESS_PATTERN = /^0x[0-9a-f]{40}$/

/** An address as a client or an operator may write it: `0x` + 40 hex digits in any letter case. */
export const ADDRESS_INPUT_PATTERN = /^0x[0-9a-fA-F]{40}$/

/** The decoded side of `Address`: a lowercase, branded `0x${string}` (assignable to viem's `Address`). */
export const AddressFromSelf = lowercaseHex("Address", ADDRESS_PATTERN, "an address").pipe(Schema.brand("Address"))

const ADDRESS_EXPECTED = "expected an address: 0x followed by 40 hex digits"

const checkAddress = (input: string): HexCheck => checkHex(input, (n) => n === 40, digitsWord, 40)

/**
 * THE address parser: every address read from outside (HTTP parameters and bodies, WebSocket
 * subjects, configuration) is read by it, through `Address` or directly. It accepts exactly
 * `ADDRESS_INPUT_PATTERN` (the prefix itself must be `0x`; the checksum is not verified) and
 * answers the lowercase address (`ADDRESS_PATTERN`), or the one sentence that says what is wrong.
 * The length is checked before any pattern scans the input.
 */
export const parseAddress = (input: string): Either.Either<Address, string> => {
  const parsed = checkAddress(input)
  return "ok" in parsed ? Either.right(parsed.ok as Address) : Either.left(`${ADDRESS_EXPECTED}, ${got(input)}${parsed.problem}`)
}

/**
 * An EVM address. On the wire: `0x` + 40 hex digits in any letter case (checksummed addresses are
 * accepted, the checksum is not verified; the prefix itself must be `0x`, as EIP-55 writes it);
 * decoded and encoded: lowercase, branded `Address`.
 */
export const Address = stringPrimitive({
  identifier: "Address",
  title: "Address",
  description: "EVM address: 0x followed by 40 hex digits; any case accepted, always lowercase in responses",
  expected: ADDRESS_EXPECTED,
  jsonSchema: {
    pattern: ADDRESS_INPUT_PATTERN.source,
    minLength: 42,
    maxLength: 42,
    examples: ["0x00000000000000000000000000000000000000aa"]
  },
  to: AddressFromSelf,
  parse: checkAddress,
  format: (value) => value.toLowerCase() as `0x${string}`
})
export type Address = typeof Address.Type

/** Decodes `input` as an address or throws an `Error` whose message says what is wrong. */
export const toAddress = (input: string): Address => Schema.decodeSync(Address)(input)

/** Whether `u` is already a decoded (lowercase) address. */
export const isAddress = Schema.is(AddressFromSelf)

/** A market id in its 64-hex form (`marketIdHex`): any case in, lowercase out. */
export const MarketIdHex = fixedHex(
  "MarketIdHex",
  "Market id (hex)",
  "a market id",
  64,
  "market id as 0x followed by 64 hex digits (the uint256 id, zero-padded); any case accepted, lowercase in responses"
)
export type MarketIdHex = typeof MarketIdHex.Type

/** A 32-byte value (order id, pool id, role, hash). */
export const Bytes32 = fixedHex("Bytes32", "Bytes32", "a 32-byte value", 64, "32 bytes as 0x followed by 64 hex digits, lowercase")
export type Bytes32 = typeof Bytes32.Type

/** A transaction hash. */
export const TxHash = fixedHex(
  "TxHash",
  "Transaction hash",
  "a transaction hash",
  64,
  "transaction hash: 0x followed by 64 hex digits, lowercase"
)
export type TxHash = typeof TxHash.Type

/** Arbitrary bytes: `0x` + an even number of hex digits (`0x` alone is the empty byte string). */
export const Hex = stringPrimitive({
  identifier: "Hex",
  title: "Hex bytes",
  description: "bytes as 0x followed by an even number of hex digits, lowercase",
  expected: "expected hex bytes: 0x followed by an even number of hex digits",
  jsonSchema: { pattern: "^0x([0-9a-fA-F]{2})*$" },
  to: lowercaseHex("Hex", /^0x(?:[0-9a-f]{2})*$/, "hex bytes"),
  parse: (input) =>
    checkHex(
      input,
      (n) => n % 2 === 0,
      (n) => `${digitsWord(n)}, an odd number`
    ),
  format: (value) => value.toLowerCase() as `0x${string}`
})
export type Hex = typeof Hex.Type

// ---------------------------------------------------------------------------------------------
// Decimal strings

export const MAX_UINT256 = (1n << 256n) - 1n
export const MIN_INT256 = -(1n << 255n)
export const MAX_INT256 = (1n << 255n) - 1n

interface DecimalRules {
  /** Whether a leading `-` is allowed. */
  readonly signed: boolean
  /** Fraction digits: none allowed, at most `max`, or exactly `max`. */
  readonly fraction: "none" | { readonly max: number; readonly exact: boolean }
}

interface DecimalParts {
  readonly negative: boolean
  readonly integer: string
  readonly fraction: string
}

/** Digits of the largest 256-bit integer (2^256 - 1 has 78): no integer part of a value here is longer. */
export const MAX_INTEGER_DIGITS = 78

/** The longest string that can be a decimal under `rules`: sign, 78 digits, point and fraction. */
export const decimalMaxLength = (rules: DecimalRules): number =>
  (rules.signed ? 1 : 0) + MAX_INTEGER_DIGITS + (rules.fraction === "none" ? 0 : 1 + rules.fraction.max)

/**
 * Splits a canonical decimal string, or says (as a relative clause, ", which ...") what keeps it
 * from being one: empty, whitespace, sign, hex, exponent, stray characters, fraction rules,
 * leading zeros.
 */
const parseDecimal = (input: string, rules: DecimalRules): { readonly ok: DecimalParts } | { readonly problem: string } => {
  if (input === "") return { problem: ", which is empty" }
  // Checked before any pattern runs, so rejecting a hostile 16,000-digit id costs what a short one does.
  const maxLength = decimalMaxLength(rules)
  if (input.length > maxLength) {
    return {
      problem: `, which is ${input.length} characters long; at most ${maxLength} fit (a 256-bit integer has at most ${MAX_INTEGER_DIGITS} digits)`
    }
  }
  if (/^\s|\s$/.test(input)) return { problem: ", which has leading or trailing whitespace" }
  if (/\s/.test(input)) return { problem: ", which contains whitespace" }
  if (input.startsWith("+")) return { problem: `, which starts with a "+" sign; write the digits only` }
  const negative = input.startsWith("-")
  if (negative && !rules.signed) return { problem: ", which is negative" }
  const body = negative ? input.slice(1) : input
  if (/^0[xX]/.test(body)) return { problem: ", which is hexadecimal; only decimal digits are accepted" }
  if (/^(?:\d+(?:\.\d*)?|\.\d+)[eE][+-]?\d*$/.test(body)) return { problem: ", which uses exponent notation; write out all the digits" }
  const match = /^(\d*)(?:\.(\d*))?$/.exec(body)
  if (match === null) {
    const bad = /[^0-9.]/.exec(body)
    return bad === null
      ? { problem: ", which has more than one decimal point" }
      : { problem: `, which contains ${quote(bad[0])}, not a decimal digit` }
  }
  const integer = match[1] ?? ""
  const fraction = match[2]
  if (integer === "") return { problem: ", which has no digits before the decimal point" }
  if (fraction !== undefined) {
    if (rules.fraction === "none") return { problem: ", which is fractional; a whole number is expected" }
    if (fraction === "") return { problem: ", which ends with a decimal point" }
    if (fraction.length > rules.fraction.max) {
      return { problem: `, which has ${fraction.length} fraction digits; at most ${rules.fraction.max} are allowed` }
    }
    if (rules.fraction.exact && fraction.length !== rules.fraction.max) {
      return {
        problem: `, which has ${fraction.length} fraction digit${fraction.length === 1 ? "" : "s"}; exactly ${rules.fraction.max} are required`
      }
    }
  } else if (rules.fraction !== "none" && rules.fraction.exact) {
    return { problem: `, which has no fraction digits; exactly ${rules.fraction.max} are required` }
  }
  if (integer.length > 1 && integer.startsWith("0")) return { problem: ", which has leading zeros" }
  return { ok: { negative, integer, fraction: fraction ?? "" } }
}

/** The base-units value of parsed parts with `decimals` fraction digits. */
const toBaseUnits = (parts: DecimalParts, decimals: number): bigint => {
  const magnitude = BigInt(parts.integer + parts.fraction.padEnd(decimals, "0"))
  return parts.negative ? -magnitude : magnitude
}

/** What a value outside the range is, as ", which is ..." clauses. */
interface Bounds {
  readonly min: bigint
  readonly max: bigint
  /** e.g. "2^256 or more (the largest uint256 is 2^256 - 1)" */
  readonly tooLarge: string
  /** e.g. "negative" */
  readonly tooSmall: string
}

const UINT256_BOUNDS: Bounds = {
  min: 0n,
  max: MAX_UINT256,
  tooLarge: "2^256 or more (the largest uint256 is 2^256 - 1)",
  tooSmall: "negative"
}
const INT256_BOUNDS: Bounds = {
  min: MIN_INT256,
  max: MAX_INT256,
  tooLarge: "2^255 or more (the largest int256 is 2^255 - 1)",
  tooSmall: "less than -2^255 (the smallest int256)"
}

const rangeProblem = (value: bigint, bounds: Bounds): string | undefined => {
  if (value > bounds.max) return `, which is ${bounds.tooLarge}`
  if (value < bounds.min) return `, which is ${bounds.tooSmall}`
  return undefined
}

const bigintRange = (identifier: string, title: string, min: bigint, max: bigint, range: string) =>
  Schema.BigIntFromSelf.pipe(
    Schema.filter((v) => v >= min && v <= max, {
      identifier,
      title,
      description: `bigint in ${range}`,
      message: overrideMessage((actual) =>
        typeof actual === "bigint"
          ? `expected ${title} (${range}), got ${actual}n${actual < min ? ", which is too small" : ", which is too large"}`
          : `expected ${title} (a bigint in ${range}), ${got(actual)}`
      )
    })
  )

/** A range-checked uint256 `bigint` (for values already in code). */
export const Uint256FromSelf = bigintRange("Uint256FromSelf", "a uint256", 0n, MAX_UINT256, "0 to 2^256 - 1")

/** A range-checked int256 `bigint`. */
export const Int256FromSelf = bigintRange("Int256FromSelf", "an int256", MIN_INT256, MAX_INT256, "-2^255 to 2^255 - 1")

const integerString = (
  identifier: string,
  title: string,
  description: string,
  what: string,
  to: Schema.Schema<bigint>,
  rules: DecimalRules,
  bounds: Bounds
) =>
  stringPrimitive({
    identifier,
    title,
    description,
    expected: `expected ${what}`,
    notAString: `; ${title} values are decimal strings, never JSON numbers`,
    jsonSchema: { pattern: rules.signed ? "^(0|-?[1-9][0-9]*)$" : "^(0|[1-9][0-9]*)$", examples: ["1500000"] },
    to,
    parse: (input) => {
      const parsed = parseDecimal(input, rules)
      if ("problem" in parsed) return parsed
      if (parsed.ok.negative && /^0+$/.test(parsed.ok.integer)) return { problem: ', which is a negative zero; write "0"' }
      const value = toBaseUnits(parsed.ok, 0)
      const problem = rangeProblem(value, bounds)
      return problem === undefined ? { ok: value } : { problem }
    },
    format: (value) => value.toString()
  })

/**
 * A uint256 as a decimal string of digits on the wire and a `bigint` in code. Rejected, each with
 * its own reason: empty, whitespace, negative, `+` sign, fraction, exponent, hex (`0x` is not
 * accepted: the spec serializes uint256 amounts as decimal strings only), leading zeros (so that
 * the wire form is canonical and encode/decode round-trip), and values of 2^256 or more.
 */
export const Uint256 = integerString(
  "Uint256",
  "uint256",
  "unsigned 256-bit integer as a decimal string of digits (no sign, fraction, exponent or leading zeros)",
  "a uint256 as a decimal string",
  Uint256FromSelf,
  { signed: false, fraction: "none" },
  UINT256_BOUNDS
)

/** An int256 as a decimal string (optional leading `-`) and a `bigint` in code. */
export const Int256 = integerString(
  "Int256",
  "int256",
  "signed 256-bit integer as a decimal string (optional leading minus, no fraction, exponent or leading zeros)",
  "an int256 as a decimal string",
  Int256FromSelf,
  { signed: true, fraction: "none" },
  INT256_BOUNDS
)

// ---------------------------------------------------------------------------------------------
// Market ids

/** A market id in code: uint256, 1-indexed. */
export const MarketIdFromSelf = bigintRange("MarketIdFromSelf", "a market id", 1n, MAX_UINT256, "1 to 2^256 - 1")

/**
 * A market id as clients send it: the decimal `id` (1-indexed uint256, no leading zeros, sign or
 * fraction) or the 64-hex `marketIdHex` form, any case. Decodes to the `bigint` id; encodes as
 * the decimal string (use `marketIdToHex` for the hex form).
 */
export const MarketId = stringPrimitive({
  identifier: "MarketId",
  title: "Market id",
  description: "market id: decimal string (1, 2, ...) or 0x followed by 64 hex digits",
  expected: "expected a market id: a decimal id from 1, or 0x followed by 64 hex digits",
  jsonSchema: {
    pattern: "^([1-9][0-9]*|0x[0-9a-fA-F]{64})$",
    examples: ["42", "0x000000000000000000000000000000000000000000000000000000000000002a"]
  },
  to: MarketIdFromSelf,
  parse: (input) => {
    if (/^0[xX]/.test(input)) {
      const hex = checkHex(input, (n) => n === 64, digitsWord, 64)
      if ("problem" in hex) return hex
      const value = BigInt(hex.ok)
      return value === 0n ? { problem: ", which is zero; market ids start at 1" } : { ok: value }
    }
    const parsed = parseDecimal(input, { signed: false, fraction: "none" })
    if ("problem" in parsed) return parsed
    const value = toBaseUnits(parsed.ok, 0)
    if (value === 0n) return { problem: ", which is zero; market ids start at 1" }
    const problem = rangeProblem(value, UINT256_BOUNDS)
    return problem === undefined ? { ok: value } : { problem }
  },
  format: (value) => value.toString()
})
export type MarketId = typeof MarketId.Type

/** `0x` + 64 lowercase hex digits. */
export const marketIdToHex = (id: bigint): `0x${string}` => {
  if (id < 0n || id > MAX_UINT256) throw new RangeError(`market id ${id} is outside 0 .. 2^256 - 1`)
  return `0x${id.toString(16).padStart(64, "0")}`
}

/** The decimal `id` form. */
export const marketIdToDecimal = (id: bigint): string => {
  if (id < 0n || id > MAX_UINT256) throw new RangeError(`market id ${id} is outside 0 .. 2^256 - 1`)
  return id.toString()
}

// ---------------------------------------------------------------------------------------------
// Fixed-point amounts and prices

const checkDecimals = (decimals: number): void => {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 77) {
    throw new RangeError(`decimals must be a whole number from 0 to 77, got ${decimals}`)
  }
}

/**
 * Formats `raw` base units with exactly `decimals` fraction digits, by string arithmetic:
 * `formatUnits(5n * 10n ** 15n, 18)` is `"0.005000000000000000"`, `formatUnits(-500000n, 6)` is
 * `"-0.500000"`. With `decimals` 0 there is no decimal point.
 */
export const formatUnits = (raw: bigint, decimals: number): string => formatUnitsText(raw.toString(), decimals)

/**
 * `formatUnits` of an integer written as its canonical decimal text (what `bigint.toString()` and
 * Postgres' NUMERIC output of a scale-0 value write: digits, a leading "-" when negative, no
 * leading zeros), without parsing it: for answers assembled from database text.
 */
export const formatUnitsText = (raw: string, decimals: number): string => {
  checkDecimals(decimals)
  const negative = raw.charCodeAt(0) === 45 // "-"
  const digits = (negative ? raw.slice(1) : raw).padStart(decimals + 1, "0")
  const whole = digits.slice(0, digits.length - decimals)
  const fraction = digits.slice(digits.length - decimals)
  return `${negative ? "-" : ""}${whole}${decimals > 0 ? `.${fraction}` : ""}`
}

/** Six-decimal amounts, the indexer's wire format: `125000000000n` -> `"125000.000000"`, `1n` -> `"0.000001"`. */
export const formatUnits6 = (raw: bigint): string => formatUnits(raw, 6)

/** Thrown by `parseUnits` and `parseUnits6`; the message says what is wrong with the input. */
export class DecimalFormatError extends Error {
  override readonly name = "DecimalFormatError"
  constructor(
    readonly input: string,
    message: string
  ) {
    super(message)
  }
}

/**
 * Parses a decimal string with at most `decimals` fraction digits (optional leading `-`) into
 * base units: `parseUnits("1.5", 6)` is `1500000n`. Throws `DecimalFormatError` for anything
 * else (more fraction digits than `decimals`, exponent, sign `+`, whitespace, ...), never rounds.
 */
export const parseUnits = (input: string, decimals: number): bigint => {
  checkDecimals(decimals)
  const parsed = parseDecimal(input, { signed: true, fraction: decimals === 0 ? "none" : { max: decimals, exact: false } })
  if ("problem" in parsed) {
    throw new DecimalFormatError(
      input,
      `expected a decimal number with at most ${decimals} fraction digits, got ${quote(input)}${parsed.problem}`
    )
  }
  return toBaseUnits(parsed.ok, decimals)
}

/** `parseUnits(input, 6)`: `"125000.000000"` -> `125000000000n`; `"1.1234567"` throws (7 fraction digits). */
export const parseUnits6 = (input: string): bigint => parseUnits(input, 6)

const fixedPoint = (options: {
  readonly identifier: string
  readonly title: string
  readonly description: string
  readonly what: string
  readonly to: Schema.Schema<bigint>
  readonly signed: boolean
  readonly exact: boolean
  readonly bounds: Bounds
  readonly examples: ReadonlyArray<string>
}) =>
  stringPrimitive({
    identifier: options.identifier,
    title: options.title,
    description: options.description,
    expected: `expected ${options.what}`,
    notAString: "; amounts are decimal strings, never JSON numbers",
    jsonSchema: {
      pattern: `^${options.signed ? "-?" : ""}(0|[1-9][0-9]*)${options.exact ? "\\.[0-9]{6}" : "(\\.[0-9]{1,6})?"}$`,
      examples: options.examples
    },
    to: options.to,
    parse: (input) => {
      const parsed = parseDecimal(input, { signed: options.signed, fraction: { max: 6, exact: options.exact } })
      if ("problem" in parsed) return parsed
      const value = toBaseUnits(parsed.ok, 6)
      const problem = rangeProblem(value, options.bounds)
      return problem === undefined ? { ok: value } : { problem }
    },
    format: formatUnits6
  })

/**
 * An amount of a 6-decimal token (collateral or outcome token): on the wire a decimal string with
 * exactly six fraction digits (`"125000.000000"`), in code the raw base units (`125000000000n`,
 * a uint256).
 */
export const Amount6 = fixedPoint({
  identifier: "Amount6",
  title: "Amount (6 decimals)",
  description: 'token amount as a decimal string with exactly six fraction digits, e.g. "125000.000000"',
  what: "an amount as a decimal string with exactly 6 fraction digits",
  to: Uint256FromSelf,
  signed: false,
  exact: true,
  bounds: UINT256_BOUNDS,
  examples: ["125000.000000", "0.000001"]
})

/** A signed six-decimal amount (PnL, deltas): `"-0.500000"` <-> `-500000n` (an int256). */
export const SignedAmount6 = fixedPoint({
  identifier: "SignedAmount6",
  title: "Signed amount (6 decimals)",
  description: 'signed token amount (e.g. PnL) as a decimal string with exactly six fraction digits, e.g. "-0.500000"',
  what: "a signed amount as a decimal string with exactly 6 fraction digits",
  to: Int256FromSelf,
  signed: true,
  exact: true,
  bounds: INT256_BOUNDS,
  examples: ["-0.500000", "12.340000"]
})

/**
 * An amount as a client may write it in a request: up to six fraction digits (`"10"`, `"10.5"`,
 * `"10.500000"`), decoded to base units; encoded with exactly six.
 */
export const Amount6Input = fixedPoint({
  identifier: "Amount6Input",
  title: "Amount (up to 6 decimals)",
  description: 'token amount as a decimal string with at most six fraction digits, e.g. "10.5"',
  what: "an amount as a decimal string with at most 6 fraction digits",
  to: Uint256FromSelf,
  signed: false,
  exact: false,
  bounds: UINT256_BOUNDS,
  examples: ["10.5", "10.500000"]
})

/** On-chain prices are scaled by 1e6: `1_000_000n` is 1.00 USDC per share (100%). */
export const PRICE_SCALE = 1_000_000n

/** A 1e6-scaled price in code: 0 to 1e6 (on-chain YES prices are clamped to this range). */
export const PriceFromSelf = bigintRange("PriceFromSelf", "a price", 0n, PRICE_SCALE, "0 to 1000000, i.e. 0.00 to 1.00")

/**
 * Formats a 1e6-scaled price with exactly six fraction digits: `620000n` -> `"0.620000"`.
 *
 * Why six digits and not a trimmed `"0.62"`: on-chain prices have exactly six decimals (the AMM
 * reports e.g. 623456 = 0.623456), so six digits are lossless where a fixed shorter precision
 * would round; it is the same fixed form as the indexer's six-decimal amounts, so clients parse a
 * single format with one function, and a fixed width sorts and diffs as text. Decoding also
 * accepts the trimmed forms (`"0.62"`, `"1"`), so peers that write those are understood.
 */
export const formatPrice = (raw: bigint): string => formatUnits(raw, 6)

/** Parses a price written with up to six fraction digits into 1e6-scaled units; throws `DecimalFormatError`. */
export const parsePrice = (input: string): bigint => {
  const raw = parseUnits(input, 6)
  if (raw < 0n || raw > PRICE_SCALE) throw new DecimalFormatError(input, `expected a price from 0 to 1, got ${quote(input)}`)
  return raw
}

/**
 * What a trade paid or received per share, in USDC (6 decimals): unbounded above, unlike `Price`.
 * A probability is 0..1, but a trade is the ratio of what moved: an AMM pool nothing arbitrages can
 * price a share above what a split costs (1 USDC), so a buy can pay, and a sell receive, more than 1
 * (the devnet fixture sells 100 YES for 109.286429 USDC into a pool priced above 1).
 */
export const TradePrice = Amount6.annotations({
  identifier: "TradePrice",
  title: "Trade price",
  description:
    "USDC per share paid or received, a decimal string with six fraction digits; above 1 when the pool priced the share above what a split costs",
  examples: [620_000n, 1_092_864n]
})

/**
 * A price in USDC per share: decimal string on the wire (written with six fraction digits,
 * `"0.620000"`; up to six accepted when decoding) <-> `bigint` scaled by 1e6, within 0..1.
 */
export const Price = fixedPoint({
  identifier: "Price",
  title: "Price",
  description: 'price in USDC per share (probability) as a decimal string from 0 to 1; responses use six fraction digits, e.g. "0.620000"',
  what: "a price as a decimal string from 0 to 1 with at most 6 fraction digits",
  to: PriceFromSelf,
  signed: false,
  exact: false,
  bounds: { min: 0n, max: PRICE_SCALE, tooLarge: "more than 1 (prices are between 0 and 1)", tooSmall: "negative" },
  examples: ["0.620000"]
})

// ---------------------------------------------------------------------------------------------
// Money

export const MoneyUnit = Schema.Literal("USDC", "ETH", "YES", "NO").annotations({
  identifier: "MoneyUnit",
  title: "Money unit",
  description: "unit of a Money amount: USDC (collateral), ETH, YES or NO (outcome tokens)",
  message: overrideMessage((actual) => `expected a money unit "USDC", "ETH", "YES" or "NO", ${got(actual)}`)
})
export type MoneyUnit = typeof MoneyUnit.Type

/**
 * Money: `{ decimal, raw, decimals, unit }`. `raw` is the signed integer amount in base units,
 * `decimal` the same amount with exactly `decimals` fraction digits; the two must agree.
 */
export const Money = Schema.Struct({
  decimal: Schema.String.annotations({
    description: 'the amount in units, with exactly `decimals` fraction digits, e.g. "10000.000000"',
    jsonSchema: { type: "string", pattern: "^-?(0|[1-9][0-9]*)(\\.[0-9]+)?$" }
  }),
  raw: Schema.String.pipe(
    Schema.pattern(/^(0|-?[1-9][0-9]*)$/, {
      description: 'the amount in base units as an integer decimal string, e.g. "10000000000"',
      message: overrideMessage((actual) => `expected Money.raw as an integer decimal string of base units, ${got(actual)}`)
    })
  ),
  decimals: Schema.Int.pipe(
    Schema.between(0, 77, {
      description: "number of fraction digits of the unit (6 for USDC and outcome tokens, 18 for ETH)",
      message: overrideMessage((actual) => `expected Money.decimals as a whole number from 0 to 77, ${got(actual)}`)
    })
  ),
  unit: MoneyUnit
}).pipe(
  Schema.filter((m) => m.decimal === formatUnits(BigInt(m.raw), m.decimals), {
    identifier: "Money",
    title: "Money",
    description: "an amount of a token or ETH: decimal (string), raw (string of base units), decimals (integer), unit (string)",
    jsonSchema: {},
    message: (issue) => {
      // Only the cross-field check is explained here; field failures keep their own messages.
      if (issue._tag !== "Refinement" || issue.kind !== "Predicate") return "expected Money { decimal, raw, decimals, unit }"
      const m = issue.actual as { readonly decimal: string; readonly raw: string; readonly decimals: number }
      const expected = formatUnits(BigInt(m.raw), m.decimals)
      return `Money.decimal ${quote(m.decimal)} does not match raw ${quote(m.raw)} with ${m.decimals} decimals (expected ${quote(expected)})`
    }
  })
)
export type Money = typeof Money.Type

/**
 * Builds a Money value from base units: `money(10_000_000_000n, 6, "USDC")` is
 * `{ decimal: "10000.000000", raw: "10000000000", decimals: 6, unit: "USDC" }`.
 */
export const money = (raw: bigint, decimals: number, unit: MoneyUnit): Money => ({
  decimal: formatUnits(raw, decimals),
  raw: raw.toString(),
  decimals,
  unit
})

// ---------------------------------------------------------------------------------------------
// Integers carried as JSON numbers

const nonNegativeSafeInteger = (identifier: string, title: string, what: string, description: string) => {
  const explain = (actual: unknown): string => {
    const head = `expected ${what} (a non-negative whole number)`
    if (typeof actual !== "number") return `${head}, ${got(actual)}${typeof actual === "string" ? " (a string)" : ""}`
    if (Number.isNaN(actual)) return `${head}, got NaN`
    if (!Number.isFinite(actual)) return `${head}, got ${actual}, which is not finite`
    if (!Number.isInteger(actual)) return `${head}, got ${actual}, which is fractional`
    if (actual < 0) return `${head}, got ${actual}, which is negative`
    if (!Number.isSafeInteger(actual)) return `${head}, got ${actual}, which is larger than 2^53 - 1`
    return `${head}, got ${actual}`
  }
  return Schema.Number.pipe(
    Schema.filter((n) => Number.isSafeInteger(n) && n >= 0, {
      identifier,
      title,
      description,
      jsonSchema: { type: "integer", minimum: 0, title, description },
      message: overrideMessage(explain)
    })
  )
}

/** Unix time in whole seconds, a JSON integer (safe: unix seconds fit in a double). */
export const Timestamp = nonNegativeSafeInteger("Timestamp", "Timestamp", "a unix timestamp in seconds", "unix time in seconds (integer)")
export type Timestamp = typeof Timestamp.Type

/** A block number, a JSON integer. */
export const BlockNumber = nonNegativeSafeInteger("BlockNumber", "Block number", "a block number", "block number (non-negative integer)")
export type BlockNumber = typeof BlockNumber.Type

const safeIntegerFromString = (identifier: string, title: string, what: string, to: Schema.Schema<number>) =>
  stringPrimitive({
    identifier,
    title,
    description: `${what} as a string of decimal digits (query parameters)`,
    expected: `expected ${what} as a string of decimal digits`,
    jsonSchema: { pattern: "^(0|[1-9][0-9]*)$" },
    to,
    parse: (input) => {
      const parsed = parseDecimal(input, { signed: false, fraction: "none" })
      if ("problem" in parsed) return parsed
      const value = Number(parsed.ok.integer)
      return Number.isSafeInteger(value) ? { ok: value } : { problem: ", which is larger than 2^53 - 1" }
    },
    format: (value) => String(value)
  })

/** A unix timestamp from a query string (`since=1700000000`). */
export const TimestampFromString = safeIntegerFromString("TimestampFromString", "Timestamp", "a unix timestamp in seconds", Timestamp)

/** A block number from a query string. */
export const BlockNumberFromString = safeIntegerFromString("BlockNumberFromString", "Block number", "a block number", BlockNumber)

// ---------------------------------------------------------------------------------------------
// Localized strings

/** User-visible text: a translation key and the text to show when no translation exists. */
export const LocalizedString = Schema.Struct({
  key: Schema.String.annotations({ description: 'translation key, e.g. "market.42.title"' }),
  fallback: Schema.String.annotations({ description: "text shown when the key has no translation" })
}).annotations({
  identifier: "LocalizedString",
  title: "Localized string",
  description: "user-visible text: a translation key and its fallback text"
})
export type LocalizedString = typeof LocalizedString.Type

export const localized = (key: string, fallback: string): LocalizedString => ({ key, fallback })
