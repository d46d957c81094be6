/**
 * The backend's wire primitives written as JSON text directly, for the hot answers written without
 * the schema's encoder (`markets/market-json.ts`, `trading/portfolio-json.ts`): each gives exactly
 * what `JSON.stringify` gives of the schema's encoding of the same value (`schema/primitives.ts`),
 * by the same formatting functions the schema's transformations call. The tests of those answers
 * compare them with the schema's encoding byte for byte.
 *
 * Only values whose text needs no escaping are written unquoted-then-quoted here (decimal digits,
 * units, lowercase hex); any free text goes through `JSON.stringify` (or Postgres' `to_json`, which
 * escapes as it does: see `trading/portfolio-json.ts`).
 */
import { formatPrice, formatUnitsText, type Money, type MoneyUnit } from "../../schema/primitives.js"

/** `Money` as JSON: `{"decimal":"1.500000","raw":"1500000","decimals":6,"unit":"USDC"}`. */
export const moneyJson = (value: Money): string =>
  `{"decimal":"${value.decimal}","raw":"${value.raw}","decimals":${value.decimals},"unit":"${value.unit}"}`

/** `money(raw, decimals, unit)` as JSON, from the raw amount's canonical decimal text (`formatUnitsText`). */
export const moneyTextJson = (raw: string, decimals: number, unit: MoneyUnit): string =>
  `{"decimal":"${formatUnitsText(raw, decimals)}","raw":"${raw}","decimals":${decimals},"unit":"${unit}"}`

/** A nullable `Price` as JSON: `"0.620000"` or `null`. */
export const priceJson = (value: bigint | null): string => (value === null ? "null" : `"${formatPrice(value)}"`)

/**
 * `formatUnitsText(raw, 6)` for the canonical decimal text of an integer (digits, a leading "-" when
 * negative, no leading zeros: what Postgres writes of a scale-0 NUMERIC), without the general
 * function's checks and padding: the portfolio writes about two thousand of these per answer.
 * test/http/backend/json-text.test.ts compares the two over integers of every length and sign.
 */
export const units6Text = (raw: string): string => {
  const negative = raw.charCodeAt(0) === 45 // "-"
  const digits = negative ? raw.slice(1) : raw
  const n = digits.length
  return n > 6
    ? `${negative ? "-" : ""}${digits.slice(0, n - 6)}.${digits.slice(n - 6)}`
    : `${negative ? "-" : ""}0.${"000000".slice(n)}${digits}`
}

/** `moneyTextJson(raw, 6, unit)` by `units6Text` (same text; same preconditions on `raw`). */
export const money6TextJson = (raw: string, unit: MoneyUnit): string =>
  `{"decimal":"${units6Text(raw)}","raw":"${raw}","decimals":6,"unit":"${unit}"}`
