/**
 * Wire primitives of the spec as Effect Schemas.
 *
 * Inputs are accepted in any letter case and normalized; outputs are lowercase. uint256 values
 * are `bigint` in code and decimal strings on the wire, never JS numbers. Every failure message
 * says what was expected and what was wrong with the input, so a 400 can simply repeat it.
 */
import { ParseResult, Schema } from "effect"

const quote = (s: string) => JSON.stringify(s.length > 80 ? `${s.slice(0, 77)}...` : s)

/** Describes why `input` is not `0x` + `digits` hex digits. */
const hexProblem = (input: string, digits: number): string | undefined => {
  if (!input.startsWith("0x") && !input.startsWith("0X")) return `must start with 0x`
  const body = input.slice(2)
  const bad = /[^0-9a-fA-F]/.exec(body)
  if (bad !== null) return `contains a non-hex character ${quote(bad[0])}`
  if (body.length !== digits) return `has ${body.length} hex digits`
  return undefined
}

/** A fixed-length hex string, any case in, lowercase out. */
const fixedHex = (digits: number, identifier: string, what: string) =>
  Schema.transformOrFail(Schema.String, Schema.String, {
    strict: true,
    decode: (input, _, ast) => {
      const problem = hexProblem(input, digits)
      return problem === undefined
        ? ParseResult.succeed(input.toLowerCase())
        : ParseResult.fail(new ParseResult.Type(ast, input, `expected ${what}: 0x followed by ${digits} hex digits, got ${quote(input)}, which ${problem}`))
    },
    encode: (value) => ParseResult.succeed(value.toLowerCase())
  }).annotations({ identifier, description: `${what}: 0x followed by ${digits} hex digits, lowercase` })

/** An EVM address: `0x` + 40 hex digits; any case accepted, lowercase out. */
export const Address = fixedHex(40, "Address", "an address")
export type Address = typeof Address.Type

/** A market id in its 64-hex form (`marketIdHex`). */
export const MarketIdHex = fixedHex(64, "MarketIdHex", "a market id")

/** A 32-byte hash (transaction hash, order id, pool id, role). */
export const Bytes32 = fixedHex(64, "Bytes32", "a 32-byte hex value")
export const TxHash = fixedHex(64, "TxHash", "a transaction hash")

export const MAX_UINT256 = (1n << 256n) - 1n
export const MIN_INT256 = -(1n << 255n)
export const MAX_INT256 = (1n << 255n) - 1n

/** Why `input` is not a plain non-negative decimal integer, or undefined when it is one. */
const uintProblem = (input: string): string | undefined => {
  if (input === "") return "it is empty"
  if (input.trim() !== input) return "it has surrounding whitespace"
  if (input.startsWith("-")) return "it is negative"
  if (input.startsWith("+")) return "it has a sign"
  if (/^\d+\.\d*$|^\.\d+$/.test(input)) return "it is fractional"
  if (/^\d+(\.\d+)?[eE][+-]?\d+$/.test(input)) return "it uses an exponent"
  if (/^0[xX]/.test(input)) return "it is hex, not decimal"
  if (!/^\d+$/.test(input)) return "it is not a decimal integer"
  if (input.length > 1 && input.startsWith("0")) return "it has leading zeros"
  return undefined
}

/** A uint256 as a decimal string on the wire and a `bigint` in code. */
export const Uint256 = Schema.transformOrFail(Schema.String, Schema.BigIntFromSelf, {
  strict: true,
  decode: (input, _, ast) => {
    const problem = uintProblem(input)
    if (problem !== undefined) {
      return ParseResult.fail(new ParseResult.Type(ast, input, `expected a uint256 as a decimal string, got ${quote(input)}: ${problem}`))
    }
    const value = BigInt(input)
    return value > MAX_UINT256
      ? ParseResult.fail(new ParseResult.Type(ast, input, `expected a uint256 as a decimal string, got ${quote(input)}: it is larger than 2^256 - 1`))
      : ParseResult.succeed(value)
  },
  encode: (value) => ParseResult.succeed(value.toString())
}).annotations({ identifier: "Uint256", description: "unsigned 256-bit integer as a decimal string" })

/** A range-checked uint256 `bigint` (for values already in code). */
export const Uint256FromSelf = Schema.BigIntFromSelf.pipe(
  Schema.filter((v) => (v >= 0n && v <= MAX_UINT256) || `expected a uint256, got ${v} (outside 0 .. 2^256 - 1)`)
).annotations({ identifier: "Uint256FromSelf" })

/** An int256 as a decimal string (optional leading minus) and a `bigint` in code. */
export const Int256 = Schema.transformOrFail(Schema.String, Schema.BigIntFromSelf, {
  strict: true,
  decode: (input, _, ast) => {
    const negative = input.startsWith("-")
    const problem = uintProblem(negative ? input.slice(1) : input)
    if (problem !== undefined) {
      return ParseResult.fail(new ParseResult.Type(ast, input, `expected an int256 as a decimal string, got ${quote(input)}: ${problem}`))
    }
    const value = BigInt(input)
    return value < MIN_INT256 || value > MAX_INT256
      ? ParseResult.fail(new ParseResult.Type(ast, input, `expected an int256 as a decimal string, got ${quote(input)}: it is out of range`))
      : ParseResult.succeed(value)
  },
  encode: (value) => ParseResult.succeed(value.toString())
}).annotations({ identifier: "Int256", description: "signed 256-bit integer as a decimal string" })

/**
 * A market id as clients send it: the decimal `id` or the 64-hex `marketIdHex`. Market ids are
 * 1-indexed, so 0 is rejected. Decodes to the bigint id; encodes as the decimal string.
 */
