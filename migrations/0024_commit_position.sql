-- The commit position (issue 31 item 4): every transaction that moves the checkpoint (a batch's
-- commit or a reorg's revert) takes the next value of one sequence, so `commit_seq` names the
-- derived state the tables hold, the same on every process that reads this database. The
-- WebSocket stream numbers its snapshots and deltas with it (http/ws/feeds.ts), so a client can
-- resume on any API instance. A sequence, not a counter in the row: a reset or a re-index that
-- deletes the checkpoint row never hands out a number again (a number names one state, once). A
-- build of the tables in another schema (blue-green re-index) must `setval` its own sequence above
-- the serving schema's before its first commit, or the two would name different states alike.
create sequence indexer_commit_seq;
alter table indexer_checkpoint add column commit_seq bigint not null default nextval('indexer_commit_seq');
