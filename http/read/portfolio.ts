/**
 * Reads of `position`, `position_move`, `market`, `candle`, `trade` and `user_stats` for a
 * user's portfolio (see `portfolio.ts`).
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect } from "effect"
import { timeframeSeconds, type Timeframe } from "../../schema/enums.js"
import type { Address } from "../../schema/primitives.js"
import { PRICE_SCALE } from "../../schema/primitives.js"
import { checkRange, listPage, read } from "../core/db.js"
import { positionColumns, toPosition, type PositionRow } from "./market-book.js"
import { MARKET_STATUSES, marketStatusSql } from "../../schema/market-status.js"
import { positionsSource } from "./positions.js"
import { array, bigint, bool, int, nullable, oneOf, rowDecoder, text } from "../core/rows.js"

/** The records of these reads (decoded rows: bigint amounts, lowercase addresses and hashes). */
export interface PortfolioRecord {
  readonly realizedPnl: bigint
  readonly value: bigint
  readonly unrealizedPnl: bigint
  readonly address: Address
  readonly positions: readonly {
    readonly marketId: bigint
    readonly user: Address
    readonly yesBalance: bigint
    readonly noBalance: bigint
    readonly yesCost: bigint
    readonly noCost: bigint
    readonly realizedPnl: bigint
    readonly question: string
    readonly marketStatus: "active" | "paused" | "closed" | "resolved" | "refunding"
    readonly outcome: boolean | null
    readonly markPrice: bigint | null
    readonly value: bigint
    readonly unrealizedPnl: bigint
  }[]
  readonly openPositions: number
  readonly cost: bigint
  readonly totalPnl: bigint
}

export interface PortfolioHistoryPointRecord {
  readonly realizedPnl: bigint
  readonly value: bigint
  readonly unrealizedPnl: bigint
  readonly openPositions: number
  readonly cost: bigint
  readonly totalPnl: bigint
  readonly tradeCount: number
  readonly timeframe: "1m" | "5m" | "15m" | "1h" | "4h" | "1d" | "1w"
  readonly timestamp: number
  readonly bought: bigint
  readonly sold: bigint
  readonly netFlow: bigint
  readonly cumulativeNetFlow: bigint
  readonly marketIds: readonly bigint[]
}

export interface PortfolioHistoryParams {
  readonly from?: number
  readonly to?: number
  readonly timeframe: "1m" | "5m" | "15m" | "1h" | "4h" | "1d" | "1w"
  readonly limit: number
  readonly offset: number
}

export interface PortfolioPnlRecord {
  readonly realizedPnl: bigint
  readonly value: bigint
  readonly unrealizedPnl: bigint
  readonly address: Address
  readonly openPositions: number
  readonly cost: bigint
  readonly totalPnl: bigint
  readonly volume: bigint
  readonly tradeCount: number
  readonly marketsTraded: number
}

export interface PortfolioPositionRecord {
  readonly marketId: bigint
  readonly user: Address
  readonly yesBalance: bigint
  readonly noBalance: bigint
  readonly yesCost: bigint
  readonly noCost: bigint
  readonly realizedPnl: bigint
  readonly question: string
  readonly marketStatus: "active" | "paused" | "closed" | "resolved" | "refunding"
  readonly outcome: boolean | null
  readonly markPrice: bigint | null
  readonly value: bigint
  readonly unrealizedPnl: bigint
}

const decodeHeldPositionRow = rowDecoder({
  ...positionColumns,
  question: text(),
  is_resolved: bool,
  refund_mode: bool,
  outcome: nullable(bool),
  /** Never null since migration 0011 (the market's price before any trade: see pipeline/reduce/markets.ts). */
  yes_price: bigint,
  status: oneOf(...MARKET_STATUSES)
})
type HeldPositionRow = ReturnType<typeof decodeHeldPositionRow>

/**
 * What a position's shares are worth (see `portfolio.ts`): resolved markets pay 1 per winning
 * share and 0 per losing share; otherwise YES is marked at the latest YES price and NO at 1 minus
 * it, each rounded down (before its first trade a market has its pool's initial price).
 */
