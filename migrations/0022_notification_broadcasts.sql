-- Broadcast notifications (issue 30, item 1): an event that concerns every holder (the exchange
-- or a module paused, a market resolved) is ONE notification row with no user (`user_address`
-- null), not one row per holder. Who it concerns is read, not written: the holders of its market
-- (any market for a pause) at its block, from the position journal (`position_move`); see
-- http/backend/notifications-live.ts. A personal row keeps its read state in `read_at`; a
-- broadcast's read state is per user, in `notification_read`.
alter table notification alter column user_address drop not null;
-- One broadcast per (type, source event), as the personal key is per (user, type, source).
create unique index notification_broadcast_key on notification (type, source) where user_address is null;
create index notification_broadcast on notification (id desc) where user_address is null;

-- Which user (the signed-in owner address) has read which broadcast, and when. Deleted with the
-- broadcast (a reorg retracting it).
create table notification_read (
  notification_id bigint not null references notification (id) on delete cascade,
  user_address    text   not null check (user_address ~ '^0x[0-9a-f]{40}$'),
  read_at         timestamptz not null,
  primary key (notification_id, user_address)
);

-- Pause and resolution notifications written before this migration were fanned out per holder
-- (two thirds of all rows on a large chain): they are folded into one broadcast each, keeping
-- who had read them (as read marks of the row's address); the consumer writes no more per user.
insert into notification (user_address, type, source, market_id, block_number, tx_hash, detail, created_at)
select distinct on (type, source) null, type, source, market_id, block_number, tx_hash, detail - 'role', created_at
from notification where type in ('marketPaused', 'marketResolved') and user_address is not null
order by type, source, id
on conflict do nothing;
insert into notification_read (notification_id, user_address, read_at)
select b.id, o.user_address, o.read_at
from notification o join notification b on b.user_address is null and b.type = o.type and b.source = o.source
where o.type in ('marketPaused', 'marketResolved') and o.user_address is not null and o.read_at is not null
on conflict do nothing;
delete from notification where type in ('marketPaused', 'marketResolved') and user_address is not null;
