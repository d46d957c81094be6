/**
 * `GET /api/stats`: protocol totals. Volume and trade counts come only from router `Trade`
 * events (the spec's first event-source rule); amounts are six-decimal strings, counts integers
 * (as `tradeCount` is everywhere).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { IndexerItem } from "../../schema/envelopes.js"
import { ServiceUnavailable } from "../../schema/errors.js"
import { NoQuery } from "../core/params.js"
import { Count } from "./records.js"

export const Stats = Schema.Struct({
  totalMarkets: Count.annotations({ description: "markets created" }),
  totalVolume: Schema.String.annotations({ description: "USDC traded through the router, six fraction digits" }),
  totalTrades: Count.annotations({ description: "router trades" }),
  totalUsers: Count.annotations({
    description: "distinct addresses, protocol contracts excluded, that traded: router trader or recipient, CLOB maker or taker"
  }),
  totalCollateral: Schema.String.annotations({ description: "collateral locked in all markets, six fraction digits" }),
  activeMarkets: Count.annotations({ description: "markets neither resolved nor in refund mode" }),
  resolvedMarkets: Count.annotations({ description: "markets resolved by an oracle or by emergency" }),
  refundMarkets: Count.annotations({ description: "unresolved markets in refund mode" })
}).annotations({ identifier: "Stats" })

export class StatsGroup extends HttpApiGroup.make("stats").add(
  HttpApiEndpoint.get("stats", "/api/stats")
    .setUrlParams(NoQuery)
    .addSuccess(IndexerItem(Stats))
    .addError(ServiceUnavailable.wire)
    .annotate(OpenApi.Summary, "Protocol totals: markets, router volume and trades, users, collateral")
) {}