export const markPosition = (row: HeldPositionRow): { readonly markPrice: bigint | null; readonly value: bigint } => {
  const yes = row.yes_balance
  const no = row.no_balance
  if (row.is_resolved && row.outcome !== null) return { markPrice: null, value: row.outcome ? yes : no }
  const price = row.yes_price
  return { markPrice: price, value: (yes * price) / PRICE_SCALE + (no * (PRICE_SCALE - price)) / PRICE_SCALE }
}

const isOpen = (row: PositionRow) => row.yes_balance > 0n || row.no_balance > 0n

const heldPositions = (address: Address) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`
      select p.user_address, p.market_id, p.yes_balance, p.no_balance, p.yes_cost, p.no_cost, p.realized_pnl,
             m.question, m.is_resolved, m.refund_mode, m.outcome, m.yes_price, ${sql.literal(marketStatusSql("m"))} as status
      from ${positionsSource(sql, { user: address })} p join market m on m.id = p.market_id
      order by p.market_id`
  ).pipe(Effect.map((rows) => rows.map(decodeHeldPositionRow)))

/**
 * Open positions marked, and the totals over every position row of the user. One pass building
 * each record as a literal: a heavy trader has hundreds of rows on every uncached portfolio request.
 */
const summarize = (address: Address, rows: ReadonlyArray<HeldPositionRow>) => {
  const positions: Array<PortfolioPositionRecord> = []
  let value = 0n
  let cost = 0n
  let realizedPnl = 0n
  for (const row of rows) {
    realizedPnl += row.realized_pnl
    if (!isOpen(row)) continue
    const marked = markPosition(row)
    value += marked.value
    cost += row.yes_cost + row.no_cost
    positions.push({
      ...toPosition(row),
      question: row.question,
      marketStatus: row.status,
      outcome: row.outcome,
      markPrice: marked.markPrice,
      value: marked.value,
      unrealizedPnl: marked.value - row.yes_cost - row.no_cost
    })
  }
  return {
    address,
    positions,
    openPositions: positions.length,
    value,
    cost,
    unrealizedPnl: value - cost,
    realizedPnl,
    totalPnl: realizedPnl + value - cost
  }
}

export const readPortfolio = (address: Address) =>
  heldPositions(address).pipe(
    Effect.map((rows): { data: PortfolioRecord; meta: null } => ({ data: summarize(address, rows), meta: null })),
    read
  )

const decodeTradedRow = rowDecoder({ volume: bigint, trade_count: int })

export const readPnl = (address: Address) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [rows, stats] = yield* Effect.all(
      [heldPositions(address), sql`select volume, trade_count from user_stats where address = ${address}`],
      { concurrency: 2 }
    )
    const { positions: _positions, ...totals } = summarize(address, rows)
    const traded = stats[0] === undefined ? undefined : decodeTradedRow(stats[0])
    const pnl: PortfolioPnlRecord = {
      ...totals,
      volume: traded?.volume ?? 0n,
      tradeCount: traded?.trade_count ?? 0,
      marketsTraded: rows.length
    }
    return { data: pnl, meta: null }
  }).pipe(read)

/** A bucket of the history series: the user's router cash flows in it and their running sum. */
const decodeFlowRow = rowDecoder({ bucket: int, bought: bigint, sold: bigint, trades: int, market_ids: array(bigint), cumulative: bigint })

/** Weeks start on Monday 00:00 UTC (unix time 0 was a Thursday), as candle buckets do. */
const bucketOffset = (timeframe: Timeframe) => (timeframe === "1w" ? 4 * 86_400 : 0)

/** One of the user's markets as it stands at the end of one bucket (see `markAtBucket`). */
const decodeCarriedRow = rowDecoder({
  bucket: int,
  yes_balance: bigint,
  no_balance: bigint,
  yes_cost: bigint,
  no_cost: bigint,
  realized_pnl: bigint,
  /** The latest close at or before the bucket in the query's timeframe (null: no price snapshot yet). */
  close: nullable(bigint),
  traded: bool,
  yes_price: bigint,
  is_resolved: bool,
  outcome: nullable(bool),
  resolved_at: nullable(int)
})
type CarriedRow = ReturnType<typeof decodeCarriedRow>

