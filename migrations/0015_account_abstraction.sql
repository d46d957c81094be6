-- Account abstraction (issue 18): passkey and ECDSA sign-in to ERC-4337 smart accounts, and the
-- paymaster's daily sponsorship budgets. Nothing here is derived from the chain.

-- A session of a smart account names its owner and the account: `address` (the signed-in
-- address every per-user table keys on) is the smart account; `owner` is the account's owner
-- encoding: 20 bytes (an EOA, ECDSA) or 64 bytes (abi.encode(x, y) of a P-256 passkey key).
alter table auth_session
  add column owner text check (owner ~ '^0x([0-9a-f]{40}|[0-9a-f]{128})$'),
  add column smart_account text check (smart_account ~ '^0x[0-9a-f]{40}$'),
  add constraint auth_session_smart_account check (smart_account is null or smart_account = address);

-- WebAuthn challenges (registration and login): the exact random challenge the server issued.
-- Used at most once: consuming one is a conditional UPDATE (consumed_at is null and not expired)
-- in the transaction that stores the credential or opens the session.
create table passkey_challenge (
  challenge text primary key check (challenge ~ '^[A-Za-z0-9_-]{43}$'),
  purpose text not null check (purpose in ('register', 'login')),
  issued_at timestamptz not null,
  expires_at timestamptz not null,
  consumed_at timestamptz
);
create index passkey_challenge_expires on passkey_challenge (expires_at);

-- Registered passkeys. `public_key` is the COSE key the authenticator gave (what assertions are
-- verified with); `owner` is its x and y as the smart account's owner encoding. `counter` only
-- ever grows: a login whose signature counter did not increase (when nonzero) is refused, and
-- the new counter is written with a conditional UPDATE on the old one.
create table passkey_credential (
  id text primary key check (id ~ '^[A-Za-z0-9_-]+$' and length(id) between 16 and 1364),
  public_key bytea not null,
  owner text not null check (owner ~ '^0x[0-9a-f]{128}$'),
  smart_account text not null check (smart_account ~ '^0x[0-9a-f]{40}$'),
  counter bigint not null check (counter >= 0),
  transports text[] not null default '{}',
  created_at timestamptz not null,
  last_used_at timestamptz
);
create index passkey_credential_account on passkey_credential (smart_account);

-- Sponsorship budgets: what the paymaster has signed for, per smart account and UTC day, in wei
-- of the operations' maximum cost. Charged by one INSERT .. ON CONFLICT DO UPDATE .. WHERE
-- spent + cost <= budget, so concurrent sponsor requests can never spend past the budget.
create table sponsorship_budget (
  address text not null check (address ~ '^0x[0-9a-f]{40}$'),
  day date not null,
  spent_wei numeric(78, 0) not null check (spent_wei >= 0),
  operations integer not null check (operations >= 0),
  primary key (address, day)
);
