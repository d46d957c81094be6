-- A large rewards database for measuring the rewards reads (bench/rewards/README in the report):
-- 10,000 traders, 500,000 router trades over 120 days, ~10 markets per trader, their positions
-- and position journal, liquidity adds, on-chain referrals and 2,000 signed-in users. Run on a
-- freshly migrated database: psql -v ON_ERROR_STOP=1 -f bench/rewards/large-db.sql
select setseed(0.19);
\set t_end 1780000000
insert into market (id, question, end_time, oracle, creator, yes_token, no_token, created_at, created_block, created_tx,
  total_collateral, volume, trade_count, is_resolved, outcome, resolution_type, resolved_at, refund_mode, yes_price, last_trade_at)
select i, 'market ' || i, :t_end + 86400, '0x' || lpad(to_hex(1), 40, '0'), '0x' || lpad(to_hex(2), 40, '0'),
  '0x' || lpad(to_hex(100000 + i), 40, '0'), '0x' || lpad(to_hex(200000 + i), 40, '0'), :t_end - 130 * 86400, 1, '0x', 0, 0, 0,
  i % 2 = 0, case when i % 2 = 0 then i % 4 = 0 end, case when i % 2 = 0 then 'ORACLE' else 'NONE' end,
  case when i % 2 = 0 then :t_end - (i * 997 % (120 * 86400)) end, false, 500000, null
from generate_series(1, 300) i;
create temp table tr as
select g as n, (random() * 9999)::int as u, :t_end - (random() * 120 * 86400)::bigint as ts, (random() * 9)::int as k,
  (random() * 3)::int as tt, (1000000 + random() * 2000000000)::bigint as usdc from generate_series(1, 500000) g;
insert into trade (block_number, log_index, tx_hash, timestamp, market_id, trader, recipient, trade_type, amount_in, amount_out, clob_filled, amm_filled)
select n, 0, '0x' || to_hex(n), ts, 1 + (u * 7 + k) % 300, '0x' || lpad(to_hex(u + 1000), 40, '0'), '0x' || lpad(to_hex(u + 1000), 40, '0'), tt,
  case when tt in (0, 2) then usdc else usdc * 2 end, case when tt in (0, 2) then usdc * 2 else usdc end, 0,
  case when tt in (0, 2) then usdc * 2 else usdc end
from tr;
insert into user_stats (address, volume, trade_count, realized_pnl)
select trader, sum(case when trade_type in (0, 2) then amount_in else amount_out end), count(*), 0 from trade group by trader;
insert into position (user_address, market_id, yes_balance, no_balance, yes_cost, no_cost, realized_pnl)
select recipient, market_id, 1, 1, 1, 1, (random() * 2000000000)::bigint - 1000000000 from trade group by recipient, market_id;
insert into position_move (block_number, log_index, tx_hash, timestamp, user_address, market_id, source, yes_shares, no_shares, usdc,
  yes_balance, no_balance, yes_cost, no_cost, realized_pnl)
select block_number, log_index, tx_hash, timestamp, recipient, market_id, 'router', 1, 0, -1, 1, 1, 1, 1,
  (random() * 2000000000)::bigint - 1000000000
from trade;
update user_stats u set realized_pnl = p.pnl from (select user_address, sum(realized_pnl) as pnl from position group by user_address) p
where p.user_address = u.address;
insert into liquidity_event (block_number, log_index, tx_hash, timestamp, pool_id, market_id, owner, tick_lower, tick_upper, salt, liquidity_delta)
select 600000 + g, 0, '0x', :t_end - (random() * 120 * 86400)::bigint, '0x01', 1, '0x' || lpad(to_hex((random() * 1999)::int + 1000), 40, '0'),
  -100, 100, '0x', case when random() < 0.7 then 1000 else -1000 end
from generate_series(1, 20000) g;
insert into referral (block_number, log_index, tx_hash, timestamp, market_id, referrer, trader, usdc_volume)
select 700000 + g, 0, '0x', :t_end - (random() * 120 * 86400)::bigint, 1, '0x' || lpad(to_hex((random() * 199)::int + 1000), 40, '0'),
  '0x' || lpad(to_hex((random() * 9999)::int + 1000), 40, '0'), 1000000
from generate_series(1, 5000) g;
insert into app_user (address, created_at) select '0x' || lpad(to_hex(g + 1000), 40, '0'), now() from generate_series(0, 1999) g;
insert into indexed_block (chain_id, number, hash, parent_hash, timestamp, digest, parent_digest) values (130, 800000, '0x01', '0x00', :t_end, 'd', 'p');
analyze;
