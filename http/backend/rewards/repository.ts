/**
 * Reads of rewards and social: points (by `schema/protocol/point-rules.ts`), the leaderboard and top traders,
 * referrals and tags, all computed at read time from the indexed tables (points and the boards
 * from the per-trader totals `trader_total` / `trader_day` / `trader_market` the pipeline keeps,
 * pipeline/reduce/trader-activity.ts: one row per trader instead of every trade) and the
 * backend's own rows.
 *
 * Invariants:
 * - nothing here is stored, so an answer is a function of the tables as they stand: after a
 *   reorg it equals the answer of a database that indexed the final chain from scratch, and the
 *   answer cache (keyed on the indexed head) never serves one across heads;
 * - "now" is the chain's time (the latest indexed block's timestamp), never the wall clock;
 * - every order ends in the address, so pages never overlap or skip; sort keys come from closed
 *   sets (the only text spliced into SQL is one of the literals here), every value is bound.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect } from "effect"
import { headTime } from "../../read/market-prices.js"
import { positionBefore } from "../../read/portfolio.js"
import { bigint, bool, int, nullable, rowDecoder, text } from "../../core/rows.js"
import { DAY, effectiveReferrer, pointsQuery, totalsAt } from "./points-query.js"

/** Per address, what each rule counted and the points they make (the columns of `pointsQuery`). */
const pointsRow = rowDecoder({
  address: text(),
  connected: bool,
  first_trade: bool,
  volume: bigint,
  liquidity_days: int,
  streaks: int,
  longest_run: int,
  referral_joined: int,
  referral_active: int,
  points: bigint
})
export type PointsRow = ReturnType<typeof pointsRow>

/**
 * Runs a read with JIT compilation off. The planner's row estimates for these CTE chains are
 * far above the JIT threshold while the work is a few thousand rows: on the large database
 * (bench/rewards.ts) compiling took 1.3 s of a 1.5 s points query.
 */
const withoutJit = <A, E, R>(read: Effect.Effect<A, E, R>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(Effect.zipRight(sql`set local jit = off`, read)))

/** One address's points (all-time, connect included), and its share of everybody's. */
export const readPoints = (address: string) =>
  withoutJit(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ address: string; all_points: string }>`
      select p.*, sum(p.points) over () as all_points, count(*) filter (where p.points > 0) over () as holders
      from (${pointsQuery(sql, null, true)}) p`
      // Only the address's own row is read; the sum of everybody's points rides on every row.
      const mine = rows.find((r) => r.address === address)
      return {
        row: mine === undefined ? undefined : pointsRow(mine),
        allPoints: rows[0] === undefined ? 0n : bigint(rows[0].all_points, "all_points")
      }
    })
  )

export const LEADERBOARD_PERIODS = ["24h", "7d", "30d", "90d", "all"] as const
export type Period = (typeof LEADERBOARD_PERIODS)[number]
export const PERIOD_SECONDS: Record<Exclude<Period, "all">, number> = {
  "24h": 86_400,
  "7d": 7 * 86_400,
  "30d": 30 * 86_400,
  "90d": 90 * 86_400
}

export const BOARD_SORTS = ["volume", "pnl", "accuracy", "points", "trades"] as const
export type BoardSort = (typeof BOARD_SORTS)[number]

const BOARD_ORDER: Record<BoardSort, string> = {
  volume: "volume desc, address",
  pnl: "pnl desc, address",
  accuracy: "accuracy desc, calls desc, address",
  points: "points desc, address",
  trades: "trades desc, volume desc, address"
}

/** A trader on the board; a time the SQL finds none for (null) reads as 0. */
const boardRow = rowDecoder({
  address: text(),
  volume: bigint,
  trades: int,
  markets: int,
  first_trade_at: nullable(int),
  last_trade_at: nullable(int),
  pnl: bigint,
  calls: int,
  correct: int,
  accuracy: nullable(bigint),
  points: int
})
export type BoardRow = ReturnType<typeof boardRow>

export interface BoardQuery {
  /** Only trades after this time (unix seconds), markets resolved after it, points earned after it; null: all time. */
  readonly since: number | null
  readonly sort: BoardSort
  /** Accuracy is shown (and the accuracy board lists) only from this many resolved markets with a call. */
  readonly minResolved: number
  readonly limit: number
  readonly offset: number
}

