-- Blue-green re-index (issue 31 item 2, docs/reindex.md): the derived tables are built in
-- generations, each in a schema of its own; this pointer says which one serves. `public` is the
-- first generation (its derived tables hold today's index) and stays the templates' home: a new
-- generation `index_<n>` is created `like` public's tables (src/db/generations.ts), so migrations
-- keep altering public's tables. The backend's own tables, the log store, the commit sequence and
-- this pointer live in public only and every generation's connections see them through
-- `search_path = index_<n>, public`.
--
-- States: building (being indexed, read by nobody), active (the one that serves; at most one),
-- retired (the one before, kept until `drop_after` so requests that started on it finish),
-- dropped (its schema is gone, or, for public, its derived tables emptied).
create table index_generation (
  n            integer primary key,
  schema_name  text not null unique,
  state        text not null check (state in ('building', 'active', 'retired', 'dropped')),
  created_at   timestamptz not null default now(),
  activated_at timestamptz,
  drop_after   timestamptz,
  -- how long the generation before it stays once this one serves (`predix reindex --grace`)
  grace_ms     bigint not null default 600000 check (grace_ms >= 0)
);
create unique index index_generation_one_active on index_generation (state) where state = 'active';
create unique index index_generation_one_building on index_generation (state) where state = 'building';
insert into index_generation (n, schema_name, state, activated_at) values (1, 'public', 'active', now());
