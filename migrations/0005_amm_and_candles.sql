-- AMM pools, liquidity positions and events, and candles. Conventions as in 0002.

-- Pools registered through Hook_PoolRegistered; pool-manager events of other pools are ignored.
create table amm_pool (
  pool_id          text          primary key,
  market_id        numeric(78,0) not null,
  yes_token        text          not null,
  quote_token      text          not null,
  yes_is_currency0 boolean       not null,
  registered_at    bigint        not null,
  registered_block bigint        not null,
  initialized      boolean       not null,
  sqrt_price_x96   numeric(78,0),
  liquidity        numeric(78,0) not null,
  tick             integer,
  fee              integer,
  tick_spacing     integer,
  updated_at       bigint        not null,
  updated_block    bigint        not null
);
create index amm_pool_market_idx on amm_pool (market_id);

-- Keyed like v4 positions: (pool, owner = ModifyLiquidity sender, ticks, salt). A row exists
-- exactly while its liquidity is positive.
create table liquidity_position (
  pool_id    text          not null,
  owner      text          not null,
  tick_lower integer       not null,
  tick_upper integer       not null,
  salt       text          not null,
  market_id  numeric(78,0) not null,
  liquidity  numeric(78,0) not null check (liquidity > 0),
  updated_at bigint        not null,
  primary key (pool_id, owner, tick_lower, tick_upper, salt)
);
create index liquidity_position_owner_idx on liquidity_position (owner);
create index liquidity_position_market_idx on liquidity_position (market_id);

create table liquidity_event (
  block_number    bigint        not null,
  log_index       integer       not null,
  tx_hash         text          not null,
  timestamp       bigint        not null,
  pool_id         text          not null,
  market_id       numeric(78,0) not null,
  owner           text          not null,
  tick_lower      integer       not null,
  tick_upper      integer       not null,
  salt            text          not null,
  liquidity_delta numeric(78,0) not null, -- signed
  primary key (block_number, log_index)
);
create index liquidity_event_market_idx on liquidity_event (market_id, block_number desc, log_index desc);
create index liquidity_event_owner_idx on liquidity_event (owner, block_number desc, log_index desc);

-- OHLC per market, timeframe and bucket start (unix seconds; weeks start Monday 00:00 UTC).
-- Prices are the price_snapshot rows in the bucket (router and hook_amm), volume and
-- trade_count the router Trades in it. OHLC is null only for a bucket whose trades moved no
-- shares (volume without a snapshot).
create table candle (
  market_id   numeric(78,0) not null,
  timeframe   text          not null check (timeframe in ('1m', '5m', '15m', '1h', '4h', '1d', '1w')),
  bucket      bigint        not null,
  open        numeric(78,0),
  high        numeric(78,0),
  low         numeric(78,0),
  close       numeric(78,0),
  volume      numeric(78,0) not null,
  trade_count bigint        not null,
  primary key (market_id, timeframe, bucket)
);
