-- Where the pipeline stands, one row per chain. The pipeline writes it in the same transaction
-- as the changes of each batch, so it always names the last block whose changes are committed.
-- `digest` chains the changes of every block up to `block_number` (two runs that agree on it
-- hold the same derived state). `head_block` is the newest chain head the pipeline has seen,
-- for the lag that /api/health reports.
create table indexer_checkpoint (
  chain_id      bigint primary key,
  block_number  bigint not null check (block_number >= 0),
  block_hash    text   not null check (block_hash ~ '^0x[0-9a-f]{64}$'),
  digest        text   not null check (digest ~ '^0x[0-9a-f]{64}$'),
  head_block    bigint check (head_block >= 0),
  updated_at    timestamptz not null default now()
);
