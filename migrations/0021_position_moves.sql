-- One truth per fact (issue 27, items 7 and 11).
--
-- position_move: the position ledger's journal (pipeline/reduce/positions.ts `recordMoves`), one
-- row per (event, user) whose position the event changed: its source (router, clob_taker,
-- clob_maker, split, merge, redeem, refund, transfer, dust), the signed shares per side and the
-- signed USDC as the ledger counts them. A user's trade history lists these rows, so it holds
-- every share move the P&L counts and sums to the positions. Appended and undone like every log
-- (rows above a reorg's ancestor are deleted).
--
-- exchange_order.cancelled_tx: the transaction of the order's OrderCancelled, so a cancel
-- notification names it.
--
-- A database indexed before these existed has neither for its past, so the derived tables are
-- emptied and the next start indexes the chain again from deployBlock. The backend's own tables
-- (users, sessions, comments, notifications, claims) are kept.
create table position_move (
  block_number bigint         not null,
  log_index    integer        not null,
  tx_hash      text           not null,
  timestamp    bigint         not null,
  user_address text           not null,
  market_id    numeric(78, 0) not null,
  source       text           not null check (source in ('router', 'clob_taker', 'clob_maker', 'split', 'merge', 'redeem', 'refund', 'transfer', 'dust')),
  yes_shares   numeric(78, 0) not null,
  no_shares    numeric(78, 0) not null,
  usdc         numeric(78, 0) not null,
  primary key (block_number, log_index, user_address)
);
create index position_move_user_idx on position_move (user_address, block_number desc, log_index desc);

alter table exchange_order add column cancelled_tx text;

truncate market, position, user_stats, protocol_stats, trade, price_snapshot, undo_log, outcome_token,
  token_holder, exchange_order, order_book_level, order_match, taker_fill, exchange_fee, event_group,
  approved_oracle, oracle_approval_change, manual_oracle, manual_report, manual_oracle_action,
  price_feed_market, role_change, pause_change, pause_state, diamond_cut, fee_change, hook_upgrade,
  amm_pool, liquidity_position, liquidity_event, candle, position_history, indexed_block, trader_total, trader_day, trader_market,
  referral;
delete from indexer_checkpoint;

-- A user's own router trade notifies them ("your trade executed", with its transaction).
alter table notification drop constraint notification_type_check;
alter table notification add constraint notification_type_check check (type in ('orderFilled', 'tradeExecuted', 'orderCancelled',
  'marketResolved', 'redemptionAvailable', 'marketPaused', 'faucetDelivered', 'commentReply'));