/** Before a market's first price snapshot: its opening price (see `markAtBucket`). */
const SPLIT_PRICE = PRICE_SCALE / 2n

/**
 * What a position's shares were worth at the end of a bucket, marked as the snapshot marks them
 * now (`markPosition`): a market resolved by then pays 1 per winning share and 0 per losing
 * share; otherwise its last price by then, the bucket's close carried forward (candles of the
 * same timeframe, so the same snapshots as `yesPrice`). Before its first snapshot, a market that
 * has not traded yet is marked at its current price (the pool's initial price, 0.5 before the
 * pool); one that has traded since at 0.5, the price of a split (the initial pool price is not
 * kept; a pool opens within 0.475..0.525).
 */
export const markAtBucket = (row: CarriedRow, bucketEnd: number): bigint => {
  const yes = row.yes_balance
  const no = row.no_balance
  if (row.is_resolved && row.outcome !== null && row.resolved_at !== null && row.resolved_at < bucketEnd) return row.outcome ? yes : no
  const price = row.close !== null ? row.close : row.traded ? SPLIT_PRICE : row.yes_price
  return (yes * price) / PRICE_SCALE + (no * (PRICE_SCALE - price)) / PRICE_SCALE
}

/** Value, cost basis and realized P&L summed over the user's markets at the end of each bucket. */
interface BucketTotals {
  value: bigint
  cost: bigint
  realizedPnl: bigint
  openPositions: number
}

/**
 * The series: every bucket in which the user's portfolio changed, oldest first. A bucket is
 * listed when the user received a router trade in it (the cash flows), when one of the user's
 * positions moved in it (`position_move`, the journal), when a market the user has had a position in
 * since an earlier or the same bucket has a price snapshot in it, or when such a market resolved
 * in it. Between two listed buckets nothing the series shows changed.
 */
export const readPortfolioHistory = (address: Address, query: PortfolioHistoryParams) =>
  Effect.gen(function* () {
    yield* checkRange(query.from, query.to)
    const sql = yield* SqlClient.SqlClient
    const seconds = timeframeSeconds(query.timeframe)
    const offset = bucketOffset(query.timeframe)
    const bucketOf = (column: Statement.Fragment) => sql`((${column} - ${offset}) / ${seconds}) * ${seconds} + ${offset}`
    // Running totals over every bucket first, then the from/to window, so cumulativeNetFlow counts earlier flows.
    const series = sql`
      with flows as (
        select ${bucketOf(sql`timestamp`)} as bucket,
               coalesce(sum(amount_in) filter (where trade_type in (0, 2)), 0) as bought,
               coalesce(sum(amount_out) filter (where trade_type in (1, 3)), 0) as sold,
               count(*) as trades,
               (array_agg(distinct market_id order by market_id))::text[] as market_ids
        from trade where recipient = ${address} group by 1
      ),
      held as (
        select h.market_id, min(h.timestamp - h.timestamp % 60) as first_minute, m.is_resolved, m.outcome, m.resolved_at
        from position_move h join market m on m.id = h.market_id
        where h.user_address = ${address} group by h.market_id, m.is_resolved, m.outcome, m.resolved_at
      ),
      points as (
        select bucket from flows
        union select ${bucketOf(sql`timestamp`)} from position_move where user_address = ${address}
        union select c.bucket from held k join candle c
          on c.market_id = k.market_id and c.timeframe = ${query.timeframe} and c.close is not null and c.bucket >= ${bucketOf(sql`k.first_minute`)}
        union select ${bucketOf(sql`k.resolved_at`)} from held k where k.is_resolved and k.outcome is not null and k.resolved_at >= k.first_minute
      )
      select p.bucket, coalesce(f.bought, 0) as bought, coalesce(f.sold, 0) as sold, coalesce(f.trades, 0) as trades,
             coalesce(f.market_ids, '{}') as market_ids,
             sum(coalesce(f.sold, 0) - coalesce(f.bought, 0)) over (order by p.bucket rows between unbounded preceding and current row) as cumulative
      from points p left join flows f on f.bucket = p.bucket`
    const where = sql.and([
      ...(query.from === undefined ? [] : [sql`bucket >= ${query.from}`]),
      ...(query.to === undefined ? [] : [sql`bucket <= ${query.to}`])
    ])
    const page = yield* listPage(
      { select: "s.*", from: sql`(${series}) s where ${where}`, orderBy: "bucket", record: decodeFlowRow },
      query
    )
    const totals = yield* carriedTotals(
      address,
      query.timeframe,
      page.data.map((row) => row.bucket)
    )
    const data = page.data.map((row): PortfolioHistoryPointRecord => {
      const t = totals.get(row.bucket) ?? { value: 0n, cost: 0n, realizedPnl: 0n, openPositions: 0 }
      return {
        timeframe: query.timeframe,
        timestamp: row.bucket,
        bought: row.bought,
        sold: row.sold,
        netFlow: row.sold - row.bought,
        cumulativeNetFlow: row.cumulative,
        tradeCount: row.trades,
        marketIds: row.market_ids,
        value: t.value,
        cost: t.cost,
        unrealizedPnl: t.value - t.cost,
        realizedPnl: t.realizedPnl,
        totalPnl: t.realizedPnl + t.value - t.cost,
        openPositions: t.openPositions
      }
    })
    return { data, meta: page.meta }
  }).pipe(read)

