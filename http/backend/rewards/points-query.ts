/**
 * The SQL of the point rules (`schema/protocol/point-rules.ts`) over the per-trader totals the
 * pipeline keeps (`trader_total` / `trader_day` / `trader_market`, pipeline/reduce/trader-activity.ts),
 * as of any chain time: the statements `repository.ts` reads points, boards and referrals with.
 * Only our own literals are spliced into the SQL; every value is bound.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { POINT_RULES, THRESHOLDS } from "../../../schema/protocol/point-rules.js"

type Sql = SqlClient.SqlClient

/** The USDC side of a router trade (the indexer's volume rule). */
const TRADE_USDC = `case when t.trade_type in (0, 2) then t.amount_in else t.amount_out end`

export const DAY = 86_400

/**
 * Per address, the trader totals (pipeline/reduce/trader-activity.ts) counting chain events at
 * or before `until` (null: all indexed): `trader_total` as it stands, else the last `trader_day`
 * row before `until`'s day (one probe, only for addresses active since that day) plus that day's
 * own trade and liquidity rows up to the second. Columns as trader_total's.
 */
export const totalsAt = (sql: Sql, until: number | null) => {
  if (until === null) {
    return sql`select address, volume, trades, first_trade, first_trade_at, last_trade_at, run, longest_run, streaks, liquidity_days from trader_total`
  }
  const day = Math.floor(until / DAY)
  return sql`
    with base as (
      select b.* from trader_total t
      cross join lateral (
        select t.* where t.day < ${day}
        union all
        (select d.* from trader_day d where t.day >= ${day} and d.address = t.address and d.day < ${day} order by d.day desc limit 1)
      ) b
    ), partial_trades as (
      select t.trader as address, sum(${sql.literal(TRADE_USDC)}) as volume, count(*) as trades,
             max(${sql.literal(TRADE_USDC)}) as largest, min(t.timestamp) as first_at, max(t.timestamp) as last_at
      from trade t where t.timestamp >= ${day * DAY} and t.timestamp <= ${until}
      group by t.trader
    ), partial_liquidity as (
      select distinct l.owner as address from liquidity_event l
      where l.liquidity_delta > 0 and l.timestamp >= ${day * DAY} and l.timestamp <= ${until}
    ), joined as (
      select coalesce(b.address, p.address, l.address) as address, b.volume as base_volume, b.trades as base_trades,
             b.first_trade as base_first_trade, b.first_trade_at as base_first_at, b.last_trade_at as base_last_at,
             b.run as base_run, b.longest_run as base_longest, b.streaks as base_streaks, b.liquidity_days as base_liquidity,
             b.last_trade_day, p.volume as p_volume, p.trades as p_trades, p.largest, p.first_at, p.last_at,
             l.address is not null as p_liquidity
      from base b
      full join partial_trades p on p.address = b.address
      full join partial_liquidity l on l.address = coalesce(b.address, p.address)
    ), continued as (
      select j.*, case when j.p_trades is null then coalesce(j.base_run, 0)
                       when j.last_trade_day = ${day - 1} then j.base_run + 1 else 1 end as run_now
      from joined j
    )
    select address,
           coalesce(base_volume, 0) + coalesce(p_volume, 0) as volume,
           coalesce(base_trades, 0) + coalesce(p_trades, 0) as trades,
           coalesce(base_first_trade, false) or coalesce(largest >= ${THRESHOLDS.firstTradeUsdc.toString()}::numeric, false) as first_trade,
           coalesce(base_first_at, first_at) as first_trade_at,
           coalesce(last_at, base_last_at) as last_trade_at,
           run_now as run,
           greatest(coalesce(base_longest, 0), run_now) as longest_run,
           coalesce(base_streaks, 0) + case when p_trades is not null and run_now % ${THRESHOLDS.streakDays} = 0 then 1 else 0 end as streaks,
           coalesce(base_liquidity, 0) + case when p_liquidity then 1 else 0 end as liquidity_days
    from continued`
}

/** At or before `until` (unix seconds); everything when null. */
const upTo = (sql: Sql, column: Statement.Fragment, until: number | null) => (until === null ? sql`true` : sql`${column} <= ${until}`)

/**
 * The referrer of every referred user (`REFERRAL_RULE`), counting on-chain referrals at or before
 * `until`: the sign-in link, else the earliest Hook_ReferralRecorded naming the user as trader.
 */
export const effectiveReferrer = (sql: Sql, until: number | null) => sql`
  select referee, referrer from referral_link
  union all
  select o.referee, o.referrer
  from (select distinct on (f.trader) f.trader as referee, f.referrer from referral f
        where f.trader <> f.referrer and ${upTo(sql, sql`f.timestamp`, until)}
        order by f.trader, f.block_number, f.log_index) o
  where not exists (select 1 from referral_link k where k.referee = o.referee)`

/**
 * Points per address counting chain events at or before `until` (null: all indexed), from the
 * trader totals of users (addresses with a `user_stats` row). The `connect` rule has no chain
 * time: it counts only when `withConnect`.
 */
export const pointsQuery = (sql: Sql, until: number | null, withConnect: boolean) => {
  const r = POINT_RULES
  return sql`
    with totals as (
      select a.* from (${totalsAt(sql, until)}) a join user_stats u on u.address = a.address
    ), traded as (
      select address, volume, first_trade, streaks, longest_run from totals where trades > 0
    ), liquidity as (
      select address, liquidity_days as days from totals where liquidity_days > 0
    ), referred as (
      ${effectiveReferrer(sql, until)}
    ), referrals as (
      select f.referrer as address,
             least(count(*) filter (where t.first_trade), ${THRESHOLDS.referralCap}) as joined,
             least(count(*) filter (where t.volume >= ${THRESHOLDS.referralActiveUsdc.toString()}::numeric), ${THRESHOLDS.referralCap}) as active
      from referred f join traded t on t.address = f.referee
      group by f.referrer
    ), everyone as (
      select address from traded
      union select address from liquidity
      union select address from referrals
      union select address from app_user where ${withConnect}
    )
    select e.address,
           (${withConnect} and exists (select 1 from app_user a where a.address = e.address)) as connected,
           coalesce(t.first_trade, false) as first_trade,
           coalesce(t.volume, 0) as volume,
           coalesce(l.days, 0) as liquidity_days,
           coalesce(t.streaks, 0) as streaks,
           coalesce(t.longest_run, 0) as longest_run,
           coalesce(f.joined, 0) as referral_joined,
           coalesce(f.active, 0) as referral_active,
           (case when ${withConnect} and exists (select 1 from app_user a where a.address = e.address) then ${r.connect.points} else 0 end
             + case when coalesce(t.first_trade, false) then ${r.firstTrade.points} else 0 end
             + ${r.volume.points} * div(coalesce(t.volume, 0), ${THRESHOLDS.volumeStepUsdc.toString()}::numeric)
             + ${r.liquidity.points} * coalesce(l.days, 0)
             + ${r.streak.points} * coalesce(t.streaks, 0)
             + ${r.referralJoined.points} * coalesce(f.joined, 0)
             + ${r.referralActive.points} * coalesce(f.active, 0))::bigint as points
    from everyone e
    left join traded t on t.address = e.address
    left join liquidity l on l.address = e.address
    left join referrals f on f.address = e.address`
}
