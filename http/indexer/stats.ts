/**
 * `GET /api/stats`: protocol totals. Volume and trade counts come only from router `Trade`
 * events (the spec's first event-source rule); amounts are six-decimal strings, counts integers
 * (as `tradeCount` is everywhere).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { IndexerItem } from "../../schema/envelopes.js"
import { ServiceUnavailable } from "../../schema/errors.js"
import { formatUnits6 } from "../../schema/primitives.js"
import { NoQuery } from "./params.js"
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

export const readStats = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [totals] = yield* sql.unsafe<{ total_markets: string; total_volume: string; total_trades: string; total_users: string }>(
    `select total_markets, total_volume, total_trades, total_users from protocol_stats where id = 1`
  )
  const [markets] = yield* sql.unsafe<{ collateral: string; active: string; resolved: string; refund: string }>(
    `select coalesce(sum(total_collateral), 0) as collateral,
            count(*) filter (where not is_resolved and not refund_mode) as active,
            count(*) filter (where is_resolved) as resolved,
            count(*) filter (where refund_mode and not is_resolved) as refund
       from market`
  )
  return {
    totalMarkets: Number(totals?.total_markets ?? 0),
    totalVolume: formatUnits6(BigInt(totals?.total_volume ?? "0")),
    totalTrades: Number(totals?.total_trades ?? 0),
    totalUsers: Number(totals?.total_users ?? 0),
    totalCollateral: formatUnits6(BigInt(markets?.collateral ?? "0")),
    activeMarkets: Number(markets?.active ?? 0),
    resolvedMarkets: Number(markets?.resolved ?? 0),
    refundMarkets: Number(markets?.refund ?? 0)
  }
}).pipe(
  Effect.disconnect,
  Effect.timeout("5 seconds"),
  Effect.mapError((error) => new ServiceUnavailable({ message: `database unavailable: ${error.message}` }))
)
