import { Either, JSONSchema, Option, ParseResult, Schema, SchemaAST } from "effect"
import * as fc from "fast-check"
import { getAddress, numberToHex, parseUnits as viemParseUnits } from "viem"
import { describe, expect, it } from "vitest"
import {
  Address,
  parseAddress,
  Amount6,
  Amount6Input,
  BlockNumber,
  BlockNumberFromString,
  Bytes32,
  DecimalFormatError,
  formatPrice,
  formatUnits,
  formatUnits6,
  Hex,
  Int256,
  Int256FromSelf,
  isAddress,
  LocalizedString,
  MarketId,
  MarketIdFromSelf,
  MarketIdHex,
  MAX_INT256,
  MAX_UINT256,
  MIN_INT256,
  marketIdToDecimal,
  marketIdToHex,
  Money,
  money,
  MoneyUnit,
  parsePrice,
  parseUnits,
  parseUnits6,
  Price,
  PriceFromSelf,
  SignedAmount6,
  Timestamp,
  TimestampFromString,
  toAddress,
  TxHash,
  Uint256,
  Uint256FromSelf
} from "../../schema/primitives.js"

/** Decodes `input`; on failure returns the TreeFormatter text, which must be one sentence. */
const decode =
  <A, I>(schema: Schema.Schema<A, I>) =>
  (input: unknown): { readonly ok: A } | { readonly error: string } => {
    const result = Schema.decodeUnknownEither(schema)(input)
    return Either.isRight(result) ? { ok: result.right } : { error: ParseResult.TreeFormatter.formatErrorSync(result.left) }
  }

/** The failure message of decoding `input`, asserting that decoding fails. */
const failure = <A, I>(schema: Schema.Schema<A, I>, input: unknown): string => {
  const result = decode(schema)(input)
  if ("ok" in result) throw new Error(`expected ${JSON.stringify(String(input))} to be rejected, got ${String(result.ok)}`)
  return result.error
}

const hex = (digits: number, char = "a") => `0x${char.repeat(digits)}`

describe("Address", () => {
  it("accepts any letter case and decodes and encodes lowercase", () => {
    const mixed = "0xABCDEF0123456789abcdef0123456789ABCDEF01"
    const decoded = Schema.decodeSync(Address)(mixed)
    expect(decoded).toBe("0xabcdef0123456789abcdef0123456789abcdef01")
    expect(Schema.encodeSync(Address)(decoded)).toBe("0xabcdef0123456789abcdef0123456789abcdef01")
    expect(toAddress(mixed)).toBe(decoded)
    expect(isAddress(decoded)).toBe(true)
    expect(isAddress(mixed)).toBe(false)
  })

  it("normalizes EIP-55 checksummed addresses (viem's getAddress) to their lowercase form", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 20, maxLength: 20 }), (bytes) => {
        const lower = `0x${Buffer.from(bytes).toString("hex")}`
        const checksummed = getAddress(lower)
        expect(Schema.decodeSync(Address)(checksummed)).toBe(lower)
        expect(Schema.decodeSync(Address)(checksummed.toUpperCase().replace("0X", "0x"))).toBe(lower)
      })
    )
  })

  it("says how many hex digits a short or long address has", () => {
    expect(failure(Address, "0x12")).toBe('expected an address: 0x followed by 40 hex digits, got "0x12" (2 hex digits)')
    expect(failure(Address, hex(41))).toContain("(41 hex digits)")
    expect(failure(Address, "0x")).toContain("(0 hex digits)")
  })

  it("names a non-hex character and where it is", () => {
    const input = `0x12g4${"0".repeat(36)}`
    expect(failure(Address, input)).toBe(
      `expected an address: 0x followed by 40 hex digits, got "${input}", which contains a non-hex character "g" at position 4`
    )
    expect(failure(Address, `0x${"0".repeat(39)} `)).toContain("contains whitespace")
  })

  it("says when the 0x prefix is missing or upper-case, and when the input is not a string", () => {
    expect(failure(Address, "abcdef0123456789abcdef0123456789abcdef0123")).toContain("which does not start with 0x")
    expect(failure(Address, `0X${"a".repeat(40)}`)).toContain('whose prefix is "0X"')
    expect(failure(Address, "")).toContain("which is empty")
    expect(failure(Address, 42)).toBe("expected an address: 0x followed by 40 hex digits, got 42 (a number)")
    expect(failure(Address, null)).toContain("got null")
  })

  it("reports the field path and the same sentence through ArrayFormatter", () => {
    const result = Schema.decodeUnknownEither(Schema.Struct({ creator: Address }))({ creator: "0x12" })
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isLeft(result)) {
      expect(ParseResult.ArrayFormatter.formatErrorSync(result.left)).toEqual([
        {
          _tag: "Transformation",
          path: ["creator"],
          message: 'expected an address: 0x followed by 40 hex digits, got "0x12" (2 hex digits)'
        }
      ])
    }
  })

  it("documents its wire pattern for OpenAPI", () => {
    const json = JSONSchema.make(Address) as { $defs: Record<string, { pattern?: string; description?: string }> }
    expect(json.$defs["Address"]?.pattern).toBe("^0x[0-9a-fA-F]{40}$")
    expect(json.$defs["Address"]?.description).toMatch(/lowercase/)
  })
})

