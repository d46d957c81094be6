-- Outcome-token holders and the exchange (CLOB). Conventions as in 0002: uint256 as
-- NUMERIC(78,0), addresses and hashes lowercase text, mutable rows without a block (their reorg
-- history is in undo_log), append-only rows keyed by (block_number, log_index).

-- One row per outcome token announced by MarketCreated. supply = sum of its holders' balances;
-- holders = number of its token_holder rows.
create table outcome_token (
  address   text          primary key,
  market_id numeric(78,0) not null,
  side      text          not null check (side in ('YES', 'NO')),
  supply    numeric(78,0) not null check (supply >= 0),
  holders   bigint        not null check (holders >= 0)
);
create index outcome_token_market_idx on outcome_token (market_id, side);

-- Balances from Transfer logs. The zero address is never a holder; a row exists exactly while
-- its balance is positive.
create table token_holder (
  token     text          not null,
  holder    text          not null,
  market_id numeric(78,0) not null,
  side      text          not null check (side in ('YES', 'NO')),
  balance   numeric(78,0) not null check (balance > 0),
  primary key (token, holder)
);
create index token_holder_market_idx on token_holder (market_id, side, balance desc);
create index token_holder_holder_idx on token_holder (holder);

-- Orders with their derived status (the contract keeps none).
create table exchange_order (
  id           text          primary key,
  market_id    numeric(78,0) not null,
  owner        text          not null,
  side         smallint      not null check (side between 0 and 3),
  price        numeric(78,0) not null,
  amount       numeric(78,0) not null,
  filled       numeric(78,0) not null check (filled >= 0),
  status       text          not null check (status in ('OPEN', 'PARTIALLY_FILLED', 'FILLED', 'CANCELLED')),
  builder      text,
  placed_at    bigint        not null,
  placed_block bigint        not null,
  placed_tx    text          not null,
  updated_at   bigint        not null,
  filled_at    bigint,
  cancelled_at bigint
);
create index exchange_order_market_idx on exchange_order (market_id, status, placed_block desc);
create index exchange_order_owner_idx on exchange_order (owner, placed_block desc);

-- The book: per (market, side, price) the open remainder (amount - filled) of live orders.
-- A level exists exactly while it has live orders.
create table order_book_level (
  market_id numeric(78,0) not null,
  side      smallint      not null check (side between 0 and 3),
  price     numeric(78,0) not null,
  amount    numeric(78,0) not null check (amount >= 0),
  orders    bigint        not null check (orders > 0),
  primary key (market_id, side, price)
);

-- OrderMatched rows. maker is the maker order's owner: maker fills per address read this table.
-- taker is null for the zero taker id (taker path / router) and orders never seen placed.
create table order_match (
  block_number   bigint        not null,
  log_index      integer       not null,
  tx_hash        text          not null,
  timestamp      bigint        not null,
  market_id      numeric(78,0) not null,
  maker_order_id text          not null,
  taker_order_id text          not null,
  maker          text,
  maker_side     smallint,
  taker          text,
  match_type     smallint      not null check (match_type between 0 and 2),
  amount         numeric(78,0) not null,
  price          numeric(78,0) not null,
  maker_builder  text,
  taker_builder  text,
  primary key (block_number, log_index)
);
create index order_match_market_idx on order_match (market_id, block_number desc, log_index desc);
create index order_match_maker_idx on order_match (maker, block_number desc, log_index desc);
create index order_match_tx_idx on order_match (tx_hash);

create table taker_fill (
  block_number bigint        not null,
  log_index    integer       not null,
  tx_hash      text          not null,
  timestamp    bigint        not null,
  market_id    numeric(78,0) not null,
  taker        text          not null,
  recipient    text          not null,
  taker_side   smallint      not null check (taker_side between 0 and 3),
  total_filled numeric(78,0) not null,
  total_cost   numeric(78,0) not null,
  match_count  numeric(78,0) not null,
  primary key (block_number, log_index)
);
create index taker_fill_market_idx on taker_fill (market_id, block_number desc, log_index desc);
create index taker_fill_tx_idx on taker_fill (tx_hash);

create table exchange_fee (
  block_number bigint        not null,
  log_index    integer       not null,
  tx_hash      text          not null,
  timestamp    bigint        not null,
  market_id    numeric(78,0) not null,
  amount       numeric(78,0) not null,
  primary key (block_number, log_index)
);
