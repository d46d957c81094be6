/**
 * The position of an address in a market, as every position-shaped answer reads it.
 *
 * Balances are the outcome-token balances from ERC-20 Transfer events (`token_holder`): every way
 * tokens move (router trades, CLOB fills, splits, merges, transfers) is in them, so they are
 * never negative and never miss a holder. Cost basis and realized P&L come from the pipeline's
 * `position` rows (router trades as recipient, splits, merges, redemptions, refunds); an address
 * with tokens but no such row has cost 0 and realized 0. A cost basis is never shown below 0.
 *
 * Invariant: one row per (address, market) that holds a token or has a position row.
 */
import type { SqlClient } from "@effect/sql"
import type { Statement } from "@effect/sql"

export interface PositionFilter {
  readonly user?: string
  readonly marketId?: bigint
}

/** `position` ⟗ per-holder balances of `token_holder`, both narrowed by `filter` before the join. */
export const positionsSource = (sql: SqlClient.SqlClient, filter: PositionFilter): Statement.Fragment => {
  const positionWhere = sql.and([
    ...(filter.user === undefined ? [] : [sql`user_address = ${filter.user}`]),
    ...(filter.marketId === undefined ? [] : [sql`market_id = ${filter.marketId.toString()}::numeric`])
  ])
  const holderWhere = sql.and([
    ...(filter.user === undefined ? [] : [sql`holder = ${filter.user}`]),
    ...(filter.marketId === undefined ? [] : [sql`market_id = ${filter.marketId.toString()}::numeric`])
  ])
  return sql`(
    select coalesce(p.user_address, h.holder) as user_address, coalesce(p.market_id, h.market_id) as market_id,
           coalesce(h.yes, 0) as yes_balance, coalesce(h.no, 0) as no_balance,
           greatest(coalesce(p.yes_cost, 0), 0) as yes_cost, greatest(coalesce(p.no_cost, 0), 0) as no_cost,
           coalesce(p.realized_pnl, 0) as realized_pnl
    from (select user_address, market_id, yes_cost, no_cost, realized_pnl from position where ${positionWhere}) p
    full join (
      select holder, market_id, coalesce(sum(balance) filter (where side = 'YES'), 0) as yes,
             coalesce(sum(balance) filter (where side = 'NO'), 0) as no
      from token_holder where ${holderWhere} group by holder, market_id
    ) h on h.holder = p.user_address and h.market_id = p.market_id
  )`
}
