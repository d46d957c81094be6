/**
 * `GET /api/markets` and `GET /api/markets/{id}`: the spec's indexer market record, list and
 * single. Volume and trade count come only from router `Trade` events (event-source rule 1).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { IndexerItem, IndexerList } from "../../schema/envelopes.js"
import { MARKET_STATUS_DESCRIPTION, MARKET_STATUSES, type MarketStatus } from "../../schema/market-status.js"
import { IndexerInvalidMarketId, IndexerMarketNotFound } from "../../schema/errors.js"
import { Address, Amount6, BlockNumber, MarketIdHex, Price, Timestamp, TxHash, Uint256 } from "../../schema/primitives.js"
import { booleanParam, literalParam, MarketPath, NoQuery, optional, page, slugParam, strictQuery, withDefault } from "../core/params.js"
import { Count, DisplayMetadata } from "./records.js"
import { MARKET_SORTS, type MarketSort } from "../read/markets.js"

export { MARKET_STATUSES, type MarketStatus }
export { MARKET_SORTS, type MarketSort }

export const Market = Schema.Struct({
  id: Uint256.annotations({ description: "market id, decimal string" }),
  marketIdHex: MarketIdHex,
  question: Schema.String,
  endTime: Timestamp.annotations({ description: "trading ends (unix seconds)" }),
  yesPrice: Price.annotations({
    description:
      "YES price: the latest router trade or AMM swap; before the first trade the pool's initial price, or 0.5 before the pool is initialized; once resolved 1 if YES won, 0 if NO won (a refunded market keeps its last price)"
  }),
  noPrice: Price.annotations({ description: "1 - yesPrice" }),
  totalCollateral: Amount6.annotations({ description: "collateral locked in the market (USDC, six fraction digits)" }),
  volume: Amount6.annotations({ description: "USDC traded through the router (six fraction digits)" }),
  tradeCount: Count.annotations({ description: "router trades" }),
  isResolved: Schema.Boolean,
  outcome: Schema.NullOr(Schema.Boolean).annotations({ description: "true = YES won; null while unresolved" }),
  resolutionType: Schema.Literal("NONE", "ORACLE", "EMERGENCY", "REFUND").annotations({
    description: "how the market closed: NONE (open), ORACLE, EMERGENCY or REFUND (refund mode)"
  }),
  resolvedAt: Schema.NullOr(Timestamp).annotations({ description: "when it was resolved or put in refund mode" }),
  refundMode: Schema.Boolean,
  status: Schema.Literal(...MARKET_STATUSES).annotations({
    description: `${MARKET_STATUS_DESCRIPTION}; at the indexed head's time (schema/market-status.ts)`
  }),
  creator: Address,
  oracle: Address,
  yesToken: Address,
  noToken: Address,
  eventId: Schema.NullOr(Uint256).annotations({ description: "the multi-outcome event this market belongs to; null when standalone" }),
  createdAt: Timestamp,
  createdBlock: BlockNumber,
  createdTx: TxHash,
  lastTradeAt: Schema.NullOr(Timestamp).annotations({ description: "last router trade or AMM swap; null before the first" }),
  metadata: Schema.NullOr(DisplayMetadata)
}).annotations({ identifier: "Market", title: "Market", description: "indexer market record" })
export type Market = typeof Market.Type

export const MarketListQuery = strictQuery({
  status: optional(literalParam("status", MARKET_STATUSES, "only markets in this state (default: all)")),
  sort: withDefault(
    literalParam(
      "sort",
      MARKET_SORTS,
      "order: newest (id descending, the default), oldest (id ascending), volume (descending, then id), trades (trade count descending, then id), ending_soon (endTime ascending, then id)"
    ),
    () => "newest" as const
  ),
  category: optional(slugParam("category", "only markets of this display category")),
  featured: optional(booleanParam("featured", "only featured (true) or only non-featured (false) markets")),
  ...page
})
export type MarketListQuery = typeof MarketListQuery.Type

export class MarketsGroup extends HttpApiGroup.make("markets")
  .add(
    HttpApiEndpoint.get("list", "/api/markets")
      .setUrlParams(MarketListQuery)
      .addSuccess(IndexerList(Market))
      .annotate(OpenApi.Summary, "Markets, filtered and sorted")
  )
  .add(
    HttpApiEndpoint.get("get", "/api/markets/:id")
      .setPath(MarketPath)
      .setUrlParams(NoQuery)
      .addSuccess(IndexerItem(Market))
      .addError(IndexerMarketNotFound.wire)
      .addError(IndexerInvalidMarketId.wire)
      .annotate(OpenApi.Summary, "One market by decimal id or marketIdHex")
  ) {}