describe("MarketIdHex, TxHash, Bytes32, Hex", () => {
  it("a 63-hex market id fails with a message naming the digit count", () => {
    const input = hex(63, "1")
    expect(failure(MarketIdHex, input)).toBe(`expected a market id: 0x followed by 64 hex digits, got "${input}" (63 hex digits)`)
    expect(failure(MarketIdHex, hex(65, "1"))).toContain("(65 hex digits)")
  })

  it("64-hex values in any case decode to lowercase", () => {
    expect(Schema.decodeSync(MarketIdHex)(`0x${"AB".repeat(32)}`)).toBe(`0x${"ab".repeat(32)}`)
    expect(Schema.decodeSync(TxHash)(`0x${"Cd".repeat(32)}`)).toBe(`0x${"cd".repeat(32)}`)
    expect(Schema.decodeSync(Bytes32)(`0x${"0F".repeat(32)}`)).toBe(`0x${"0f".repeat(32)}`)
    expect(failure(TxHash, "0x1234")).toBe('expected a transaction hash: 0x followed by 64 hex digits, got "0x1234" (4 hex digits)')
    expect(failure(Bytes32, `0x${"z".repeat(64)}`)).toContain('non-hex character "z"')
  })

  it("Hex wants an even number of digits", () => {
    expect(Schema.decodeSync(Hex)("0x")).toBe("0x")
    expect(Schema.decodeSync(Hex)("0xABcd")).toBe("0xabcd")
    expect(failure(Hex, "0xabc")).toBe(
      'expected hex bytes: 0x followed by an even number of hex digits, got "0xabc" (3 hex digits, an odd number)'
    )
  })
})

describe("MarketId", () => {
  it("accepts the decimal id and the 64-hex form, any case, and decodes to a bigint", () => {
    expect(Schema.decodeSync(MarketId)("42")).toBe(42n)
    expect(Schema.decodeSync(MarketId)(`0x${"0".repeat(62)}2A`)).toBe(42n)
    expect(Schema.decodeSync(MarketId)(MAX_UINT256.toString())).toBe(MAX_UINT256)
    expect(Schema.encodeSync(MarketId)(42n)).toBe("42")
  })

  it("rejects malformed ids, each saying why", () => {
    expect(failure(MarketId, hex(63, "1"))).toContain("(63 hex digits)")
    expect(failure(MarketId, "0")).toContain("which is zero; market ids start at 1")
    expect(failure(MarketId, `0x${"0".repeat(64)}`)).toContain("market ids start at 1")
    expect(failure(MarketId, "007")).toContain("which has leading zeros")
    expect(failure(MarketId, "-3")).toContain("which is negative")
    expect(failure(MarketId, "+3")).toContain('"+" sign')
    expect(failure(MarketId, "1.0")).toContain("which is fractional")
    expect(failure(MarketId, (MAX_UINT256 + 1n).toString())).toContain("2^256 or more")
    expect(failure(MarketId, 42)).toContain("got 42 (a number)")
  })

  it("marketIdToHex and marketIdToDecimal give the two wire forms, and both decode back", () => {
    expect(marketIdToHex(1n)).toBe(`0x${"0".repeat(63)}1`)
    expect(marketIdToDecimal(1n)).toBe("1")
    expect(() => marketIdToHex(-1n)).toThrow(/outside/)
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: MAX_UINT256 }), (id) => {
        expect(marketIdToHex(id)).toBe(numberToHex(id, { size: 32 }))
        expect(Schema.decodeSync(MarketId)(marketIdToHex(id))).toBe(id)
        expect(Schema.decodeSync(MarketId)(marketIdToDecimal(id))).toBe(id)
        expect(Schema.decodeSync(MarketIdHex)(marketIdToHex(id))).toBe(marketIdToHex(id))
      })
    )
  })

  it("MarketIdFromSelf is 1 .. 2^256 - 1", () => {
    expect(Schema.is(MarketIdFromSelf)(1n)).toBe(true)
    expect(Schema.is(MarketIdFromSelf)(0n)).toBe(false)
  })
})

