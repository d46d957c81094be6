/**
 * The JSON text of a backend market record (`BackendMarket`, `schema/backend-markets.ts`) written
 * directly: byte for byte `JSON.stringify(Schema.encodeSync(BackendMarket)(record))`, key order
 * included, for every record `toBackendMarket` makes (the binary and multi kinds).
 * test/http/backend/market-json.test.ts compares the two over every market of the indexed fixture
 * in every locale, and records made to reach every branch.
 *
 * Why: the market list and detail were the backend's costliest JS per request on a large index
 * (issue 30): the schema's encoding of the union walks every field through its transformations
 * and checks (about 30 fields and four Money structs per market, more for an event's members).
 * Here each field is written by the same formatting functions the schema's transformations call
 * (`formatPrice`, `toLowerCase`, `toString`), in the schema's field order.
 *
 * What it does not do: check the values. The records come from `toBackendMarket` over rows the
 * read model decoded, so the schema's checks hold by construction; a kind this writer does not
 * know (scalar, sports, grouped: no market is given them today) goes to the schema's encoder,
 * which checks as before.
 */
import { Schema } from "effect"
import { BackendMarket, type MarketStatus } from "../../../schema/backend-markets.js"
import type { LocalizedString } from "../../../schema/primitives.js"
import { moneyJson as money, priceJson as price } from "../json-text.js"

type Market = typeof BackendMarket.Type
type Binary = Extract<Market, { kind: "binary" }>
type Multi = Extract<Market, { kind: "multi" }>
type Member = Multi["multi"]["members"][number]

const str = JSON.stringify as (value: string) => string

const nullableStr = (value: string | null): string => (value === null ? "null" : str(value))

const nullableInt = (value: number | null): string => (value === null ? "null" : String(value))

const localized = (value: LocalizedString): string => `{"key":${str(value.key)},"fallback":${str(value.fallback)}}`

const status = (value: MarketStatus): string => `"${value}"`

const member = (m: Member): string =>
  `{"marketId":"${m.marketId.toLowerCase()}","index":${m.index},"title":${localized(m.title)},"yesPrice":${price(m.yesPrice)},"volume":${money(m.volume)},"status":${status(m.status)}}`

/** The fields every kind has, after `kind` and before the kind's own data, in the schema's order. */
const common = (m: Market): string =>
  `"marketId":"${m.marketId.toLowerCase()}","id":"${m.id.toString()}","slug":${nullableStr(m.slug)},"title":${localized(m.title)},` +
  `"question":${str(m.question)},"category":${nullableStr(m.category)},"featured":${m.featured},"icon":${nullableStr(m.icon)},` +
  `"status":${status(m.status)},"endTime":${m.endTime},"createdAt":${m.createdAt},"createdBlock":${m.createdBlock},` +
  `"creator":"${m.creator.toLowerCase()}","oracle":"${m.oracle.toLowerCase()}","volume":${money(m.volume)},` +
  `"openInterest":${money(m.openInterest)},"tradeCount":${m.tradeCount},"lastTradeAt":${nullableInt(m.lastTradeAt)},` +
  `"outcome":${m.outcome === null ? "null" : `"${m.outcome}"`},"resolvedAt":${nullableInt(m.resolvedAt)},` +
  `"capabilities":{"trade":${m.capabilities.trade},"redeem":${m.capabilities.redeem},"refund":${m.capabilities.refund}}`

const prices = (d: Binary["binary"] | Multi["multi"]): string =>
  `"yesToken":"${d.yesToken.toLowerCase()}","noToken":"${d.noToken.toLowerCase()}","yesPrice":${price(d.yesPrice)},"noPrice":${price(d.noPrice)}`

const bySchema = Schema.encodeSync(BackendMarket)

/** The JSON text of `market`. */
export const marketJson = (market: Market): string => {
  switch (market.kind) {
    case "binary":
      return `{"kind":"binary",${common(market)},"binary":{${prices(market.binary)}}}`
    case "multi": {
      const d = market.multi
      return `{"kind":"multi",${common(market)},"multi":{"eventId":"${d.eventId.toString()}","index":${d.index},${prices(d)},"members":[${d.members.map(member).join(",")}]}}`
    }
    default:
      return JSON.stringify(bySchema(market))
  }
}