/**
 * A position (`user`, `market`) as it stood just before `before` (unix seconds): its last row in
 * the ledger's journal before then, or none (`position_move_position_idx` finds it). The one
 * reading of a past position, for the portfolio history and the rewards' P&L of a period.
 */
export const positionBefore = (
  sql: SqlClient.SqlClient,
  user: Statement.Fragment,
  market: Statement.Fragment,
  before: Statement.Fragment
) => sql`(
  select yes_balance, no_balance, yes_cost, no_cost, realized_pnl from position_move j
  where j.user_address = ${user} and j.market_id = ${market} and j.timestamp < ${before}
  order by j.timestamp desc, j.block_number desc, j.log_index desc limit 1
)`

/**
 * The portfolio at the end of each of `buckets`: per market, the user's latest `position_move`
 * row before the bucket's end (the position as it stood after it; bucket ends are whole minutes) marked at that bucket (`markAtBucket`);
 * value and cost over the positions open then (a share on either side), realized P&L over all,
 * as the snapshot sums them.
 */
const carriedTotals = (address: Address, timeframe: Timeframe, buckets: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    const totals = new Map<number, BucketTotals>()
    if (buckets.length === 0) return totals
    const sql = yield* SqlClient.SqlClient
    const seconds = timeframeSeconds(timeframe)
    const rows = yield* sql`
      select b.bucket, h.yes_balance, h.no_balance, h.yes_cost, h.no_cost, h.realized_pnl, c.close, m.yes_price, m.is_resolved, m.outcome, m.resolved_at,
             exists (select 1 from candle t where t.market_id = k.market_id and t.timeframe = ${timeframe} and t.close is not null) as traded
      from unnest(${buckets}::bigint[]) as b(bucket)
      cross join (select distinct market_id from position_move where user_address = ${address}) k
      join market m on m.id = k.market_id
      cross join lateral ${positionBefore(sql, sql`${address}`, sql`k.market_id`, sql`b.bucket + ${seconds}`)} h
      left join lateral (
        select close from candle c
        where c.market_id = k.market_id and c.timeframe = ${timeframe} and c.bucket <= b.bucket and c.close is not null
        order by c.bucket desc limit 1
      ) c on true`
    for (const raw of rows) {
      const row = decodeCarriedRow(raw)
      const bucket = row.bucket
      let t = totals.get(bucket)
      if (t === undefined) totals.set(bucket, (t = { value: 0n, cost: 0n, realizedPnl: 0n, openPositions: 0 }))
      t.realizedPnl += row.realized_pnl
      if (row.yes_balance === 0n && row.no_balance === 0n) continue
      t.value += markAtBucket(row, bucket + seconds)
      t.cost += row.yes_cost + row.no_cost
      t.openPositions += 1
    }
    return totals
  })