describe("Uint256 and Int256", () => {
  it("decodes decimal strings to bigint and encodes them back", () => {
    expect(Schema.decodeSync(Uint256)("0")).toBe(0n)
    expect(Schema.decodeSync(Uint256)(MAX_UINT256.toString())).toBe(MAX_UINT256)
    expect(Schema.encodeSync(Uint256)(1500000n)).toBe("1500000")
  })

  it.each([
    ["-1", "which is negative"],
    ["1.5", "which is fractional"],
    ["1e6", "which uses exponent notation"],
    ["", "which is empty"],
    [" 5", "which has leading or trailing whitespace"],
    ["1 000", "which contains whitespace"],
    ["0x10", "which is hexadecimal; only decimal digits are accepted"],
    ["+1", 'which starts with a "+" sign'],
    ["007", "which has leading zeros"],
    ["12a", 'which contains "a", not a decimal digit'],
    ["1.2.3", "which has more than one decimal point"],
    [(1n << 256n).toString(), "which is 2^256 or more (the largest uint256 is 2^256 - 1)"]
  ])("rejects %j and says %s", (input, reason) => {
    expect(failure(Uint256, input)).toBe(
      `expected a uint256 as a decimal string, got ${JSON.stringify(input)}, ${reason}${reasonTail(reason)}`
    )
  })

  it("explains that a JSON number is not a uint256", () => {
    expect(failure(Uint256, 1000)).toBe(
      "expected a uint256 as a decimal string, got 1000 (a number); uint256 values are decimal strings, never JSON numbers"
    )
  })

  it("refuses to encode a bigint out of range, saying so", () => {
    expect(() => Schema.encodeSync(Uint256)(-1n)).toThrow("expected a uint256 (0 to 2^256 - 1), got -1n, which is too small")
    expect(() => Schema.encodeSync(Uint256)(MAX_UINT256 + 1n)).toThrow(/which is too large/)
  })

  it("round-trips every uint256", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: MAX_UINT256 }), (v) => {
        const wire = Schema.encodeSync(Uint256)(v)
        expect(wire).toMatch(/^(0|[1-9][0-9]*)$/)
        expect(Schema.decodeSync(Uint256)(wire)).toBe(v)
      })
    )
  })

  it("Uint256FromSelf range-checks bigints", () => {
    expect(Schema.is(Uint256FromSelf)(MAX_UINT256)).toBe(true)
    expect(Schema.is(Uint256FromSelf)(MAX_UINT256 + 1n)).toBe(false)
    expect(Schema.is(Uint256FromSelf)(-1n)).toBe(false)
    expect(failure(Uint256FromSelf, 5)).toBe("expected a uint256 (a bigint in 0 to 2^256 - 1), got 5 (a number)")
  })

  it("Int256 takes a leading minus within -2^255 .. 2^255 - 1", () => {
    expect(Schema.decodeSync(Int256)("-5")).toBe(-5n)
    expect(Schema.decodeSync(Int256)(MIN_INT256.toString())).toBe(MIN_INT256)
    expect(failure(Int256, (MAX_INT256 + 1n).toString())).toContain("which is 2^255 or more (the largest int256 is 2^255 - 1)")
    expect(failure(Int256, (MIN_INT256 - 1n).toString())).toContain("which is less than -2^255")
    expect(failure(Int256, "-0")).toContain('negative zero; write "0"')
    expect(failure(Int256, "-1.5")).toContain("which is fractional")
    expect(Schema.is(Int256FromSelf)(MIN_INT256)).toBe(true)
    fc.assert(
      fc.property(fc.bigInt({ min: MIN_INT256, max: MAX_INT256 }), (v) => {
        expect(Schema.decodeSync(Int256)(Schema.encodeSync(Int256)(v))).toBe(v)
      })
    )
  })
})

