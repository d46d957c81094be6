/**
 * The locale of user-visible text (spec: LocalizedString; protocol-facts section 5): `?locale=`
 * when given, else the best supported language of `Accept-Language` (q-values honoured, primary
 * subtag only: `vi-VN` is `vi`), else English. Titles fall back to English where a market has no
 * translation, and to the on-chain question where it has no display metadata at all.
 */
import { localized, type LocalizedString } from "../../schema/primitives.js"
import { literalParam, optional } from "../core/params.js"

export const LOCALES = ["en", "vi", "ja", "ko"] as const
export type Locale = (typeof LOCALES)[number]

const isLocale = (value: string): value is Locale => (LOCALES as ReadonlyArray<string>).includes(value)

/** The supported locale `Accept-Language` prefers most, or undefined. */
export const fromAcceptLanguage = (header: string | undefined): Locale | undefined => {
  if (header === undefined) return undefined
  let best: { locale: Locale; q: number } | undefined
  for (const part of header.slice(0, 1_000).split(",")) {
    const [range = "", ...params] = part.trim().split(";")
    const primary = range.trim().toLowerCase().split("-")[0] ?? ""
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith("q="))
    const q = qParam === undefined ? 1 : Number(qParam.slice(2))
    if (!isLocale(primary) || !Number.isFinite(q) || q <= 0) continue
    if (best === undefined || q > best.q) best = { locale: primary, q }
  }
  return best?.locale
}

export const resolveLocale = (query: string | undefined, acceptLanguage: string | undefined): Locale =>
  query !== undefined && isLocale(query) ? query : (fromAcceptLanguage(acceptLanguage) ?? "en")

/** `{ key, fallback }`: the text in `locale`, else English, else `otherwise`. */
export const localizedTitle = (
  key: string,
  titles: Readonly<Record<string, string>> | null | undefined,
  locale: Locale,
  otherwise: string
): LocalizedString => localized(key, titles?.[locale] ?? titles?.["en"] ?? otherwise)

/** `?locale=` (en, vi, ja, ko); without it Accept-Language decides, then English. */
export const localeField = {
  locale: optional(literalParam("locale", LOCALES, "language of titles; default from Accept-Language, else en"))
}
