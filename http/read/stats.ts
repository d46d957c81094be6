/** The reads behind `GET /api/stats` (see `stats.ts`): the protocol totals row and the market counts. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { ServiceUnavailable } from "../../schema/errors.js"
import { formatUnits6 } from "../../schema/primitives.js"
import { bigint, int, rowDecoder } from "../core/rows.js"

/** The records of these reads (decoded rows: bigint amounts, lowercase addresses and hashes). */
export interface StatsRecord {
  readonly totalMarkets: number
  /** USDC traded, formatted with six fraction digits (`formatUnits6`). */
  readonly totalVolume: string
  readonly totalTrades: number
  readonly totalUsers: number
  readonly totalCollateral: string
  readonly activeMarkets: number
  readonly resolvedMarkets: number
  readonly refundMarkets: number
}

const decodeTotalsRow = rowDecoder({ total_markets: int, total_volume: bigint, total_trades: int, total_users: int })
const decodeMarketsRow = rowDecoder({ collateral: bigint, active: int, resolved: int, refund: int })

export const readStats = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [totalsRaw] = yield* sql`select total_markets, total_volume, total_trades, total_users from protocol_stats where id = 1`
  const [marketsRaw] = yield* sql`
    select coalesce(sum(total_collateral), 0) as collateral,
           count(*) filter (where not is_resolved and not refund_mode) as active,
           count(*) filter (where is_resolved) as resolved,
           count(*) filter (where refund_mode and not is_resolved) as refund
      from market`
  // No totals row before the first indexed event; the market aggregate always has its one row.
  const totals = totalsRaw === undefined ? undefined : decodeTotalsRow(totalsRaw)
  const markets = decodeMarketsRow(marketsRaw)
  const stats: StatsRecord = {
    totalMarkets: totals?.total_markets ?? 0,
    totalVolume: formatUnits6(totals?.total_volume ?? 0n),
    totalTrades: totals?.total_trades ?? 0,
    totalUsers: totals?.total_users ?? 0,
    totalCollateral: formatUnits6(markets.collateral),
    activeMarkets: markets.active,
    resolvedMarkets: markets.resolved,
    refundMarkets: markets.refund
  }
  return stats
}).pipe(
  Effect.disconnect,
  Effect.timeout("5 seconds"),
  Effect.mapError((error) => new ServiceUnavailable({ message: `database unavailable: ${error.message}` }))
)
