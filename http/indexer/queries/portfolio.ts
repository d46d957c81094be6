/** Reads of `position`, `market`, `trade` and `user_stats` for a user's portfolio (see `portfolio.ts`). */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { timeframeSeconds, type Timeframe } from "../../../schema/enums.js"
import type { Address } from "../../../schema/primitives.js"
import { PRICE_SCALE } from "../../../schema/primitives.js"
import type { Portfolio, PortfolioHistoryQuery, PortfolioPnl, PortfolioPosition } from "../portfolio.js"
import { checkRange, pageOf, read } from "./db.js"
import { toPosition, type PositionRow } from "./market-book.js"
import { marketStatus } from "./markets.js"
import { positionsSource } from "./positions.js"

export interface HeldPositionRow extends PositionRow {
  readonly question: string
  readonly is_resolved: boolean
  readonly refund_mode: boolean
  readonly outcome: boolean | null
  /** Never null since migration 0011 (the market's price before any trade: see pipeline/reduce/markets.ts). */
  readonly yes_price: string
}

/**
 * What a position's shares are worth (see `portfolio.ts`): resolved markets pay 1 per winning
 * share and 0 per losing share; otherwise YES is marked at the latest YES price and NO at 1 minus
 * it, each rounded down (before its first trade a market has its pool's initial price).
 */
export const markPosition = (row: HeldPositionRow): { readonly markPrice: bigint | null; readonly value: bigint } => {
  const yes = BigInt(row.yes_balance)
  const no = BigInt(row.no_balance)
  if (row.is_resolved && row.outcome !== null) return { markPrice: null, value: row.outcome ? yes : no }
  const price = BigInt(row.yes_price)
  return { markPrice: price, value: (yes * price) / PRICE_SCALE + (no * (PRICE_SCALE - price)) / PRICE_SCALE }
}

const isOpen = (row: PositionRow) => BigInt(row.yes_balance) > 0n || BigInt(row.no_balance) > 0n

const heldPositions = (address: Address) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<HeldPositionRow>`
      select p.user_address, p.market_id, p.yes_balance, p.no_balance, p.yes_cost, p.no_cost, p.realized_pnl,
             m.question, m.is_resolved, m.refund_mode, m.outcome, m.yes_price
      from ${positionsSource(sql, { user: address })} p join market m on m.id = p.market_id
      order by p.market_id`
  )

/** Open positions marked, and the totals over every position row of the user. */
const summarize = (address: Address, rows: ReadonlyArray<HeldPositionRow>) => {
  const positions = rows.filter(isOpen).map((row): PortfolioPosition => {
    const { markPrice, value } = markPosition(row)
    const position = toPosition(row)
    return {
      ...position,
      question: row.question,
      marketStatus: marketStatus(row),
      outcome: row.outcome,
      markPrice,
      value,
      unrealizedPnl: value - position.yesCost - position.noCost
    }
  })
  const value = positions.reduce((sum, p) => sum + p.value, 0n)
  const cost = positions.reduce((sum, p) => sum + p.yesCost + p.noCost, 0n)
  const realizedPnl = rows.reduce((sum, row) => sum + BigInt(row.realized_pnl), 0n)
  return { address, positions, openPositions: positions.length, value, cost, unrealizedPnl: value - cost, realizedPnl, totalPnl: realizedPnl + value - cost }
}

export const readPortfolio = (address: Address) =>
  heldPositions(address).pipe(
    Effect.map((rows): { data: Portfolio; meta: null } => ({ data: summarize(address, rows), meta: null })),
    read
  )

export const readPnl = (address: Address) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [rows, stats] = yield* Effect.all(
      [heldPositions(address), sql<{ volume: string; trade_count: string }>`select volume, trade_count from user_stats where address = ${address}`],
      { concurrency: 2 }
    )
    const { positions: _positions, ...totals } = summarize(address, rows)
    const pnl: PortfolioPnl = {
      ...totals,
      volume: BigInt(stats[0]?.volume ?? "0"),
      tradeCount: Number(stats[0]?.trade_count ?? 0),
      marketsTraded: rows.length
    }
    return { data: pnl, meta: null }
  }).pipe(read)

/** Weeks start on Monday 00:00 UTC (unix time 0 was a Thursday), as candle buckets do. */
const bucketOffset = (timeframe: Timeframe) => (timeframe === "1w" ? 4 * 86_400 : 0)

export const readPortfolioHistory = (address: Address, query: PortfolioHistoryQuery) =>
  Effect.gen(function* () {
    yield* checkRange(query.from, query.to)
    const sql = yield* SqlClient.SqlClient
    const seconds = timeframeSeconds(query.timeframe)
    const offset = bucketOffset(query.timeframe)
    // Running totals over every bucket first, then the from/to window, so cumulativeNetFlow counts earlier flows.
    const series = sql`
      with flows as (
        select ((timestamp - ${offset}) / ${seconds}) * ${seconds} + ${offset} as bucket,
               coalesce(sum(amount_in) filter (where trade_type in (0, 2)), 0) as bought,
               coalesce(sum(amount_out) filter (where trade_type in (1, 3)), 0) as sold,
               count(*) as trades,
               (array_agg(distinct market_id order by market_id))::text[] as market_ids
        from trade where recipient = ${address} group by 1
      )
      select bucket, bought, sold, trades, market_ids,
             sum(sold - bought) over (order by bucket rows between unbounded preceding and current row) as cumulative
      from flows`
    const where = sql.and([
      ...(query.from === undefined ? [] : [sql`bucket >= ${query.from}`]),
      ...(query.to === undefined ? [] : [sql`bucket <= ${query.to}`])
    ])
    const page = yield* pageOf(
      sql<{ bucket: string; bought: string; sold: string; trades: string; market_ids: Array<string>; cumulative: string; total_count: string }>`
        select s.*, count(*) over () as total_count from (${series}) s where ${where}
        order by bucket limit ${query.limit} offset ${query.offset}`,
      sql<{ count: string }>`select count(*) as count from (${series}) s where ${where}`,
      query.offset
    )
    const data = page.rows.map((row) => ({
      timeframe: query.timeframe,
      timestamp: Number(row.bucket),
      bought: BigInt(row.bought),
      sold: BigInt(row.sold),
      netFlow: BigInt(row.sold) - BigInt(row.bought),
      cumulativeNetFlow: BigInt(row.cumulative),
      tradeCount: Number(row.trades),
      marketIds: row.market_ids.map((id) => BigInt(id))
    }))
    return { data, meta: { limit: query.limit, offset: query.offset, count: page.count } }
  }).pipe(read)
