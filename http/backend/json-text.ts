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
