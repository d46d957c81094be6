-- Derived state of the first reducer slice: markets, router trades, positions, user and
-- protocol totals, price snapshots. uint256 amounts are NUMERIC(78,0); PnL is signed NUMERIC.
-- Addresses and hashes are lowercase hex text. Rows that change carry no block: their history
-- for reorgs lives in undo_log. Append-only rows carry (block_number, log_index) and are deleted
-- above the common ancestor on a reorg.

create table market (
  id               numeric(78,0) primary key check (id > 0),
  question         text          not null,
  end_time         numeric(78,0) not null,
  oracle           text          not null,
  creator          text          not null,
  yes_token        text          not null,
  no_token         text          not null,
  created_at       bigint        not null,
  created_block    bigint        not null,
  created_tx       text          not null,
  total_collateral numeric(78,0) not null,
  volume           numeric(78,0) not null check (volume >= 0),
  trade_count      bigint        not null check (trade_count >= 0),
  is_resolved      boolean       not null,
  outcome          boolean,
  resolution_type  text          not null check (resolution_type in ('NONE', 'ORACLE', 'EMERGENCY', 'REFUND')),
  resolved_at      bigint,
  refund_mode      boolean       not null,
  yes_price        numeric(78,0),
  last_trade_at    bigint
);
create index market_volume_idx on market (volume desc, id);
create index market_end_time_idx on market (end_time, id);

create table position (
  user_address text          not null,
  market_id    numeric(78,0) not null,
  yes_balance  numeric(78,0) not null,
  no_balance   numeric(78,0) not null,
  yes_cost     numeric(78,0) not null,
  no_cost      numeric(78,0) not null,
  realized_pnl numeric       not null,
  primary key (user_address, market_id)
);
create index position_market_idx on position (market_id, user_address);

create table user_stats (
  address      text primary key,
  volume       numeric(78,0) not null,
  trade_count  bigint        not null,
  realized_pnl numeric       not null
);

create table protocol_stats (
  id            smallint primary key check (id = 1),
  total_markets numeric(78,0) not null,
  total_volume  numeric(78,0) not null,
  total_trades  numeric(78,0) not null,
  total_users   numeric(78,0) not null
);

create table trade (
  block_number bigint        not null,
  log_index    integer       not null,
  tx_hash      text          not null,
  timestamp    bigint        not null,
  market_id    numeric(78,0) not null,
  trader       text          not null,
  recipient    text          not null,
  trade_type   smallint      not null check (trade_type between 0 and 3),
  amount_in    numeric(78,0) not null,
  amount_out   numeric(78,0) not null,
  clob_filled  numeric(78,0) not null,
  amm_filled   numeric(78,0) not null,
  primary key (block_number, log_index),
  check (clob_filled + amm_filled = amount_out)
);
create index trade_market_idx on trade (market_id, block_number desc, log_index desc);
create index trade_tx_idx on trade (tx_hash);

create table price_snapshot (
  block_number  bigint        not null,
  log_index     integer       not null,
  timestamp     bigint        not null,
  market_id     numeric(78,0) not null,
  yes_price     numeric(78,0) not null,
  source        text          not null check (source in ('router', 'hook_amm')),
  open_interest numeric(78,0) not null,
  primary key (block_number, log_index)
);
create index price_snapshot_market_idx on price_snapshot (market_id, timestamp, block_number, log_index);

-- Images of mutable rows before each unfinalized block changed them (null image: the row did
-- not exist). Kept only above the finalized block.
create table undo_log (
  block_number bigint not null,
  table_name   text   not null,
  row_key      text   not null,
  image        jsonb,
  primary key (block_number, table_name, row_key)
);
