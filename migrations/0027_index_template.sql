-- Upgrades without downtime (issue 31 item 2, docs/reindex.md "Upgrades"): the templates of the
-- index's derived tables move out of public, which is a generation that may serve, into a schema
-- of their own, `index_template`, that nothing reads or writes. From here on a migration that
-- changes a derived table alters `index_template.<table>` (and creates new ones there), never a
-- serving generation; a new generation `index_<n>` is created `like` the template's tables
-- (src/db/generations.ts). The shape of a generation (its tables' columns, types, defaults,
-- not-null, checks, indexes and views) is hashed by `index_shape(schema)`; each generation records
-- the shape it was built with, and at start the indexer compares the template's with the active
-- generation's: when they differ (a migration changed a derived table) it builds a new generation
-- from the log store while the active one keeps serving, then switches.
create schema index_template;

do $$
declare
  saved text := current_setting('search_path');
  t text;
  v record;
begin
  -- The tables of GENERATION_TABLES (src/db/chain-data.ts) as they stand in public.
  foreach t in array array[
    'market', 'position', 'user_stats', 'protocol_stats', 'outcome_token', 'token_holder',
    'exchange_order', 'order_book_level', 'event_group', 'approved_oracle', 'manual_oracle',
    'manual_report', 'price_feed_market', 'pause_state', 'amm_pool', 'liquidity_position', 'candle',
    'position_history', 'trader_total', 'trader_day', 'trader_market', 'trade', 'price_snapshot',
    'order_match', 'taker_fill', 'exchange_fee', 'oracle_approval_change', 'manual_oracle_action',
    'role_change', 'pause_change', 'diamond_cut', 'fee_change', 'hook_upgrade', 'liquidity_event',
    'referral', 'position_move', 'indexer_checkpoint', 'indexed_block', 'undo_log',
    'indexed_deployment', 'indexer_metrics', 'deferred_index'
  ] loop
    execute format('create table index_template.%I (like public.%I including all)', t, t);
  end loop;
  -- public's views, read back with public alone on the path (their tables unqualified), then
  -- created with the template first on it, so they read the template's tables.
  perform set_config('search_path', 'public', true);
  create temporary table template_views on commit drop as
    select c.relname as name, pg_get_viewdef(c.oid) as definition
    from pg_class c where c.relnamespace = 'public'::regnamespace and c.relkind = 'v';
  perform set_config('search_path', 'index_template, public', true);
  for v in select name, definition from template_views order by name loop
    execute format('create view index_template.%I as %s', v.name, v.definition);
  end loop;
  perform set_config('search_path', saved, true);
end $$;

-- The shape of the generation in schema `target`: an md5 over one line per table and view the
-- template has (absent ones included), per column (position, name, type, not null, default), per
-- index (its definition without its name and schema: `like` names copies' indexes anew), per check
-- constraint, and per view (its definition without the schema's prefix). Equal for tables made
-- `like` one another; different after any change a migration can make to them. Defaults are
-- shown with public on the path, so the shared sequence reads the same from every schema.
create function index_shape(target text) returns text
language sql stable set search_path = public as $$
  with names as (
    select c.relname as name from pg_class c
    where c.relnamespace = 'index_template'::regnamespace and c.relkind in ('r', 'v')
  ), rel as (
    select n.name, c.oid, c.relkind
    from names n left join pg_class c on c.relname = n.name and c.relnamespace = target::regnamespace
  ), lines as (
    select r.name || ' kind ' || coalesce(r.relkind::text, 'absent') as line from rel r
    union all
    select r.name || ' column ' || row_number() over (partition by r.name order by a.attnum) || ' ' || a.attname || ' '
      || format_type(a.atttypid, a.atttypmod) || case when a.attnotnull then ' not null' else '' end
      || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '')
    from rel r
    join pg_attribute a on a.attrelid = r.oid and a.attnum > 0 and not a.attisdropped
    left join pg_attrdef d on d.adrelid = r.oid and d.adnum = a.attnum
    where r.relkind = 'r'
    union all
    select r.name || ' index ' || regexp_replace(pg_get_indexdef(i.indexrelid), '^CREATE (UNIQUE )?INDEX \S+ ON \S+ ', '\1')
    from rel r join pg_index i on i.indrelid = r.oid
    union all
    select r.name || ' check ' || pg_get_constraintdef(k.oid)
    from rel r join pg_constraint k on k.conrelid = r.oid and k.contype = 'c'
    union all
    select r.name || ' view ' || replace(pg_get_viewdef(r.oid), target || '.', '')
    from rel r where r.relkind = 'v'
  )
  select md5(string_agg(line, E'\n' order by line)) from lines
$$;

-- The shape each generation was built with (null only for dropped ones), and the handover a new
-- version's indexer asks of the old version's writer (src/blue-green.ts): set on the generation
-- being built when its builder is ready to take over; the serving writer stops between commits
-- and lets go of its generation's lock.
alter table index_generation add column shape text, add column handover_requested_at timestamptz;

-- Every generation so far was made `like` public's tables. A generation whose backfill has
-- indexes dropped (listed in its deferred_index) would hash without them: the template's shape,
-- which equals public's now, is recorded for it instead.
do $$
declare
  g record;
  deferred boolean;
begin
  for g in select n, schema_name from index_generation where state <> 'dropped' loop
    execute format('select exists (select 1 from %I.deferred_index)', g.schema_name) into deferred;
    update index_generation
      set shape = case when deferred or state = 'building' then index_shape('index_template') else index_shape(g.schema_name) end
      where n = g.n;
  end loop;
end $$;
