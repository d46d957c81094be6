import { Either, ParseResult, Schema } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  Address, Amount6, BlockNumber, Int256, MarketId, MarketIdHex, MAX_UINT256, formatUnits6, marketIdToHex, money, parseUnits6, Price, Timestamp, Uint256
} from "../../schema/primitives.js"

const decode = <A, I>(schema: Schema.Schema<A, I>) => (input: unknown) => {
  const result = Schema.decodeUnknownEither(schema)(input)
  return Either.isRight(result) ? { ok: result.right } : { error: ParseResult.TreeFormatter.formatErrorSync(result.left) }
}

describe("wire primitives", () => {
  it("addresses: any case in, lowercase out; malformed ones say what is wrong", () => {
    expect(decode(Address)("0xABCDEF0123456789abcdef0123456789ABCDEF01")).toEqual({ ok: "0xabcdef0123456789abcdef0123456789abcdef01" })
    expect(decode(Address)("0xZZcdef0123456789abcdef0123456789abcdef01").error).toMatch(/non-hex character "Z"/)
    expect(decode(Address)("0x12").error).toMatch(/has 2 hex digits/)
    expect(decode(Address)("abcdef0123456789abcdef0123456789abcdef0123").error).toMatch(/must start with 0x/)
    expect(decode(Address)(42).error).toMatch(/string/)
  })

  it("market ids: decimal or 64-hex; a 63-hex id names its digit count", () => {
    expect(decode(MarketId)("42")).toEqual({ ok: 42n })
    expect(decode(MarketId)(marketIdToHex(42n).toUpperCase().replace("0X", "0x"))).toEqual({ ok: 42n })
    expect(decode(MarketId)(`0x${"1".repeat(63)}`).error).toMatch(/has 63 hex digits/)
    expect(decode(MarketIdHex)(`0x${"1".repeat(63)}`).error).toMatch(/has 63 hex digits/)
    expect(decode(MarketId)("0").error).toMatch(/start at 1/)
    expect(decode(MarketId)("-3").error).toMatch(/negative/)
    expect(marketIdToHex(1n)).toBe(`0x${"0".repeat(63)}1`)
  })

  it("uint256: decimal strings to bigint; negative, fractional, exponent, hex, padded and oversized inputs each say so", () => {
    expect(decode(Uint256)("115792089237316195423570985008687907853269984665640564039457584007913129639935")).toEqual({ ok: MAX_UINT256 })
    expect(decode(Uint256)("-1").error).toMatch(/negative/)
    expect(decode(Uint256)("1.5").error).toMatch(/fractional/)
    expect(decode(Uint256)("1e6").error).toMatch(/exponent/)
    expect(decode(Uint256)("0x10").error).toMatch(/hex, not decimal/)
    expect(decode(Uint256)(" 5").error).toMatch(/whitespace/)
    expect(decode(Uint256)("").error).toMatch(/empty/)
    expect(decode(Uint256)("007").error).toMatch(/leading zeros/)
    expect(decode(Uint256)((MAX_UINT256 + 1n).toString()).error).toMatch(/larger than 2\^256 - 1/)
    expect(decode(Int256)("-5")).toEqual({ ok: -5n })
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: MAX_UINT256 }), (v) => {
        expect(Schema.decodeSync(Uint256)(Schema.encodeSync(Uint256)(v))).toBe(v)
      })
    )
  })

  it("six-decimal amounts and prices never pass through a JS number", () => {
    expect(formatUnits6(125_000_000_000n)).toBe("125000.000000")
    expect(formatUnits6(1n)).toBe("0.000001")
    expect(formatUnits6(-500_000n)).toBe("-0.500000")
    expect(Schema.encodeSync(Price)(620_000n)).toBe("0.620000")
    expect(decode(Amount6)("1.1234567").error).toMatch(/at most 6 fraction digits/)
    expect(money(10_000_000_000n, 6, "USDC")).toEqual({ decimal: "10000.000000", raw: "10000000000", decimals: 6, unit: "USDC" })
    expect(money(5n * 10n ** 15n, 18, "ETH").decimal).toBe("0.005000000000000000")
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), (v) => {
        expect(parseUnits6(formatUnits6(v))).toBe(v)
      })
    )
  })

  it("timestamps and block numbers are non-negative integers", () => {
    expect(decode(Timestamp)(1_700_000_000)).toEqual({ ok: 1_700_000_000 })
    expect(decode(Timestamp)(1.5).error).toMatch(/fractional/)
    expect(decode(BlockNumber)(-1).error).toMatch(/negative/)
    expect(decode(Timestamp)("1700000000").error).toMatch(/number/)
  })
})
