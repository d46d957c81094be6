/**
 * Oracles: the approved set (`/api/oracles/approved`), a manual oracle's current reports
 * (`/api/oracles/manual/{oracleContract}/reports`) and a price-feed oracle's registered markets
 * (`/api/oracles/pricefeed/{oracleContract}/markets`). An address that is no such oracle has none.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { IndexerList } from "../../schema/envelopes.js"
import { IndexerInvalidAddress } from "../../schema/errors.js"
import { Address, BlockNumber, Int256, Timestamp, Uint256 } from "../../schema/primitives.js"
import { addressParam, literalParam, optional, page, PageQuery, strictQuery } from "../core/params.js"
import { FEED_MARKET_STATES, REPORT_STATES, REPORT_SUBJECTS } from "../read/oracles.js"

export { FEED_MARKET_STATES, REPORT_STATES, REPORT_SUBJECTS }

export const ApprovedOracle = Schema.Struct({
  oracle: Address,
  approvedAt: Timestamp.annotations({ description: "when the current approval was recorded" }),
  approvedBlock: BlockNumber
}).annotations({ identifier: "ApprovedOracle", title: "Approved oracle", description: "an oracle the diamond currently accepts" })
export type ApprovedOracle = typeof ApprovedOracle.Type

export const ManualReport = Schema.Struct({
  oracle: Address,
  subject: Schema.Literal(...REPORT_SUBJECTS),
  subjectId: Uint256.annotations({ description: "market id or event id" }),
  state: Schema.Literal(...REPORT_STATES),
  outcome: Schema.NullOr(Schema.Boolean).annotations({ description: "reported outcome of a market" }),
  winningIndex: Schema.NullOr(Uint256).annotations({ description: "reported winning index of an event (as reported, unchecked)" }),
  reporter: Schema.NullOr(Address),
  reportedAt: Schema.NullOr(Timestamp),
  finalizesAt: Schema.NullOr(Timestamp).annotations({ description: "when the challenge delay ends" }),
  admin: Schema.NullOr(Address).annotations({ description: "who revoked or reopened the report" }),
  updatedAt: Timestamp,
  updatedBlock: BlockNumber
}).annotations({
  identifier: "ManualReport",
  title: "Manual report",
  description: "the current report of a market or event at a manual oracle"
})
export type ManualReport = typeof ManualReport.Type

export const PriceFeedMarket = Schema.Struct({
  oracle: Address,
  marketId: Uint256,
  feed: Address,
  threshold: Int256.annotations({ description: "in the feed's own decimals" }),
  gte: Schema.Boolean.annotations({ description: "true: YES when price >= threshold; false: YES when price < threshold" }),
  snapshotAt: Timestamp,
  state: Schema.Literal(...FEED_MARKET_STATES),
  price: Schema.NullOr(Int256).annotations({ description: "the feed price it resolved with (feed decimals)" }),
  outcome: Schema.NullOr(Schema.Boolean),
  registeredAt: Timestamp,
  updatedAt: Timestamp,
  updatedBlock: BlockNumber
}).annotations({ identifier: "PriceFeedMarket", title: "Price-feed market", description: "a market registered at a price-feed oracle" })
export type PriceFeedMarket = typeof PriceFeedMarket.Type

export const OraclePath = Schema.Struct({ oracleContract: addressParam("oracleContract", "oracle contract address") })

export const ReportQuery = strictQuery({
  subject: optional(literalParam("subject", REPORT_SUBJECTS, "only reports about markets or about events")),
  state: optional(literalParam("state", REPORT_STATES, "only reports in this state")),
  ...page
})
export type ReportQuery = typeof ReportQuery.Type

export const FeedMarketQuery = strictQuery({
  state: optional(literalParam("state", FEED_MARKET_STATES, "only markets in this state")),
  ...page
})
export type FeedMarketQuery = typeof FeedMarketQuery.Type

export class OraclesGroup extends HttpApiGroup.make("oracles")
  .add(
    HttpApiEndpoint.get("approved", "/api/oracles/approved")
      .setUrlParams(PageQuery)
      .addSuccess(IndexerList(ApprovedOracle))
      .annotate(OpenApi.Summary, "Oracles currently approved, by address")
  )
  .add(
    HttpApiEndpoint.get("manualReports", "/api/oracles/manual/:oracleContract/reports")
      .setPath(OraclePath)
      .setUrlParams(ReportQuery)
      .addSuccess(IndexerList(ManualReport))
      .addError(IndexerInvalidAddress.wire)
      .annotate(OpenApi.Summary, "Current reports of a manual oracle, latest update first (then subject, id)")
  )
  .add(
    HttpApiEndpoint.get("priceFeedMarkets", "/api/oracles/pricefeed/:oracleContract/markets")
      .setPath(OraclePath)
      .setUrlParams(FeedMarketQuery)
      .addSuccess(IndexerList(PriceFeedMarket))
      .addError(IndexerInvalidAddress.wire)
      .annotate(OpenApi.Summary, "Markets registered at a price-feed oracle, by market id")
  ) {}
