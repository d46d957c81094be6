-- WebSocket tickets (issue 28 item 8): a short-lived, single-use credential for the stream's user
-- topics, for apps on another origin whose page cannot hand the HttpOnly session cookie to the
-- WebSocket. Only the SHA-256 of a ticket is stored (the ticket itself goes to the client once).
-- A ticket belongs to the session that asked for it: signing out or the session's expiry ends it
-- too. It is spent by one conditional UPDATE (consumed_at is null, not expired), so it opens at
-- most one connection.
create table ws_ticket (
  ticket_hash bytea primary key check (length(ticket_hash) = 32),
  session_hash bytea not null references auth_session (token_hash) on delete cascade,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  consumed_at timestamptz
);
create index ws_ticket_expires on ws_ticket (expires_at);
create index ws_ticket_session on ws_ticket (session_hash);
