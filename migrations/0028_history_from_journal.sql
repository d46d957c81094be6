-- One record of each position move (issue 30): the position history is read from the ledger's
-- journal instead of being kept beside it.
--
-- position_move (0021) gains the position as it stood after the event (balances, cost basis per
-- side, realized P&L), written by the same call that journals the change
-- (pipeline/reduce/positions.ts `recordMoves`). The table position_history (0013), a keyed copy of
-- the same moves (the position at the end of every minute it moved, 232k rows beside the journal's
-- 252k on the 1M-event bench, updated in place and undone through the undo log), becomes a view:
-- per position and minute, the journal's last row. Its readers that pick one row per position
-- (the portfolio history, the rewards' P&L at a day's start) read the journal directly through
-- position_move_position_idx.
--
-- Derived tables change in the template only (0027): a database whose public generation has
-- indexed something builds a new generation from the log store at the next start. A new database
-- (public active, nothing indexed yet) gets the change in public too, so its first start indexes
-- into public as before instead of building a second generation of an empty index.
do $$
declare
  fresh boolean;
  target text;
begin
  select exists (select 1 from index_generation where schema_name = 'public' and state = 'active')
     and not exists (select 1 from public.indexer_checkpoint)
    into fresh;
  foreach target in array case when fresh then array['index_template', 'public'] else array['index_template'] end loop
    execute format('drop table %I.position_history', target);
    execute format('alter table %I.position_move
      add column yes_balance  numeric(78, 0) not null,
      add column no_balance   numeric(78, 0) not null,
      add column yes_cost     numeric(78, 0) not null,
      add column no_cost      numeric(78, 0) not null,
      add column realized_pnl numeric(78, 0) not null', target);
    execute format('create index position_move_position_idx on %I.position_move (user_address, market_id, timestamp, block_number, log_index)', target);
    execute format('create view %I.position_history as
      select distinct on (user_address, market_id, timestamp - timestamp %% 60)
             user_address, market_id, timestamp - timestamp %% 60 as minute,
             yes_balance, no_balance, yes_cost, no_cost, realized_pnl
      from %I.position_move
      order by user_address, market_id, timestamp - timestamp %% 60, block_number desc, log_index desc', target, target);
  end loop;
  if fresh then
    update index_generation set shape = index_shape('index_template') where schema_name = 'public';
  end if;
end $$;
