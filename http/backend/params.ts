/**
 * Path and query parameters of the backend. Path parameters that name a market or an address are
 * plain strings on the way in (documented with their pattern) and parsed by the handler
 * (`lookup.ts`), so a malformed one is INVALID_MARKET_ID / INVALID_ADDRESS with a message that
 * says which forms are accepted; query parameters are decoded by schemas that reject unknown
 * names (a misspelt filter is VALIDATION_FAILED, not a silently unfiltered list).
 */
import { Schema } from "effect"
import { optional, literalParam } from "../indexer/params.js"
import { LOCALES } from "./locale.js"

export const IdOrSlug = Schema.String.annotations({
  title: "idOrSlug",
  description: "market id (decimal, or 0x followed by 64 hex digits) or the market's slug",
  jsonSchema: { type: "string", pattern: "^([1-9][0-9]*|0[xX][0-9a-fA-F]{64}|[a-z0-9]+(-[a-z0-9]+)*)$" }
})

export const MarketIdString = Schema.String.annotations({
  title: "marketId",
  description: "market id: decimal, or 0x followed by 64 hex digits",
  jsonSchema: { type: "string", pattern: "^([1-9][0-9]*|0[xX][0-9a-fA-F]{64})$" }
})

const addressAnnotations = {
  title: "address",
  description: "account address: 0x followed by 40 hex digits (any case; answers are lowercase)",
  jsonSchema: { type: "string", pattern: "^0[xX][0-9a-fA-F]{40}$" }
}

export const AddressString = Schema.String.annotations(addressAnnotations)

export const IdOrSlugPath = Schema.Struct({ idOrSlug: IdOrSlug })
export const MarketIdPath = Schema.Struct({ marketId: MarketIdString })
/**
 * An address in a path, lowercased as it is decoded: every case of one address names one
 * resource, and so one answer-cache entry (`front-door.ts`); handlers still check its shape.
 */
const AddressPathString = Schema.Lowercase.annotations(addressAnnotations)

export const AddressPath = Schema.Struct({ address: AddressPathString })

/** `?locale=` (en, vi, ja, ko); without it Accept-Language decides, then English. */
export const localeField = {
  locale: optional(literalParam("locale", LOCALES, "language of titles; default from Accept-Language, else en"))
}