/** The extra advice that follows some reasons (kept in one place so the table above stays short). */
const reasonTail = (reason: string): string => {
  if (reason === "which is fractional") return "; a whole number is expected"
  if (reason === "which uses exponent notation") return "; write out all the digits"
  if (reason.startsWith('which starts with a "+" sign')) return "; write the digits only"
  return ""
}

describe("six-decimal amounts", () => {
  it("formatUnits6 gives exactly six fraction digits, negatives included", () => {
    expect(formatUnits6(125_000_000_000n)).toBe("125000.000000")
    expect(formatUnits6(1n)).toBe("0.000001")
    expect(formatUnits6(0n)).toBe("0.000000")
    expect(formatUnits6(-500_000n)).toBe("-0.500000")
    expect(formatUnits6(MAX_UINT256)).toBe("115792089237316195423570985008687907853269984665640564039457584007913129.639935")
  })

  it("parseUnits6 reads up to six fraction digits and rejects more with a message", () => {
    expect(parseUnits6("125000.000000")).toBe(125_000_000_000n)
    expect(parseUnits6("1.5")).toBe(1_500_000n)
    expect(parseUnits6("7")).toBe(7_000_000n)
    expect(parseUnits6("-0.5")).toBe(-500_000n)
    expect(() => parseUnits6("1.1234567")).toThrow(
      'expected a decimal number with at most 6 fraction digits, got "1.1234567", which has 7 fraction digits; at most 6 are allowed'
    )
    expect(() => parseUnits6("1e6")).toThrow(DecimalFormatError)
    expect(() => parseUnits6("1.")).toThrow(/ends with a decimal point/)
    expect(() => parseUnits6(".5")).toThrow(/no digits before the decimal point/)
    expect(() => parseUnits6("")).toThrow(/empty/)
  })

  it("parseUnits6 inverts formatUnits6 over large and negative values, agreeing with viem", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 60n), max: 10n ** 60n }), (v) => {
        const text = formatUnits6(v)
        expect(text).toMatch(/^-?\d+\.\d{6}$/)
        expect(parseUnits6(text)).toBe(v)
        expect(viemParseUnits(text, 6)).toBe(v)
      })
    )
  })

  it("formatUnits and parseUnits work for any number of decimals", () => {
    expect(formatUnits(5n * 10n ** 15n, 18)).toBe("0.005000000000000000")
    expect(formatUnits(42n, 0)).toBe("42")
    expect(() => formatUnits(1n, 1.5)).toThrow(/decimals must be a whole number/)
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }), fc.integer({ min: 0, max: 30 }), (v, decimals) => {
        const text = formatUnits(v, decimals)
        expect(parseUnits(text, decimals)).toBe(v)
        expect(viemParseUnits(text, decimals)).toBe(v)
      })
    )
  })

  it("Amount6 wants exactly six fraction digits on the wire", () => {
    expect(Schema.decodeSync(Amount6)("125000.000000")).toBe(125_000_000_000n)
    expect(Schema.encodeSync(Amount6)(1n)).toBe("0.000001")
    expect(failure(Amount6, "1.5")).toBe(
      'expected an amount as a decimal string with exactly 6 fraction digits, got "1.5", which has 1 fraction digit; exactly 6 are required'
    )
    expect(failure(Amount6, "1")).toContain("which has no fraction digits; exactly 6 are required")
    expect(failure(Amount6, "1.0000001")).toContain("which has 7 fraction digits; at most 6 are allowed")
    expect(failure(Amount6, "-1.000000")).toContain("which is negative")
    expect(failure(Amount6, 1.5)).toContain("got 1.5 (a number); amounts are decimal strings, never JSON numbers")
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: MAX_UINT256 }), (v) => {
        expect(Schema.decodeSync(Amount6)(Schema.encodeSync(Amount6)(v))).toBe(v)
      })
    )
  })

  it("SignedAmount6 carries PnL; Amount6Input accepts shorter fractions", () => {
    expect(Schema.decodeSync(SignedAmount6)("-0.500000")).toBe(-500_000n)
    expect(Schema.encodeSync(SignedAmount6)(-500_000n)).toBe("-0.500000")
    expect(Schema.decodeSync(Amount6Input)("10.5")).toBe(10_500_000n)
    expect(Schema.decodeSync(Amount6Input)("10")).toBe(10_000_000n)
    expect(Schema.encodeSync(Amount6Input)(10_500_000n)).toBe("10.500000")
    expect(failure(Amount6Input, "10.1234567")).toContain("which has 7 fraction digits")
  })
})

