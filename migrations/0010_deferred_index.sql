-- Secondary indexes of the derived tables dropped for a backfill from nothing, to be created
-- again when it ends (pipeline/deferred-indexes.ts). A row exists only between the two, so a
-- process killed meanwhile finds here what the next indexer must create before anything else.
create table deferred_index (
  name       text primary key,
  definition text not null
);
