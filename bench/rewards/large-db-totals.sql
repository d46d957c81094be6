-- The trader totals of the large database (large-db.sql), for timing the reads: day rows and
-- totals with the cumulative volume, trades, first trade and liquidity days of the trade and
-- liquidity rows (run/streak columns are filled with the day count, not the rule: timing only).
create temp table act as
select address, day, sum(volume) as volume, sum(trades) as trades, bool_or(big) as big, min(first_at) as first_at,
       max(last_at) as last_at, bool_or(liq) as liq
from (select trader as address, timestamp / 86400 as day, case when trade_type in (0, 2) then amount_in else amount_out end as volume,
             1 as trades, case when trade_type in (0, 2) then amount_in else amount_out end >= 10000000 as big,
             timestamp as first_at, timestamp as last_at, false as liq from trade
      union all
      select owner, timestamp / 86400, 0, 0, false, null, null, true from liquidity_event where liquidity_delta > 0) x
group by address, day;
insert into trader_day
select address, day,
       sum(volume) over w, sum(trades) over w, bool_or(big) over w, min(first_at) over w, max(last_at) over w,
       first_at, max(case when trades > 0 then day end) over w, 1, 1, 0, count(*) filter (where liq) over w,
       max(case when liq then day end) over w
from act window w as (partition by address order by day);
insert into trader_total select distinct on (address) * from trader_day order by address, day desc;
insert into trader_market
select address, market_id, max(last_at), sum(net_yes), sum(net_no) from (
  select trader as address, market_id, timestamp as last_at, 0 as net_yes, 0 as net_no from trade
  union all
  select recipient, market_id, null, case trade_type when 0 then amount_out when 1 then -amount_in else 0 end,
         case trade_type when 2 then amount_out when 3 then -amount_in else 0 end from trade) x
group by address, market_id;
analyze;
