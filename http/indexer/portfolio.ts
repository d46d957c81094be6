/**
 * A user's portfolio: open positions marked to market (`/api/portfolio/{address}`), the portfolio
 * over time (`/history`: value, cost and P&L at the end of each bucket beside the cash flow of the
 * router trades), and aggregated profit and loss (`/pnl`).
 *
 * Marking: an unresolved market's shares are worth its latest YES price (NO: 1 - YES); a resolved
 * market's winning shares 1 and losing shares 0; a market in refund mode is marked at its last
 * price too; a market before its first trade at the pool's initial price (0.5 before the pool
 * exists). Positions follow every way shares move (see `queries/positions.ts` and docs/positions.md's
 * rule table); protocol contracts have none.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { IndexerItem, IndexerList } from "../../schema/envelopes.js"
import { IndexerInvalidAddress } from "../../schema/errors.js"
import { TIMEFRAMES, Timeframe } from "../../schema/enums.js"
import { MARKET_STATUS_DESCRIPTION, MARKET_STATUSES } from "../../schema/market-status.js"
import { Address, Amount6, Price, SignedAmount6, Timestamp, Uint256 } from "../../schema/primitives.js"
import { Position } from "./market-book.js"
import { AddressPath, literalParam, NoQuery, optional, page, strictQuery, timestampParam, withDefault } from "../core/params.js"
import { Count } from "./records.js"

export const PortfolioPosition = Schema.Struct({
  ...Position.fields,
  question: Schema.String,
  marketStatus: Schema.Literal(...MARKET_STATUSES).annotations({ description: MARKET_STATUS_DESCRIPTION }),
  outcome: Schema.NullOr(Schema.Boolean),
  markPrice: Schema.NullOr(Price).annotations({
    description: "YES price used to mark the position; null when resolved (winning shares 1, losing 0)"
  }),
  value: Amount6.annotations({ description: "what the shares held are worth (USDC)" }),
  unrealizedPnl: SignedAmount6.annotations({ description: "value - (yesCost + noCost)" })
}).annotations({ identifier: "PortfolioPosition", title: "Portfolio position", description: "an open position marked to market" })
export type PortfolioPosition = typeof PortfolioPosition.Type

const totalsFields = {
  value: Amount6.annotations({ description: "sum of the open positions' values" }),
  cost: Amount6.annotations({ description: "sum of the open positions' cost basis" }),
  unrealizedPnl: SignedAmount6,
  realizedPnl: SignedAmount6.annotations({ description: "realized over every position, open or closed" }),
  totalPnl: SignedAmount6.annotations({ description: "realizedPnl + unrealizedPnl" })
}

export const Portfolio = Schema.Struct({
  address: Address,
  positions: Schema.Array(PortfolioPosition).annotations({ description: "open positions (a balance on either side), by market id" }),
  openPositions: Count,
  ...totalsFields
}).annotations({ identifier: "Portfolio", title: "Portfolio", description: "a user's open positions and P&L" })
export type Portfolio = typeof Portfolio.Type

export const PortfolioPnl = Schema.Struct({
  address: Address,
  ...totalsFields,
  volume: Amount6.annotations({ description: "USDC traded through the router as trader" }),
  tradeCount: Count,
  marketsTraded: Count.annotations({
    description: "markets in which the address holds tokens or traded, split, merged, redeemed or was refunded"
  }),
  openPositions: Count
}).annotations({ identifier: "PortfolioPnl", title: "Portfolio P&L", description: "a user's aggregated profit and loss" })
export type PortfolioPnl = typeof PortfolioPnl.Type

export const PortfolioHistoryPoint = Schema.Struct({
  timeframe: Timeframe,
  timestamp: Timestamp.annotations({ description: "start of the bucket" }),
  bought: Amount6.annotations({ description: "USDC paid for shares (router buys) in the bucket" }),
  sold: Amount6.annotations({ description: "USDC received for shares (router sells) in the bucket" }),
  netFlow: SignedAmount6.annotations({ description: "sold - bought" }),
  cumulativeNetFlow: SignedAmount6.annotations({ description: "netFlow summed over every bucket up to and including this one" }),
  tradeCount: Count,
  marketIds: Schema.Array(Uint256).annotations({ description: "markets traded in the bucket" }),
  value: Amount6.annotations({
    description:
      "what the shares held at the end of the bucket were worth then: each market marked at its last price by then (the bucket's close, carried forward), winning shares 1 and losing 0 once resolved"
  }),
  cost: Amount6.annotations({ description: "cost basis of the positions open at the end of the bucket" }),
  unrealizedPnl: SignedAmount6.annotations({ description: "value - cost" }),
  realizedPnl: SignedAmount6.annotations({ description: "realized up to the end of the bucket, over every position" }),
  totalPnl: SignedAmount6.annotations({ description: "realizedPnl + unrealizedPnl" }),
  openPositions: Count.annotations({ description: "positions with a share on either side at the end of the bucket" })
}).annotations({
  identifier: "PortfolioHistoryPoint",
  title: "Portfolio history point",
  description:
    "a user's portfolio at the end of one time bucket (value, cost basis, P&L, marked as the snapshot marks it) beside the cash flow of their router trades (as recipient) in the bucket"
})
export type PortfolioHistoryPoint = typeof PortfolioHistoryPoint.Type

export const PortfolioHistoryQuery = strictQuery({
  timeframe: withDefault(literalParam("timeframe", TIMEFRAMES, "bucket length, default 1d"), () => "1d" as const),
  from: optional(timestampParam("from", "only buckets starting at or after this time")),
  to: optional(timestampParam("to", "only buckets starting at or before this time")),
  ...page
})
export type PortfolioHistoryQuery = typeof PortfolioHistoryQuery.Type

export class PortfolioGroup extends HttpApiGroup.make("portfolio")
  .add(
    HttpApiEndpoint.get("snapshot", "/api/portfolio/:address")
      .setPath(AddressPath)
      .setUrlParams(NoQuery)
      .addSuccess(IndexerItem(Portfolio))
      .addError(IndexerInvalidAddress.wire)
      .annotate(OpenApi.Summary, "Open positions marked to market, with P&L (an address with no activity has none)")
  )
  .add(
    HttpApiEndpoint.get("history", "/api/portfolio/:address/history")
      .setPath(AddressPath)
      .setUrlParams(PortfolioHistoryQuery)
      .addSuccess(IndexerList(PortfolioHistoryPoint))
      .addError(IndexerInvalidAddress.wire)
      .annotate(
        OpenApi.Summary,
        "Historical portfolio: value, cost basis and P&L at the end of each time bucket, with the cash flow of the user's router trades in it"
      )
      .annotate(
        OpenApi.Description,
        "Oldest first; a bucket is listed when the user received a router trade in it, one of the user's positions moved in it, or a market the user has held since an earlier or the same bucket has a price snapshot or resolved in it: between two listed buckets nothing shown changes. " +
          "Positions are those of `/api/portfolio/{address}` as they stood at the end of the bucket (kept per minute, so every timeframe is exact), marked at the bucket's close carried forward (before a market's first price: its current price if it has not traded yet, else 0.5), winning shares 1 and losing 0 once resolved. " +
          "The last listed bucket's value, cost and P&L are the snapshot's."
      )
  )
  .add(
    HttpApiEndpoint.get("pnl", "/api/portfolio/:address/pnl")
      .setPath(AddressPath)
      .setUrlParams(NoQuery)
      .addSuccess(IndexerItem(PortfolioPnl))
      .addError(IndexerInvalidAddress.wire)
      .annotate(OpenApi.Summary, "Aggregated realized and unrealized P&L")
  ) {}
