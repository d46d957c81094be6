/**
 * The 6-decimal writers of `http/backend/json-text.ts` against the general ones they stand in for:
 * `units6Text(raw)` is `formatUnitsText(raw, 6)` and `money6TextJson(raw, unit)` is
 * `moneyTextJson(raw, 6, unit)` for the canonical text of every integer tried: zero, each length
 * from 1 to 78 digits with either sign, and the lengths around the decimal point.
 */
import { describe, expect, it } from "vitest"
import { money6TextJson, moneyTextJson, units6Text } from "../../../http/backend/json-text.js"
import { formatUnitsText } from "../../../schema/primitives.js"

/** Integers of every length from 1 to 78 digits (uint256 has 78), both signs, zero, and their neighbours. */
const integers = (): ReadonlyArray<bigint> => {
  const values: Array<bigint> = [0n, 1n, -1n]
  for (let digits = 1; digits <= 78; digits++) {
    const low = 10n ** BigInt(digits - 1)
    const high = 10n ** BigInt(digits) - 1n
    // A value with every digit 1..9 and a zero in it, where the length allows.
    const mixed = BigInt("1234567890".repeat(8).slice(0, digits)) || low
    for (const v of [low, high, mixed, low + 1n]) values.push(v, -v)
  }
  return values
}

describe("6-decimal JSON text", () => {
  it("units6Text writes what formatUnitsText(raw, 6) writes", () => {
    for (const v of integers()) expect(units6Text(v.toString()), v.toString()).toBe(formatUnitsText(v.toString(), 6))
  })

  it("money6TextJson writes what moneyTextJson(raw, 6, unit) writes", () => {
    for (const v of integers())
      for (const unit of ["USDC", "YES", "NO"] as const)
        expect(money6TextJson(v.toString(), unit)).toBe(moneyTextJson(v.toString(), 6, unit))
  })

  it("writes the points of the scale exactly", () => {
    expect(units6Text("0")).toBe("0.000000")
    expect(units6Text("5")).toBe("0.000005")
    expect(units6Text("-5")).toBe("-0.000005")
    expect(units6Text("999999")).toBe("0.999999")
    expect(units6Text("1000000")).toBe("1.000000")
    expect(units6Text("-1234567")).toBe("-1.234567")
  })
})
