-- The log store (issue 31 item 1): the raw logs and block stamps the indexer fetched for the
-- watched contracts, one row per fetched range (a backfill's `eth_getLogs` range, a tip block) in
-- the binary form of pipeline/log-store/codec.ts. Written in the same commit as the rows derived
-- from it, its orphans deleted by a reorg's revert; a re-index replays it instead of asking the
-- node again. It is not derived data: a migration that empties the derived tables must leave it
-- (it is what the re-index reads); only the chain reset (src/db/chain-data.ts) empties it.
create table log_store (
  chain_id   integer not null,
  from_block bigint  not null,
  to_block   bigint  not null,
  logs       bytea   not null,
  primary key (chain_id, to_block)
);