/**
 * The board: every address with a router trade (as trader) in the period, with its volume,
 * trades, realized P&L change, accuracy over markets resolved in the period, and points earned in
 * the period (all-time points with connect for `all`; else points at the end minus points at the
 * start, chain events only). The accuracy board lists only addresses with `minResolved` calls.
 */
export const readBoard = (q: BoardQuery) =>
  withoutJit(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const since = q.since
      const after = (column: Statement.Fragment) => (since === null ? sql`true` : sql`${column} > ${since}`)
      // P&L at the start: each position's realized P&L at the end of the last minute before the period.
      const startMinute = since === null ? null : Math.floor(since / 60) * 60
      const pointsNow = pointsQuery(sql, null, since === null)
      const earned =
        since === null
          ? sql`select address, points from (${pointsNow}) n`
          : sql`select n.address, n.points - coalesce(s.points, 0) as points
              from (${pointsNow}) n left join (${pointsQuery(sql, since, false)}) s on s.address = n.address`
      const day = since === null ? 0 : Math.floor(since / DAY)
      // Volume and trades in the period: the totals now minus the totals at its start.
      const stats =
        since === null
          ? sql`
          select n.address, n.volume, n.trades, n.first_trade_at, n.last_trade_at
          from trader_total n join user_stats u on u.address = n.address where n.trades > 0`
          : sql`
          select n.address, n.volume - coalesce(s.volume, 0) as volume, n.trades - coalesce(s.trades, 0) as trades,
                 coalesce(f.first_at, (select d.day_first_trade_at from trader_day d
                                       where d.address = n.address and d.day > ${day} and d.day_first_trade_at is not null
                                       order by d.day limit 1)) as first_trade_at,
                 n.last_trade_at
          from trader_total n join user_stats u on u.address = n.address
          left join (${totalsAt(sql, since)}) s on s.address = n.address
          left join (select t.trader, min(t.timestamp) as first_at from trade t
                     where t.timestamp > ${since} and t.timestamp < ${(day + 1) * DAY} group by t.trader) f on f.trader = n.address
          where n.trades > coalesce(s.trades, 0)`
      const board = sql`
      with stats as (
        select s.*, coalesce(k.markets, 0) as markets from (${stats}) s
        left join (select address, count(*) as markets from trader_market
                   where ${since === null ? sql`last_traded_at is not null` : sql`last_traded_at > ${since}`} group by address) k
          on k.address = s.address
      ), pnl as (
        select p.user_address as address, sum(p.realized_pnl - coalesce(h.realized_pnl, 0)) as pnl
        from position p
        left join lateral ${
          startMinute === null
            ? sql`(select null::numeric as realized_pnl)`
            : positionBefore(sql, sql`p.user_address`, sql`p.market_id`, sql`${startMinute}`)
        } h on true
        where p.user_address in (select address from stats)
        group by p.user_address
      ), accuracy as (
        select c.address,
               count(*) filter (where c.net_yes <> c.net_no) as calls,
               count(*) filter (where c.net_yes <> c.net_no and (c.net_yes > c.net_no) = m.outcome) as correct
        from trader_market c join market m on m.id = c.market_id
        where m.is_resolved and m.outcome is not null and ${after(sql`m.resolved_at`)}
        group by c.address
      )
      select s.address, s.volume, s.trades, s.markets, s.first_trade_at, s.last_trade_at,
             coalesce(p.pnl, 0) as pnl, coalesce(a.calls, 0) as calls, coalesce(a.correct, 0) as correct,
             case when coalesce(a.calls, 0) >= ${q.minResolved} and a.calls > 0 then (a.correct * 1000000) / a.calls end as accuracy,
             coalesce(e.points, 0) as points
      from stats s
      left join pnl p on p.address = s.address
      left join accuracy a on a.address = s.address
      left join (${earned}) e on e.address = s.address`
      const rows = yield* sql<{ total_count: string }>`
      select b.*, count(*) over () as total_count from (${board}) b
      where ${q.sort === "accuracy" ? sql`b.accuracy is not null` : sql`true`}
      order by ${sql.literal(BOARD_ORDER[q.sort])} limit ${q.limit} offset ${q.offset}`
      // A page past the end has no row to carry the total.
      const [counted] =
        rows[0] !== undefined || q.offset === 0
          ? [{ count: rows[0]?.total_count ?? 0 }]
          : yield* sql<{ count: string }>`
              select count(*) as count from (${board}) b where ${q.sort === "accuracy" ? sql`b.accuracy is not null` : sql`true`}`
      return { rows: rows.map(boardRow), total: int(counted?.count ?? 0, "total_count") }
    })
  )

