-- Positions and P&L follow every way shares move (CLOB fills, transfers, liquidity), protocol
-- contracts hold no position or user row, totalUsers counts the addresses that traded, and every
-- market has a price (issue 14). Rows derived under the old rules would disagree with rows
-- derived from now on, so the derived tables are emptied and the next start indexes the chain
-- again from deployBlock.
alter table user_stats add column traded boolean not null default false;

truncate market, position, user_stats, protocol_stats, trade, price_snapshot, undo_log, outcome_token,
  token_holder, exchange_order, order_book_level, order_match, taker_fill, exchange_fee, event_group,
  approved_oracle, oracle_approval_change, manual_oracle, manual_report, manual_oracle_action,
  price_feed_market, role_change, pause_change, pause_state, diamond_cut, fee_change, hook_upgrade,
  amm_pool, liquidity_position, liquidity_event, candle, indexed_block;
delete from indexer_checkpoint;

-- A market always has a YES price: 0.5 at creation, the pool's initial price, trades, 1/0 once resolved.
alter table market alter column yes_price set not null;
