-- Position history (issue 14, point 6): each position as it stood at the end of every minute in
-- which it moved, so /api/portfolio/:address/history can serve the portfolio's value over time.
-- One row per (user, market, minute) however many moves the minute held; written and undone like
-- every keyed derived table (pipeline/tables.ts). Protocol contracts have no row, as they have no
-- position. A database indexed before this table existed has no history of its past, so the
-- derived tables are emptied and the next start indexes the chain again from deployBlock.
create table position_history (
  user_address text           not null,
  market_id    numeric(78, 0) not null,
  minute       bigint         not null,
  yes_balance  numeric(78, 0) not null,
  no_balance   numeric(78, 0) not null,
  yes_cost     numeric(78, 0) not null,
  no_cost      numeric(78, 0) not null,
  realized_pnl numeric(78, 0) not null,
  primary key (user_address, market_id, minute)
);

truncate market, position, user_stats, protocol_stats, trade, price_snapshot, undo_log, outcome_token,
  token_holder, exchange_order, order_book_level, order_match, taker_fill, exchange_fee, event_group,
  approved_oracle, oracle_approval_change, manual_oracle, manual_report, manual_oracle_action,
  price_feed_market, role_change, pause_change, pause_state, diamond_cut, fee_change, hook_upgrade,
  amm_pool, liquidity_position, liquidity_event, candle, indexed_block;
delete from indexer_checkpoint;