/** A code from 8 characters of [a-z0-9]. */
export const REFERRAL_CODE = /^[a-z0-9]{8}$/

/** The referrer whose code this is; undefined for an unknown code. */
export const codeOwner = (code: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ address: string }>`select address from referral_code where code = ${code}`, (rows) => rows[0]?.address)
  )

/** A referred user: how they came (sign-in link or not), when they joined (null: unknown), their referred swaps and volume. */
const referredRow = rowDecoder({
  address: text(),
  via_sign_in: bool,
  joined_at: nullable(int),
  swaps: int,
  referred_volume: bigint,
  counts: bool
})
export type ReferredRow = ReturnType<typeof referredRow>

const referrerRow = rowDecoder({ referrer: text(), via_sign_in: bool })

/**
 * Users `referrer` referred, at sign-in or on chain, newest first: when they joined (sign-in
 * time, else their first referred swap), the swaps and USDC volume of their indexed referrals
 * naming `referrer`, and whether they count for `referrer`'s points.
 */
export const readReferred = (referrer: string, limit: number, offset: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const referred = sql`
      with chain as (
        select trader as address, min(timestamp) as first_at, count(*) as swaps, sum(usdc_volume) as volume
        from referral where referrer = ${referrer} and trader <> referrer group by trader
      ), signed as (
        select referee as address, extract(epoch from created_at)::bigint as joined_at from referral_link where referrer = ${referrer}
      )
      select coalesce(s.address, c.address) as address, s.address is not null as via_sign_in,
             coalesce(s.joined_at, c.first_at) as joined_at,
             coalesce(c.swaps, 0) as swaps, coalesce(c.volume, 0) as referred_volume,
             exists (select 1 from (${effectiveReferrer(sql, null)}) e where e.referee = coalesce(s.address, c.address) and e.referrer = ${referrer}) as counts
      from signed s full join chain c on c.address = s.address`
    const rows = yield* sql<{ total_count: string; total_volume: string }>`
      select r.*, count(*) over () as total_count, sum(r.referred_volume) over () as total_volume from (${referred}) r
      order by r.joined_at desc nulls last, r.address limit ${limit} offset ${offset}`
    // A page past the end has no row to carry the totals.
    const [totals] =
      rows[0] !== undefined || offset === 0
        ? [{ users: rows[0]?.total_count ?? "0", volume: rows[0]?.total_volume ?? "0" }]
        : yield* sql<{
            users: string
            volume: string | null
          }>`select count(*) as users, sum(r.referred_volume) as volume from (${referred}) r`
    const [by] = yield* sql`
      select e.referrer, exists (select 1 from referral_link k where k.referee = ${referrer}) as via_sign_in
      from (${effectiveReferrer(sql, null)}) e where e.referee = ${referrer}`
    return {
      rows: rows.map(referredRow),
      users: int(totals?.users ?? 0, "users"),
      volume: bigint(totals?.volume ?? 0, "volume"),
      referredBy: by === undefined ? undefined : referrerRow(by)
    }
  })

const categoryRow = rowDecoder({ category: text(), markets: int, active_markets: int, events: int })
const tagRow = rowDecoder({ tag: text(), markets: int, active_markets: int })

/**
 * Categories and tags of the indexed markets (display metadata of a market not indexed, e.g.
 * reorged away, counts for nothing), with market counts; active = neither resolved nor refunding
 * and not past its end at the chain's time. Events count under their category.
 */
export const readTags = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const now = yield* headTime
  const active = sql`(not m.is_resolved and not m.refund_mode and m.end_time > ${now})`
  const [categories, tags] = yield* Effect.all(
    [
      sql`
        select d.category,
               count(m.id) as markets,
               count(m.id) filter (where ${active}) as active_markets,
               count(e.id) as events
        from display_metadata d
        left join market m on d.kind = 'market' and m.id = d.id
        left join event_group e on d.kind = 'event' and e.id = d.id
        group by d.category
        having count(m.id) + count(e.id) > 0
        order by count(m.id) desc, d.category`,
      sql`
        select t.tag, count(*) as markets, count(*) filter (where ${active}) as active_markets
        from display_metadata d
        join market m on m.id = d.id
        cross join lateral jsonb_array_elements_text(d.tags) t(tag)
        where d.kind = 'market'
        group by t.tag
        order by count(*) desc, t.tag`
    ],
    { concurrency: 2 }
  )
  return { categories: categories.map(categoryRow), tags: tags.map(tagRow) }
})