describe("Price", () => {
  it("formats 1e6-scaled prices with six fraction digits", () => {
    expect(formatPrice(620_000n)).toBe("0.620000")
    expect(formatPrice(1_000_000n)).toBe("1.000000")
    expect(formatPrice(0n)).toBe("0.000000")
    expect(Schema.encodeSync(Price)(623_456n)).toBe("0.623456")
  })

  it("decodes trimmed and six-digit forms to the same raw price, within 0..1", () => {
    expect(Schema.decodeSync(Price)("0.62")).toBe(620_000n)
    expect(Schema.decodeSync(Price)("0.620000")).toBe(620_000n)
    expect(Schema.decodeSync(Price)("1")).toBe(1_000_000n)
    expect(parsePrice("0.5")).toBe(500_000n)
    expect(failure(Price, "1.5")).toContain("which is more than 1 (prices are between 0 and 1)")
    expect(failure(Price, "-0.1")).toContain("which is negative")
    expect(failure(Price, "0.1234567")).toContain("which has 7 fraction digits")
    expect(() => parsePrice("2")).toThrow(/from 0 to 1/)
    expect(Schema.is(PriceFromSelf)(1_000_001n)).toBe(false)
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 1_000_000n }), (v) => {
        expect(Schema.decodeSync(Price)(formatPrice(v))).toBe(v)
      })
    )
  })
})

describe("Money", () => {
  it("money() formats decimal with exactly `decimals` fraction digits", () => {
    expect(money(10_000_000_000n, 6, "USDC")).toEqual({ decimal: "10000.000000", raw: "10000000000", decimals: 6, unit: "USDC" })
    expect(money(5n * 10n ** 14n, 18, "ETH")).toEqual({
      decimal: "0.000500000000000000",
      raw: "500000000000000",
      decimals: 18,
      unit: "ETH"
    })
    expect(money(-1n, 6, "YES").decimal).toBe("-0.000001")
    expect(money(3n, 0, "NO")).toEqual({ decimal: "3", raw: "3", decimals: 0, unit: "NO" })
    expect(() => money(1n, -1, "USDC")).toThrow(/decimals must be a whole number from 0 to 77/)
  })

  it("the Money schema accepts consistent values and explains inconsistent ones", () => {
    const usdc = money(1_500_000n, 6, "USDC")
    expect(Schema.decodeUnknownSync(Money)(usdc)).toEqual(usdc)
    expect(Schema.encodeSync(Money)(usdc)).toEqual(usdc)
    expect(failure(Money, { ...usdc, decimal: "1.5" })).toBe(
      'Money.decimal "1.5" does not match raw "1500000" with 6 decimals (expected "1.500000")'
    )
    expect(failure(Money, { ...usdc, raw: "1.5" })).toContain('expected Money.raw as an integer decimal string of base units, got "1.5"')
    expect(failure(Money, { ...usdc, decimals: 1.5 })).toContain("expected Money.decimals as a whole number from 0 to 77")
    expect(failure(Money, { ...usdc, unit: "DAI" })).toContain('expected a money unit "USDC", "ETH", "YES" or "NO", got "DAI"')
    expect(Schema.is(MoneyUnit)("ETH")).toBe(true)
  })
})

