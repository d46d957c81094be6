-- The unfinalized blocks the pipeline has indexed, oldest first: the reorg window that survives a
-- restart. Written in the transaction that commits the block's changes (and its undo images);
-- deleted once the block is final. `digest` is the chained digest after the block and
-- `parent_digest` the one before it, so a revert to any held block (or to the finalized block
-- below the first row) restores the checkpoint exactly.
create table indexed_block (
  chain_id      bigint not null,
  number        bigint not null,
  hash          text   not null,
  parent_hash   text   not null,
  timestamp     bigint not null,
  digest        text   not null,
  parent_digest text   not null,
  primary key (chain_id, number)
);
