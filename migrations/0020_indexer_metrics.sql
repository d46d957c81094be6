-- The indexer's metrics as its process last published them, in the Prometheus text format: the
-- indexer runs in a process of its own (`start --only indexer`), and every API process serves
-- them at GET /metrics on the indexer port from here. One row per chain, replaced after each
-- poll of the tip and every few seconds of a backfill; `updated_at` tells a scrape how old it is.
-- Bookkeeping, not indexed data: not reverted, not exported.
create table indexer_metrics (
  chain_id    bigint primary key,
  body        text not null,
  updated_at  timestamptz not null default now()
);