export const MarketId = Schema.transformOrFail(Schema.String, Schema.BigIntFromSelf, {
  strict: true,
  decode: (input, _, ast) => {
    const fail = (why: string) =>
      ParseResult.fail(new ParseResult.Type(ast, input, `expected a market id (a decimal id or 0x followed by 64 hex digits), got ${quote(input)}: ${why}`))
    if (/^0[xX]/.test(input)) {
      const problem = hexProblem(input, 64)
      if (problem !== undefined) return fail(`it ${problem}`)
      const value = BigInt(input)
      return value === 0n ? fail("market ids start at 1") : ParseResult.succeed(value)
    }
    const problem = uintProblem(input)
    if (problem !== undefined) return fail(problem)
    const value = BigInt(input)
    if (value === 0n) return fail("market ids start at 1")
    return value > MAX_UINT256 ? fail("it is larger than 2^256 - 1") : ParseResult.succeed(value)
  },
  encode: (value) => ParseResult.succeed(value.toString())
}).annotations({ identifier: "MarketId", description: "market id: decimal string, or 0x + 64 hex digits" })

export const marketIdToHex = (id: bigint): string => `0x${id.toString(16).padStart(64, "0")}`
export const marketIdToDecimal = (id: bigint): string => id.toString()

/** Formats `raw` base units with exactly `decimals` fraction digits ("-0.500000" for negatives). */
export const formatUnits = (raw: bigint, decimals: number): string => {
  const negative = raw < 0n
  const abs = negative ? -raw : raw
  const digits = abs.toString().padStart(decimals + 1, "0")
  const whole = digits.slice(0, digits.length - decimals)
  const fraction = digits.slice(digits.length - decimals)
  return `${negative ? "-" : ""}${whole}${decimals > 0 ? `.${fraction}` : ""}`
}

/** Six-decimal amounts, the indexer's wire format: `125000000000n` -> `"125000.000000"`. */
export const formatUnits6 = (raw: bigint): string => formatUnits(raw, 6)

/** Parses a decimal string with at most `decimals` fraction digits into base units. */
export const parseUnits = (input: string, decimals: number): bigint => {
  const match = /^(-)?(\d+)(?:\.(\d*))?$/.exec(input)
  if (match === null) throw new Error(`expected a decimal number, got ${quote(input)}`)
  const fraction = match[3] ?? ""
  if (fraction.length > decimals) throw new Error(`expected at most ${decimals} fraction digits, got ${fraction.length} in ${quote(input)}`)
  const value = BigInt(match[2]! + fraction.padEnd(decimals, "0"))
  return match[1] === "-" ? -value : value
}

export const parseUnits6 = (input: string): bigint => parseUnits(input, 6)

const decimalSchema = (decimals: number, identifier: string, description: string) =>
  Schema.transformOrFail(Schema.String, Schema.BigIntFromSelf, {
    strict: true,
    decode: (input, _, ast) => {
      try {
        return ParseResult.succeed(parseUnits(input, decimals))
      } catch (error) {
        return ParseResult.fail(new ParseResult.Type(ast, input, (error as Error).message))
      }
    },
    encode: (value) => ParseResult.succeed(formatUnits(value, decimals))
  }).annotations({ identifier, description })

/** An amount of a 6-decimal token: decimal string with six fraction digits <-> raw base units. */
export const Amount6 = decimalSchema(6, "Amount6", "amount in token units with exactly six fraction digits, e.g. \"125000.000000\"")

/**
 * A price: on-chain prices are scaled by 1e6 (1000000 = 1.00 USDC per share). On the wire a
 * decimal string with six fraction digits ("0.620000"), the same form as amounts, so no
 * precision is lost and clients parse one format.
 */
export const Price = decimalSchema(6, "Price", "price in USDC per share as a decimal string with six fraction digits, e.g. \"0.620000\"")
export const formatPrice = (raw: bigint): string => formatUnits(raw, 6)

export type MoneyUnit = "USDC" | "ETH" | "YES" | "NO"

export const Money = Schema.Struct({
  decimal: Schema.String.annotations({ description: "amount in units, `decimals` fraction digits" }),
  raw: Schema.String.annotations({ description: "amount in base units, decimal string" }),
  decimals: Schema.Int,
  unit: Schema.String
}).annotations({ identifier: "Money" })
export type Money = typeof Money.Type

export const money = (raw: bigint, decimals: number, unit: MoneyUnit): Money => ({
  decimal: formatUnits(raw, decimals),
  raw: raw.toString(),
  decimals,
  unit
})

const nonNegativeInteger = (identifier: string, what: string) =>
  Schema.Number.pipe(
    Schema.filter((n) => {
      if (!Number.isFinite(n)) return `expected ${what}, got ${n}`
      if (!Number.isInteger(n)) return `expected ${what}, got ${n}: it is fractional`
      if (n < 0) return `expected ${what}, got ${n}: it is negative`
      if (!Number.isSafeInteger(n)) return `expected ${what}, got ${n}: it is too large`
      return true
    })
  ).annotations({ identifier, description: what })

/** Unix seconds. */
export const Timestamp = nonNegativeInteger("Timestamp", "a unix timestamp in seconds (non-negative integer)")
export const BlockNumber = nonNegativeInteger("BlockNumber", "a block number (non-negative integer)")

export const LocalizedString = Schema.Struct({
  key: Schema.String,
  fallback: Schema.String
}).annotations({ identifier: "LocalizedString", description: "user-visible text: a translation key and its fallback" })
