/** The markets and events groups of the backend API: endpoint definitions (handlers: `handlers.ts`). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { BackendCandle, BackendPricePoint, BackendTrade, OrderBook } from "../../../schema/backend-activity.js"
import { BackendEvent, BackendEventDetail, BackendMarket, EVENT_STATUSES, ResolvedMarketId } from "../../../schema/backend-markets.js"
import { TIMEFRAMES } from "../../../schema/enums.js"
import { BackendItem, BackendList } from "../../../schema/envelopes.js"
import { Address, Price } from "../../../schema/primitives.js"
import { InvalidAddress, InvalidMarketId, MarketNotFound, ValidationFailed } from "../../../schema/errors.js"
import {
  addressParam,
  booleanParam,
  eventIdParam,
  IdOrSlug,
  IdOrSlugPath,
  integerParam,
  literalParam,
  optional,
  page,
  slugParam,
  strictQuery,
  timestampParam,
  withDefault
} from "../../core/params.js"
import { NotFound } from "../errors.js"
import { localeField } from "../locale.js"
import { LIST_STATUSES, SORTS } from "./repository.js"

const searchParam = Schema.String.pipe(
  Schema.filter((s) => s.length >= 1 && s.length <= 200, {
    title: "q",
    description: "text search in the question, title (any locale) and slug; 1 to 200 characters",
    jsonSchema: { minLength: 1, maxLength: 200 },
    message: () => ({ message: "q must be 1 to 200 characters", override: true })
  })
)

export const MarketListQuery = strictQuery({
  status: optional(
    literalParam("status", LIST_STATUSES, "only markets in this status (default all; trending and ending_soon imply active)")
  ),
  category: optional(slugParam("category", "only markets of this category")),
  featured: optional(booleanParam("featured", "only featured (true) or only non-featured (false) markets")),
  q: optional(searchParam),
  sortBy: withDefault(
    literalParam("sortBy", SORTS, "order; default newest. trending: USDC volume of the last 24 h"),
    () => "newest" as const
  ),
  sortOrder: optional(literalParam("sortOrder", ["asc", "desc"], "default desc (asc for ending_soon)")),
  includeEventChildren: withDefault(
    booleanParam("includeEventChildren", "also list markets that are outcomes of an event (default false)"),
    () => false
  ),
  eventId: optional(eventIdParam("eventId", "only the outcomes of this event (implies includeEventChildren)")),
  ...page,
  ...localeField
})

export const ResolveQuery = strictQuery({ idOrSlug: IdOrSlug })

export const HotQuery = strictQuery({
  limit: withDefault(integerParam("limit", 1, 50, "how many, default 10"), () => 10),
  ...localeField
})

export const LocaleQuery = strictQuery(localeField)

export const OutcomePath = Schema.Struct({
  idOrSlug: IdOrSlug,
  outcomeSlug: Schema.String.annotations({ description: "yes, no, or the slug of an outcome (member market) of the market's event" })
})

export const MarketOutcome = Schema.Struct({
  outcome: Schema.NullOr(Schema.Literal("YES", "NO")).annotations({
    description: "the side named (yes/no); null when a member market was named"
  }),
  token: Schema.NullOr(Address).annotations({ description: "the side's outcome token; null when a member market was named" }),
  price: Schema.NullOr(Price).annotations({ description: "latest price of the side (or the member's YES price)" }),
  market: BackendMarket
}).annotations({
  identifier: "MarketOutcome",
  title: "Market outcome",
  description: "one side of a market, or one outcome market of an event"
})

export const TradesQuery = strictQuery({
  trader: optional(addressParam("trader", "only trades by this trader")),
  source: optional(literalParam("source", ["router", "clob"], "only router trades or only direct CLOB fills")),
  ...page
})

export const PricesQuery = strictQuery({
  from: optional(timestampParam("from", "only snapshots at or after this time")),
  to: optional(timestampParam("to", "only snapshots at or before this time")),
  source: optional(literalParam("source", ["router", "hook_amm"], "only snapshots of this source")),
  ...page
})

export const CandlesQuery = strictQuery({
  timeframe: withDefault(literalParam("timeframe", TIMEFRAMES, "bucket length, default 1h"), () => "1h" as const),
  from: optional(timestampParam("from", "only buckets starting at or after this time")),
  to: optional(timestampParam("to", "only buckets starting at or before this time")),
  ...page
})

export class MarketsGroup extends HttpApiGroup.make("markets")
  .add(
    HttpApiEndpoint.get("list", "/api/markets")
      .setUrlParams(MarketListQuery)
      .addSuccess(BackendList(BackendMarket))
      .annotate(
        OpenApi.Summary,
        "Markets with filters, search and sorts; outcomes of events only with includeEventChildren=true or eventId"
      )
  )
  .add(
    HttpApiEndpoint.get("resolve", "/api/markets/resolve")
      .setUrlParams(ResolveQuery)
      .addSuccess(BackendItem(ResolvedMarketId))
      .addError(MarketNotFound.wire)
      .addError(InvalidMarketId.wire)
      .annotate(OpenApi.Summary, "The canonical ids of a market named by id or slug")
  )
  .add(
    HttpApiEndpoint.get("hot", "/api/markets/hot")
      .setUrlParams(HotQuery)
      .addSuccess(BackendList(BackendMarket))
      .annotate(
        OpenApi.Summary,
        "Curated: featured live markets first, then by score = 24 h USDC volume + 10 USDC per trade in 24 h, router and CLOB trades (order matches outside router trades) alike"
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/api/markets/:idOrSlug")
      .setPath(IdOrSlugPath)
      .setUrlParams(LocaleQuery)
      .addSuccess(BackendItem(BackendMarket))
      .addError(MarketNotFound.wire)
      .addError(InvalidMarketId.wire)
      .annotate(OpenApi.Summary, "One market by decimal id, 0x+64-hex id or slug")
  )
  .add(
    HttpApiEndpoint.get("outcome", "/api/markets/:idOrSlug/outcomes/:outcomeSlug")
      .setPath(OutcomePath)
      .setUrlParams(LocaleQuery)
      .addSuccess(BackendItem(MarketOutcome))
      .addError(MarketNotFound.wire)
      .addError(InvalidMarketId.wire)
      .annotate(OpenApi.Summary, "One side (yes/no) of a market, or one outcome market of its event by slug")
  )
  .add(
    HttpApiEndpoint.get("orderbook", "/api/markets/:idOrSlug/orderbook")
      .setPath(IdOrSlugPath)
      .addSuccess(BackendItem(OrderBook))
      .addError(MarketNotFound.wire)
      .addError(InvalidMarketId.wire)
      .annotate(OpenApi.Summary, "Live orders grouped by price, best first")
  )
  .add(
    HttpApiEndpoint.get("trades", "/api/markets/:idOrSlug/trades")
      .setPath(IdOrSlugPath)
      .setUrlParams(TradesQuery)
      .addSuccess(BackendList(BackendTrade))
      .addError(MarketNotFound.wire)
      .addError(InvalidMarketId.wire)
      .addError(InvalidAddress.wire)
      .annotate(OpenApi.Summary, "Router trades and direct CLOB fills, newest first")
  )
  .add(
    HttpApiEndpoint.get("prices", "/api/markets/:idOrSlug/prices")
      .setPath(IdOrSlugPath)
      .setUrlParams(PricesQuery)
      .addSuccess(BackendList(BackendPricePoint))
      .addError(MarketNotFound.wire)
      .addError(InvalidMarketId.wire)
      .annotate(OpenApi.Summary, "YES price snapshots with open interest, oldest first")
  )
  .add(
    HttpApiEndpoint.get("candles", "/api/markets/:idOrSlug/candles")
      .setPath(IdOrSlugPath)
      .setUrlParams(CandlesQuery)
      .addSuccess(BackendList(BackendCandle))
      .addError(MarketNotFound.wire)
      .addError(InvalidMarketId.wire)
      .annotate(OpenApi.Summary, "OHLC candles of the YES price (1m, 5m, 15m, 1h, 4h, 1d, 1w)")
  ) {}

export const EventListQuery = strictQuery({
  status: optional(literalParam("status", EVENT_STATUSES, "only events in this state")),
  category: optional(slugParam("category", "only events of this category")),
  featured: optional(booleanParam("featured", "only featured (true) or only non-featured (false) events")),
  ...page,
  ...localeField
})

export const EventPath = Schema.Struct({
  eventIdOrSlug: Schema.String.annotations({
    description: "event id (decimal, from 1) or the event's slug; anything else is 400 VALIDATION_FAILED",
    jsonSchema: { type: "string", pattern: "^([1-9][0-9]{0,77}|(?![0-9]+$)[a-z0-9]+(-[a-z0-9]+)*)$" }
  })
})

export class EventsGroup extends HttpApiGroup.make("events")
  .add(
    HttpApiEndpoint.get("list", "/api/events")
      .setUrlParams(EventListQuery)
      .addSuccess(BackendList(BackendEvent))
      .annotate(OpenApi.Summary, "Multi-outcome events")
  )
  .add(
    HttpApiEndpoint.get("get", "/api/events/:eventIdOrSlug")
      .setPath(EventPath)
      .setUrlParams(LocaleQuery)
      .addSuccess(BackendItem(BackendEventDetail))
      .addError(ValidationFailed.wire)
      .addError(NotFound.wire)
      .annotate(
        OpenApi.Summary,
        "One event with its member markets (neither a decimal id nor a slug: 400 VALIDATION_FAILED; unknown event: 404 NOT_FOUND)"
      )
  ) {}
