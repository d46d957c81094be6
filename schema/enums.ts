/**
 * The protocol's enumerations: numeric codes on-chain (ABI uint8), names on the wire.
 * Codes are those of the deployed contracts (protocol-facts section 1); the spec leaves them out.
 *
 * Each code enumeration offers:
 * - `Name`: the wire schema, a `Schema.Literal` of the names (`"BUY_YES"`, ...);
 * - `FromCode`: a schema from the numeric code to the name (decode 2 -> "BUY_NO", encode back);
 * - `decode(code)`: `Either` of the name or a `ParseError` whose message names the bad code;
 * - `fromCode(code)`: `Either` of the name or the message, for plain code paths (number or bigint);
 * - `toCode(name)`, `names`, `codes`.
 */
import { Either, ParseResult, Schema } from "effect"
import type { Array as Arr } from "effect"

const listNames = (names: ReadonlyArray<string>): string => {
  const quoted = names.map((n) => JSON.stringify(n))
  return quoted.length <= 1 ? quoted.join("") : `${quoted.slice(0, -1).join(", ")} or ${quoted[quoted.length - 1]}`
}

const describeActual = (u: unknown): string => {
  if (typeof u === "string") return JSON.stringify(u)
  if (typeof u === "bigint") return `${u}n`
  if (typeof u === "number" || typeof u === "boolean" || u === null || u === undefined) return String(u)
  return Array.isArray(u) ? "an array" : `a ${typeof u}`
}

export interface CodeEnum<Names extends Arr.NonEmptyReadonlyArray<string>> {
  readonly identifier: string
  /** Names in code order: `names[code]`. */
  readonly names: Names
  /** Code of each name. */
  readonly codes: { readonly [K in Names[number]]: number }
  /** The wire form: one of the names. */
  readonly Name: Schema.Literal<[...Names]>
  /** On-chain code (a number) <-> name. */
  readonly FromCode: Schema.Schema<Names[number], number>
  /** Decodes an on-chain code; an unknown code fails with a message naming it and the valid codes. */
  readonly decode: (code: unknown) => Either.Either<Names[number], ParseResult.ParseError>
  /** The name of `code`, or the message saying why it is not one. */
  readonly fromCode: (code: number | bigint) => Either.Either<Names[number], string>
  readonly toCode: (name: Names[number]) => number
  /** Whether `u` is one of the names. */
  readonly is: (u: unknown) => u is Names[number]
}

const codeEnum = <const Names extends Arr.NonEmptyReadonlyArray<string>>(
  identifier: string,
  names: Names,
  description: string
): CodeEnum<Names> => {
  type Name = Names[number]
  const table = names.map((n, i) => `${i}=${n}`).join(", ")
  const codeMessage = (actual: unknown): string =>
    `expected a ${identifier} code 0..${names.length - 1}, got ${describeActual(actual)} (codes: ${table})`
  const Name = Schema.Literal(...names).annotations({
    identifier,
    title: identifier,
    description: `${description}; on-chain codes ${table}`,
    message: (issue) => ({
      message: `expected a ${identifier}: ${listNames(names)}, got ${describeActual("actual" in issue ? issue.actual : undefined)}`,
      override: true
    })
  })
  const lookup = (code: unknown): Name | undefined => {
    const n = typeof code === "bigint" && code >= 0n && code < BigInt(names.length) ? Number(code) : code
    return typeof n === "number" && Number.isInteger(n) && n >= 0 && n < names.length ? (names[n] as Name) : undefined
  }
  const codes = Object.fromEntries(names.map((n, i) => [n, i])) as { readonly [K in Name]: number }
  const FromCode = Schema.transformOrFail(Schema.Number, Name, {
    strict: true,
    decode: (code, _, ast) => {
      const name = lookup(code)
      return name === undefined ? ParseResult.fail(new ParseResult.Type(ast, code, codeMessage(code))) : ParseResult.succeed(name)
    },
    encode: (name) => ParseResult.succeed(codes[name])
  }).annotations({
    identifier: `${identifier}Code`,
    title: `${identifier} code`,
    description: `${identifier} as its on-chain uint8 code: ${table}`,
    message: (issue) =>
      issue._tag === "Transformation" && issue.kind === "Type"
        ? { message: ParseResult.TreeFormatter.formatIssueSync(issue.issue), override: true }
        : { message: codeMessage("actual" in issue ? issue.actual : undefined), override: true }
  })
  const decode = Schema.decodeUnknownEither(FromCode)
  const fromCode = (code: number | bigint): Either.Either<Name, string> => {
    const name = lookup(code)
    return name === undefined ? Either.left(codeMessage(code)) : Either.right(name)
  }
  const is = Schema.is(Name) as (u: unknown) => u is Name
  return { identifier, names, codes, Name, FromCode, decode, fromCode, toCode: (name) => codes[name], is }
}

