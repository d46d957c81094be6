-- Display metadata of markets and events (not on-chain): slug, category, featured flag,
-- localized title and icon. Written by the seeding step (fixtures/market-metadata.json for the
-- committed fixture) or by operators; the indexer API only reads it, to show it and to filter on
-- category and featured. No foreign key to market/event_group: metadata may be written before
-- the chain data it describes is indexed, and survives reorgs that remove it.
--
-- Also the indexes the indexer API's reads need beyond the pipeline's own.
-- (Idempotent, so it can be applied by hand to a database migrated past 0009 before this file
-- existed: the migrator only applies ids above the latest one applied.)

create table if not exists display_metadata (
  kind       text          not null check (kind in ('market', 'event')),
  id         numeric(78,0) not null check (id > 0),
  slug       text          not null check (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' and length(slug) <= 64),
  category   text          not null check (category ~ '^[a-z0-9]+(-[a-z0-9]+)*$' and length(category) <= 64),
  featured   boolean       not null default false,
  -- {"en": "...", "vi": "...", ...}: locale -> title; "en" is required and is the fallback.
  title      jsonb         not null check (jsonb_typeof(title) = 'object' and title ? 'en'),
  icon       text,
  updated_at timestamptz   not null default now(),
  primary key (kind, id),
  unique (kind, slug)
);
create index if not exists display_metadata_category_idx on display_metadata (kind, category, id);
create index if not exists display_metadata_featured_idx on display_metadata (kind, id) where featured;

-- Market list sorts: newest/oldest use the primary key; volume has market_volume_idx.
create index if not exists market_trade_count_idx on market (trade_count desc, id);
-- Which event a market belongs to (event_group.market_ids @> '["<id>"]').
create index if not exists event_group_market_ids_idx on event_group using gin (market_ids);
-- Volume windows per market, and a user's trades (positions are credited to the recipient).
create index if not exists trade_market_time_idx on trade (market_id, timestamp);
create index if not exists trade_recipient_idx on trade (recipient, market_id);
create index if not exists trade_trader_idx on trade (trader, block_number desc, log_index desc);
-- Order lists filtered by status alone, and matches of one order.
create index if not exists exchange_order_status_idx on exchange_order (status, placed_block desc, id);
create index if not exists order_match_maker_order_idx on order_match (maker_order_id);
create index if not exists order_match_taker_order_idx on order_match (taker_order_id);
-- LP positions by provider come ordered by market.
create index if not exists liquidity_position_owner_market_idx on liquidity_position (owner, market_id, pool_id);
