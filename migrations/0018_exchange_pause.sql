-- The exchange's Paused/Unpaused (protocol-facts section 7): a fourth pause scope. The history
-- row is scope 'EXCHANGE'; the current state lives in pause_state under scope 'exchange' (no
-- schema change there: its scope is free text). While the exchange is paused the router's CLOB
-- leg fails and it trades on the AMM alone, which is what the backend's quote reads it for.
alter table pause_change drop constraint pause_change_scope_check;
alter table pause_change add constraint pause_change_scope_check check (scope in ('GLOBAL', 'MODULE', 'HOOK', 'EXCHANGE'));
