-- Rewards and social (issue 19): on-chain referrals indexed from Hook_ReferralRecorded, the
-- per-trader running totals the points rules read, and the backend's own referral codes and
-- sign-in referrals. Points are computed at read time (http/backend/queries/rewards.ts) from the
-- totals, which the pipeline keeps like every keyed table (undo images, reverted on a reorg), so
-- a reorg that removes an event removes its points.

-- One row per Hook_ReferralRecorded (pipeline/reduce/referrals.ts): a swap through the hook whose
-- hook data named a referrer. Append-only, written and reverted like every descriptor table.
create table referral (
  block_number bigint        not null,
  log_index    integer       not null,
  tx_hash      text          not null,
  timestamp    bigint        not null,
  market_id    numeric(78,0) not null,
  referrer     text          not null,
  trader       text          not null,
  usdc_volume  numeric(78,0) not null,
  primary key (block_number, log_index)
);
create index referral_referrer_idx on referral (referrer, trader);
create index referral_trader_idx on referral (trader);

-- Per trader (any trade or liquidity_event owner), the totals of pipeline/reduce/trader-activity.ts:
-- now (trader_total), and at the end of each UTC day it traded or added liquidity (trader_day).
create table trader_total (
  address             text          primary key,
  day                 bigint        not null,
  volume              numeric(78,0) not null,
  trades              bigint        not null,
  first_trade         boolean       not null,
  first_trade_at      bigint,
  last_trade_at       bigint,
  day_first_trade_at  bigint,
  last_trade_day      bigint,
  run                 integer       not null,
  longest_run         integer       not null,
  streaks             integer       not null,
  liquidity_days      integer       not null,
  last_liquidity_day  bigint
);
create table trader_day (like trader_total, primary key (address, day));
-- Per (address, market): the last trade as trader, net shares bought as recipient per side.
create table trader_market (
  address         text          not null,
  market_id       numeric(78,0) not null,
  last_traded_at  bigint,
  net_yes         numeric(78,0) not null,
  net_no          numeric(78,0) not null,
  primary key (address, market_id)
);
-- Markets traded in a period; accuracy over markets resolved in a period.
create index trader_market_traded_idx on trader_market (last_traded_at);
create index trader_market_market_idx on trader_market (market_id);

-- A database indexed before this table existed has none of the past referrals: the derived
-- tables are emptied and the next start indexes the chain again from deployBlock.
truncate market, position, user_stats, protocol_stats, trade, price_snapshot, undo_log, outcome_token,
  token_holder, exchange_order, order_book_level, order_match, taker_fill, exchange_fee, event_group,
  approved_oracle, oracle_approval_change, manual_oracle, manual_report, manual_oracle_action,
  price_feed_market, role_change, pause_change, pause_state, diamond_cut, fee_change, hook_upgrade,
  amm_pool, liquidity_position, liquidity_event, candle, position_history, indexed_block, trader_total, trader_day, trader_market;
delete from indexer_checkpoint;

-- Backend data (not derived from the chain; reorgs and re-indexing never touch it).

-- A user's referral code, made on first use: 8 characters of [a-z0-9], unique.
create table referral_code (
  address    text primary key references app_user (address) on delete cascade,
  code       text not null unique check (code ~ '^[a-z0-9]{8}$'),
  created_at timestamptz not null
);

-- Who referred whom at sign-in (`POST /api/auth/verify?ref=<code>`): one row per referred user,
-- the first code wins (primary key; later codes change nothing), never oneself.
create table referral_link (
  referee    text primary key references app_user (address) on delete cascade,
  referrer   text not null references app_user (address) on delete cascade,
  created_at timestamptz not null,
  check (referee <> referrer)
);
create index referral_link_referrer_idx on referral_link (referrer, created_at);

-- Indexes of the read-time point and leaderboard queries.
create index trade_time_idx on trade (timestamp);
create index liquidity_event_time_idx on liquidity_event (timestamp) where liquidity_delta > 0;
create index liquidity_event_owner_time_idx on liquidity_event (owner, timestamp) where liquidity_delta > 0;

-- Free tags of a market or event beside its one category (GET /api/tags): a JSON array of slugs.
alter table display_metadata add column tags jsonb not null default '[]'::jsonb check (jsonb_typeof(tags) = 'array');
