/**
 * The backend's wire primitives as SQL expressions whose value is their JSON text, for answers
 * Postgres assembles whole (the portfolio, `trading/portfolio-json.ts`): each gives, for any value
 * its column can hold, exactly what `JSON.stringify` gives of the schema's encoding
 * (`schema/primitives.ts`), so such an answer is byte for byte the one the schema would make.
 *
 * Why they hold:
 * - NUMERIC text output is plain digits, never an exponent, and a product's scale is the sum of
 *   its factors' scales: `raw * 0.000001` of an integer is written with exactly six fraction
 *   digits, a minus sign when negative and a leading "0." below one, as `formatUnits(raw, 6)`
 *   writes it. So it needs `raw` to be an integer of scale 0 (NUMERIC(78,0) columns, sums,
 *   differences and `div` of them).
 * - `to_json(text)` escapes `"`, `\`, \b \f \n \r \t and other characters below U+0020 as
 *   \u00xx (lowercase hex), as `JSON.stringify` does; Postgres text holds no NUL and no lone
 *   surrogate, the only strings the two would write differently.
 * - `concat` writes a null part as nothing: callers write every nullable value explicitly
 *   (`nullablePriceJson`, a `case` for an outcome) and read only NOT NULL columns otherwise.
 *
 * Only our own literals and column names enter these expressions, never input.
 */
import type { MoneyUnit } from "../../schema/primitives.js"

/** `10^-decimals` as a NUMERIC literal of scale `decimals` (`0.000001` for 6). */
const unitScale = (decimals: number) => {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 77) throw new RangeError(`decimals must be 0 to 77, got ${decimals}`)
  return decimals === 0 ? "1" : `0.${"0".repeat(decimals - 1)}1`
}

/**
 * Parts of a JSON text: SQL expressions whose text output, one after the other, is the JSON.
 * `jsonText` joins them with one `concat` call, which writes every part's output once into one
 * buffer (a chain of `||` copies the whole text so far at each step: quadratic in the parts).
 */
export type JsonParts = ReadonlyArray<string>

/** A SQL string literal of `text` (only our own literals: no quote inside). */
const literal = (text: string) => {
  if (text.includes("'")) throw new Error(`not a plain literal: ${text}`)
  return `'${text}'`
}

/** The text of `parts`, in one `concat` (at most 100 arguments: Postgres' limit). */
export const jsonText = (parts: JsonParts) => {
  if (parts.length > 100) throw new RangeError(`${parts.length} parts: concat takes at most 100`)
  return `concat(${parts.join(", ")})`
}

/** Literal JSON text, as a part. */
export const raw = (text: string): JsonParts => [literal(text)]

/** `formatUnits(raw, decimals)` of an integer NUMERIC expression (its NUMERIC value, written unquoted). */
export const units = (rawExpr: string, decimals: number) => `((${rawExpr}) * ${unitScale(decimals)})`

/** A string's JSON text (quoted and escaped). */
export const stringJson = (text: string): JsonParts => [`to_json((${text})::text)`]

/** Money (`money(raw, decimals, unit)`) as JSON: `{"decimal":"1.500000","raw":"1500000","decimals":6,"unit":"USDC"}`. */
export const moneyJson = (rawExpr: string, decimals: number, unit: MoneyUnit): JsonParts => [
  literal('{"decimal":"'),
  units(rawExpr, decimals),
  literal('","raw":"'),
  `(${rawExpr})`,
  literal(`","decimals":${decimals},"unit":"${unit}"}`)
]

/** A price (1e6-scaled integer) as its JSON string, six fraction digits (`formatPrice`), or `null`. */
export const nullablePriceJson = (rawExpr: string): JsonParts => [
  `case when (${rawExpr}) is null then 'null' else '"' || ${units(rawExpr, 6)}::text || '"' end`
]

const WORD = 4_294_967_296n
const MAX_BIGINT = 9_223_372_036_854_775_807n

/**
 * A uint256 market id as `marketIdToHex` writes it: `"0x"` and 64 lowercase hex digits, quoted.
 * Ids that fit a BIGINT (every id the deployed protocol hands out) take `to_hex` at once; larger
 * ones are written as eight 32-bit words.
 */
export const marketIdHexJson = (id: string): JsonParts => {
  const words = Array.from({ length: 8 }, (_, i) => {
    const shift = WORD ** BigInt(7 - i)
    return `lpad(to_hex(mod(div(${id}, ${shift}), ${WORD})::bigint), 8, '0')`
  })
  return [
    literal('"0x'),
    `(case when ${id} <= ${MAX_BIGINT} then lpad(to_hex((${id})::bigint), 64, '0') else ${words.join(" || ")} end)`,
    literal('"')
  ]
}