describe("Timestamp and BlockNumber", () => {
  it("accept non-negative safe integers", () => {
    expect(Schema.decodeUnknownSync(Timestamp)(1_700_000_000)).toBe(1_700_000_000)
    expect(Schema.decodeUnknownSync(BlockNumber)(0)).toBe(0)
  })

  it.each([
    [1.5, "got 1.5, which is fractional"],
    [-1, "got -1, which is negative"],
    ["1700000000", 'got "1700000000" (a string)'],
    [Number.NaN, "got NaN"],
    [Number.POSITIVE_INFINITY, "got Infinity, which is not finite"],
    [2 ** 60, "got 1152921504606847000, which is larger than 2^53 - 1"],
    [null, "got null"]
  ])("Timestamp rejects %s: %s", (input, reason) => {
    expect(failure(Timestamp, input)).toContain(`expected a unix timestamp in seconds (a non-negative whole number), ${reason}`)
  })

  it("BlockNumber names itself in its messages", () => {
    expect(failure(BlockNumber, -1)).toBe("expected a block number (a non-negative whole number), got -1, which is negative")
  })

  it("the FromString variants read query parameters", () => {
    expect(Schema.decodeSync(TimestampFromString)("1700000000")).toBe(1_700_000_000)
    expect(Schema.encodeSync(TimestampFromString)(5)).toBe("5")
    expect(Schema.decodeSync(BlockNumberFromString)("12")).toBe(12)
    expect(failure(TimestampFromString, "-5")).toBe(
      'expected a unix timestamp in seconds as a string of decimal digits, got "-5", which is negative'
    )
    expect(failure(BlockNumberFromString, "1.5")).toContain("which is fractional")
  })

  it("document themselves as integers for OpenAPI", () => {
    const json = JSONSchema.make(Timestamp) as { $defs: Record<string, { type?: string; minimum?: number }> }
    expect(json.$defs["Timestamp"]).toMatchObject({ type: "integer", minimum: 0 })
  })
})

describe("LocalizedString", () => {
  it("is { key, fallback }", () => {
    expect(Schema.decodeUnknownSync(LocalizedString)({ key: "market.1.title", fallback: "Will it rain?" })).toEqual({
      key: "market.1.title",
      fallback: "Will it rain?"
    })
    expect(Either.isLeft(Schema.decodeUnknownEither(LocalizedString)({ key: "k" }))).toBe(true)
  })
})

describe("annotations", () => {
  const schemas: Record<string, Schema.Schema.Any> = {
    Address,
    MarketIdHex,
    MarketId,
    TxHash,
    Bytes32,
    Hex,
    Uint256,
    Uint256FromSelf,
    Int256,
    Int256FromSelf,
    Amount6,
    SignedAmount6,
    Amount6Input,
    Price,
    Money,
    MoneyUnit,
    Timestamp,
    BlockNumber,
    TimestampFromString,
    LocalizedString
  }

  it.each(Object.entries(schemas))("%s has an identifier, a title and a description", (name, schema) => {
    expect(Option.getOrUndefined(SchemaAST.getIdentifierAnnotation(schema.ast))).toBe(name)
    expect(Option.isSome(SchemaAST.getTitleAnnotation(schema.ast))).toBe(true)
    expect(Option.getOrElse(SchemaAST.getDescriptionAnnotation(schema.ast), () => "").length).toBeGreaterThan(10)
  })
})

describe("parseAddress (the one address parser)", () => {
  const mixed = "0x00000000000000000000000000000000000000aA"
  it("answers the lowercase address for any case of the hex digits, as the Address schema decodes it", () => {
    expect(parseAddress(mixed)).toEqual(Either.right(mixed.toLowerCase()))
    expect(parseAddress(mixed)).toEqual(Schema.decodeUnknownEither(Address)(mixed).pipe(Either.mapLeft(() => "")))
  })
  it("refuses what Address refuses, with the same sentence", () => {
    for (const bad of ["", "0xnothex", `0X${"a".repeat(40)}`, `0x${"a".repeat(41)}`, `0x${"a".repeat(39)}`, "a".repeat(42)]) {
      const parsed = parseAddress(bad)
      const decoded = Schema.decodeUnknownEither(Address)(bad)
      expect(Either.isLeft(parsed), bad).toBe(true)
      expect(Either.isLeft(decoded), bad).toBe(true)
      if (Either.isLeft(parsed) && Either.isLeft(decoded)) expect(parsed.left).toBe(ParseResult.TreeFormatter.formatErrorSync(decoded.left))
    }
  })
})
