/**
 * The position of an address in a market, as every position-shaped answer reads it: the
 * pipeline's `position` rows (pipeline/reduce/positions.ts), which follow every way shares move
 * (router trades, CLOB fills, splits, merges, redemptions, refunds, transfers, liquidity) with
 * their cost basis and realized P&L. Balances count shares locked in the owner's live SELL orders
 * (the exchange holds them for the owner), so they can exceed `token_holder` by that much.
 * Protocol contracts have no rows (their token balances stay in `token_holder` only).
 *
 * Invariant: one row per (address, market) that ever held a share.
 */
import type { SqlClient } from "@effect/sql"
import type { Statement } from "@effect/sql"

export interface PositionFilter {
  readonly user?: string
  readonly marketId?: bigint
}

/** `position` rows narrowed by `filter`, in the column names every reader uses. */
export const positionsSource = (sql: SqlClient.SqlClient, filter: PositionFilter): Statement.Fragment => {
  const where = sql.and([
    ...(filter.user === undefined ? [] : [sql`user_address = ${filter.user}`]),
    ...(filter.marketId === undefined ? [] : [sql`market_id = ${filter.marketId.toString()}::numeric`])
  ])
  return sql`(
    select user_address, market_id, yes_balance, no_balance, yes_cost, no_cost, realized_pnl
    from position where ${where}
  )`
}
