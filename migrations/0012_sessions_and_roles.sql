-- Sessions, roles and settings of the backend (issue 16). None of this is derived from the
-- chain: reorgs and re-indexing never touch it, and the indexer's resets leave it alone.

-- Users: one row per address that signed in (or was named an admin). Roles are ordered
-- user < moderator < admin; ADMIN_ADDRESSES are made admins at start.
create table app_user (
  address text primary key check (address ~ '^0x[0-9a-f]{40}$'),
  role text not null default 'user' check (role in ('user', 'moderator', 'admin')),
  created_at timestamptz not null default now()
);

-- Per-user settings; a user without a row has the defaults.
create table user_settings (
  address text primary key references app_user (address) on delete cascade,
  locale text not null default 'en' check (locale in ('en', 'vi', 'ja', 'ko')),
  -- notification type -> enabled; types absent from the object are enabled.
  notifications jsonb not null default '{}'::jsonb check (jsonb_typeof(notifications) = 'object'),
  updated_at timestamptz not null default now()
);

-- SIWE challenges: the exact message the server issued, bound to one address. A nonce is used
-- at most once: consuming it is one conditional UPDATE (consumed_at is null), and the session
-- it creates references it under a unique constraint.
create table auth_nonce (
  nonce text primary key check (nonce ~ '^[A-Za-z0-9]{24,64}$'),
  address text not null check (address ~ '^0x[0-9a-f]{40}$'),
  message text not null,
  issued_at timestamptz not null,
  expires_at timestamptz not null,
  consumed_at timestamptz
);
create index auth_nonce_address on auth_nonce (address, issued_at desc);
create index auth_nonce_expires on auth_nonce (expires_at);

-- Sessions: only the SHA-256 of the token is stored; the token itself exists in the cookie.
create table auth_session (
  token_hash bytea primary key check (length(token_hash) = 32),
  address text not null references app_user (address) on delete cascade,
  -- how the session was created: 'siwe' here; passkey and ECDSA logins add their own.
  method text not null,
  nonce text unique references auth_nonce (nonce) on delete set null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  revoked_at timestamptz
);
create index auth_session_address on auth_session (address);
create index auth_session_expires on auth_session (expires_at);