/** Router trade type: BUY_YES=0, SELL_YES=1, BUY_NO=2, SELL_NO=3. */
export const TradeType = codeEnum(
  "TradeType",
  ["BUY_YES", "SELL_YES", "BUY_NO", "SELL_NO"],
  "router trade type: buy or sell the YES or NO token"
)
export type TradeType = typeof TradeType.Name.Type

/** Exchange order side, the same four codes as TradeType. BUY pays USDC for tokens; SELL gives tokens for USDC. */
export const Side = codeEnum(
  "Side",
  ["BUY_YES", "SELL_YES", "BUY_NO", "SELL_NO"],
  "order-book side: BUY pays USDC for tokens, SELL gives tokens for USDC"
)
export type Side = typeof Side.Name.Type

/**
 * How two orders matched: COMPLEMENTARY=0 (BUY_x against SELL_x of the same token), MINT=1 (BUY_YES
 * with BUY_NO, prices summing to at least 1, collateral split), MERGE=2 (SELL_YES with SELL_NO,
 * prices summing to at most 1, tokens merged).
 */
export const MatchType = codeEnum("MatchType", ["COMPLEMENTARY", "MINT", "MERGE"], "order match type")
export type MatchType = typeof MatchType.Name.Type

/** Diamond cut action: Add=0, Replace=1, Remove=2. */
export const FacetCutAction = codeEnum("FacetCutAction", ["Add", "Replace", "Remove"], "diamond cut action on a facet's selectors")
export type FacetCutAction = typeof FacetCutAction.Name.Type

/** The outcome token a trade or order is about. */
export const Outcome = Schema.Literal("YES", "NO").annotations({
  identifier: "Outcome",
  title: "Outcome",
  description: "outcome token: YES or NO"
})
export type Outcome = typeof Outcome.Type

/** Buying pays collateral for outcome tokens; selling gives tokens for collateral. */
export const isBuy = (tradeType: TradeType | Side): boolean => tradeType === "BUY_YES" || tradeType === "BUY_NO"

/** Which outcome token a trade type or side is about. */
export const outcomeSide = (tradeType: TradeType | Side): Outcome => (tradeType === "BUY_YES" || tradeType === "SELL_YES" ? "YES" : "NO")

/** The trade type (or side) that buys or sells `outcome`: `tradeTypeOf(true, "NO")` is `"BUY_NO"`. */
export const tradeTypeOf = (buy: boolean, outcome: Outcome): TradeType => `${buy ? "BUY" : "SELL"}_${outcome}`

/**
 * Order status words. The contract has no status; it is derived from the order struct (see
 * `orderStatus`).
 */
export const OrderStatus = Schema.Literal("OPEN", "PARTIALLY_FILLED", "FILLED", "CANCELLED").annotations({
  identifier: "OrderStatus",
  title: "Order status",
  description: "derived order status: OPEN (nothing filled), PARTIALLY_FILLED, FILLED or CANCELLED",
  message: (issue) => ({
    message: `expected an order status: "OPEN", "PARTIALLY_FILLED", "FILLED" or "CANCELLED", got ${describeActual("actual" in issue ? issue.actual : undefined)}`,
    override: true
  })
})
export type OrderStatus = typeof OrderStatus.Type

/** Cancelled flag first, then filled == amount -> FILLED, 0 < filled < amount -> PARTIALLY_FILLED, else OPEN. */
export const orderStatus = (order: { readonly amount: bigint; readonly filled: bigint; readonly cancelled: boolean }): OrderStatus =>
  order.cancelled ? "CANCELLED" : order.filled >= order.amount ? "FILLED" : order.filled > 0n ? "PARTIALLY_FILLED" : "OPEN"

/** Candle timeframes with their length in seconds. */
export const TIMEFRAME_SECONDS = { "1m": 60, "5m": 300, "15m": 900, "1h": 3_600, "4h": 14_400, "1d": 86_400, "1w": 604_800 } as const

export const TIMEFRAMES = ["1m", "5m", "15m", "1h", "4h", "1d", "1w"] as const

/** Candle timeframe: `1m, 5m, 15m, 1h, 4h, 1d, 1w`. */
export const Timeframe = Schema.Literal(...TIMEFRAMES).annotations({
  identifier: "Timeframe",
  title: "Candle timeframe",
  description: "candle timeframe: 1m, 5m, 15m, 1h, 4h, 1d or 1w",
  message: (issue) => ({
    message: `expected a timeframe: ${listNames(TIMEFRAMES)}, got ${describeActual("actual" in issue ? issue.actual : undefined)}`,
    override: true
  })
})
export type Timeframe = typeof Timeframe.Type

/** Length of `timeframe` in seconds. */
export const timeframeSeconds = (timeframe: Timeframe): number => TIMEFRAME_SECONDS[timeframe]
