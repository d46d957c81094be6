import { Either, JSONSchema, ParseResult, Schema } from "effect"
import { describe, expect, it } from "vitest"
import {
  FacetCutAction,
  isBuy,
  MatchType,
  OrderStatus,
  orderStatus,
  outcomeSide,
  Side,
  Timeframe,
  TIMEFRAME_SECONDS,
  TIMEFRAMES,
  timeframeSeconds,
  TradeType,
  tradeTypeOf
} from "../../schema/enums.js"

const message = (result: Either.Either<unknown, ParseResult.ParseError>): string => {
  if (Either.isRight(result)) throw new Error(`expected a failure, got ${String(result.right)}`)
  return ParseResult.TreeFormatter.formatErrorSync(result.left)
}

/** The codes of protocol-facts section 1, written out independently of the module. */
const expected = {
  TradeType: { BUY_YES: 0, SELL_YES: 1, BUY_NO: 2, SELL_NO: 3 },
  Side: { BUY_YES: 0, SELL_YES: 1, BUY_NO: 2, SELL_NO: 3 },
  MatchType: { COMPLEMENTARY: 0, MINT: 1, MERGE: 2 },
  FacetCutAction: { Add: 0, Replace: 1, Remove: 2 }
} as const

const enums = { TradeType, Side, MatchType, FacetCutAction } as const

describe.each(Object.keys(enums) as Array<keyof typeof enums>)("%s", (key) => {
  const Enum = enums[key] as (typeof enums)[typeof key] & typeof TradeType
  const table = expected[key] as Record<string, number>

  it("maps every code to its name and back", () => {
    expect(Enum.codes).toEqual(table)
    for (const [name, code] of Object.entries(table)) {
      expect(Schema.decodeSync(Enum.FromCode)(code)).toBe(name)
      expect(Schema.encodeSync(Enum.FromCode)(name as never)).toBe(code)
      expect(Enum.decode(code)).toEqual(Either.right(name))
      expect(Enum.fromCode(code)).toEqual(Either.right(name))
      expect(Enum.fromCode(BigInt(code))).toEqual(Either.right(name))
      expect(Enum.toCode(name as never)).toBe(code)
      expect(Enum.names[code]).toBe(name)
    }
  })

  it("rejects unknown codes with a message naming the code and the valid ones", () => {
    const count = Object.keys(table).length
    const list = Object.entries(table)
      .map(([name, code]) => `${code}=${name}`)
      .join(", ")
    expect(message(Enum.decode(7))).toBe(`expected a ${key} code 0..${count - 1}, got 7 (codes: ${list})`)
    expect(message(Enum.decode(count))).toContain(`got ${count}`)
    expect(message(Enum.decode(-1))).toContain("got -1")
    expect(message(Enum.decode(1.5))).toContain("got 1.5")
    expect(message(Enum.decode("1"))).toContain('got "1"')
    expect(Enum.fromCode(7)).toEqual(Either.left(`expected a ${key} code 0..${count - 1}, got 7 (codes: ${list})`))
    expect(Either.isLeft(Enum.fromCode(256n))).toBe(true)
  })

  it("puts names on the wire and rejects unknown names", () => {
    for (const name of Object.keys(table)) expect(Schema.decodeUnknownSync(Enum.Name)(name)).toBe(name)
    expect(message(Schema.decodeUnknownEither(Enum.Name)("NOPE"))).toMatch(new RegExp(`^expected a ${key}: .* or .*, got "NOPE"$`))
    expect(Enum.is(Object.keys(table)[0])).toBe(true)
    expect(Enum.is("NOPE")).toBe(false)
    expect(JSONSchema.make(Enum.Name)).toMatchObject({ $defs: { [key]: { enum: Object.keys(table) } } })
  })
})

describe("trade type helpers", () => {
  it("isBuy and outcomeSide cover every trade type and side", () => {
    expect(TradeType.names.map((t) => [t, isBuy(t), outcomeSide(t)])).toEqual([
      ["BUY_YES", true, "YES"],
      ["SELL_YES", false, "YES"],
      ["BUY_NO", true, "NO"],
      ["SELL_NO", false, "NO"]
    ])
    expect(Side.names.map((s) => outcomeSide(s))).toEqual(["YES", "YES", "NO", "NO"])
  })

  it("tradeTypeOf inverts isBuy and outcomeSide", () => {
    for (const t of TradeType.names) expect(tradeTypeOf(isBuy(t), outcomeSide(t))).toBe(t)
  })
})

describe("OrderStatus", () => {
  it("has the four status words", () => {
    expect(OrderStatus.literals).toEqual(["OPEN", "PARTIALLY_FILLED", "FILLED", "CANCELLED"])
    expect(message(Schema.decodeUnknownEither(OrderStatus)("open"))).toBe(
      'expected an order status: "OPEN", "PARTIALLY_FILLED", "FILLED" or "CANCELLED", got "open"'
    )
  })

  it("is derived from the cancelled flag and the filled amount", () => {
    expect(orderStatus({ amount: 10n, filled: 0n, cancelled: false })).toBe("OPEN")
    expect(orderStatus({ amount: 10n, filled: 4n, cancelled: false })).toBe("PARTIALLY_FILLED")
    expect(orderStatus({ amount: 10n, filled: 10n, cancelled: false })).toBe("FILLED")
    expect(orderStatus({ amount: 10n, filled: 4n, cancelled: true })).toBe("CANCELLED")
  })
})

describe("Timeframe", () => {
  it("lists the spec's candle timeframes with their lengths in seconds", () => {
    expect(TIMEFRAMES).toEqual(["1m", "5m", "15m", "1h", "4h", "1d", "1w"])
    expect(TIMEFRAME_SECONDS).toEqual({ "1m": 60, "5m": 300, "15m": 900, "1h": 3600, "4h": 14400, "1d": 86400, "1w": 604800 })
    expect(timeframeSeconds("4h")).toBe(4 * 3600)
    for (const tf of TIMEFRAMES) expect(Schema.decodeUnknownSync(Timeframe)(tf)).toBe(tf)
    expect(message(Schema.decodeUnknownEither(Timeframe)("2h"))).toBe(
      'expected a timeframe: "1m", "5m", "15m", "1h", "4h", "1d" or "1w", got "2h"'
    )
  })
})
