-- Comments and notifications (issue 19): the backend's own data. Nothing here is derived by the
-- indexer: its reorgs and resets never touch these tables. Notifications derived from the chain
-- are kept right through reorgs by their consumer (http/backend/notification-consumer.ts).

-- Market comments, threaded two levels: a reply's parent is a top-level comment of the same
-- market (checked by the inserting statement). The body is stored exactly as written.
create table market_comment (
  id            bigint generated always as identity primary key,
  market_id     numeric(78, 0) not null check (market_id > 0),
  parent_id     bigint references market_comment (id),
  author        text not null check (author ~ '^0x[0-9a-f]{40}$'),
  smart_account text check (smart_account ~ '^0x[0-9a-f]{40}$'),
  body          text not null check (char_length(body) between 1 and 2000),
  status        text not null default 'visible' check (status in ('visible', 'deleted', 'hidden')),
  created_at    timestamptz not null,
  edited_at     timestamptz,
  -- who deleted (the author) or hid (a moderator) it, and when
  removed_by    text check (removed_by ~ '^0x[0-9a-f]{40}$'),
  removed_at    timestamptz,
  check ((status = 'visible') = (removed_at is null))
);
create index market_comment_thread on market_comment (market_id, created_at desc, id desc) where parent_id is null;
create index market_comment_replies on market_comment (parent_id, created_at, id) where parent_id is not null;

-- Posting quota per user: one row, updated by the statement that admits a post, so the cooldown
-- and the daily cap hold however many posts arrive at once (the row lock orders them).
create table comment_quota (
  address        text primary key check (address ~ '^0x[0-9a-f]{40}$'),
  last_posted_at timestamptz not null,
  -- the UTC day the count is for
  day            date not null,
  posted_today   integer not null check (posted_today >= 0)
);

-- Notifications: one per (user, type, source event), enforced by the unique key, so a consumer
-- restarted or replaying a range inserts nothing twice. `source` names the event: e.g.
-- 'match:<block>:<log index>' for a fill, 'order:<id>' for a cancellation, 'market:<id>' for a
-- resolution, 'comment:<id>' for a reply. Chain-derived rows carry the block that produced them
-- (`block_number`): a reorg back to below it makes the consumer re-check the source and delete
-- the notification if the source is gone.
create table notification (
  id           bigint generated always as identity primary key,
  user_address text not null check (user_address ~ '^0x[0-9a-f]{40}$'),
  type         text not null check (type in ('orderFilled', 'orderCancelled', 'marketResolved', 'redemptionAvailable',
                                             'marketPaused', 'faucetDelivered', 'commentReply')),
  source       text not null,
  market_id    numeric(78, 0),
  block_number bigint,
  tx_hash      text,
  -- what the notification says, by type (amounts as decimal strings)
  detail       jsonb not null default '{}'::jsonb check (jsonb_typeof(detail) = 'object'),
  created_at   timestamptz not null default now(),
  read_at      timestamptz,
  unique (user_address, type, source)
);
create index notification_user on notification (user_address, id desc);
create index notification_unread on notification (user_address) where read_at is null;
create index notification_block on notification (block_number) where block_number is not null;

-- The consumer's cursor, one row per chain: the indexed block (and its hash) whose events have
-- all been turned into notifications. Advanced in the transaction that inserts them; the row's
-- lock lets one consumer at a time work, however many API instances run one.
create table notification_cursor (
  chain_id     bigint primary key,
  block_number bigint not null check (block_number >= -1),
  block_hash   text,
  -- the cursor block's timestamp when the indexer still held it (indexed_block): changes of
  -- mutable rows (cancellations, resolutions) are looked for from this time on
  block_timestamp bigint,
  updated_at   timestamptz not null default now()
);

-- The consumer looks up the matches of one order (how much of it a fill completed).
create index if not exists order_match_maker_order_idx on order_match (maker_order_id);
create index if not exists order_match_taker_order_idx on order_match (taker_order_id);
