-- Faucet claims and the signer's nonces (http/backend/faucet.ts, faucet-signer.ts).
--
-- One claim per destination address, ever: the primary key, taken by an INSERT before anything
-- is signed, so concurrent claims for one address produce one row and one transfer. A claim
-- records its signed transaction (raw_tx, tx_hash, nonce) before the broadcast, so a process
-- killed after broadcasting re-sends exactly those bytes at start (the same hash: never a second
-- transfer). A claim that cannot be sent (faucet dry, transaction refused) is deleted: released.
create table faucet_claim (
  address     text primary key check (address ~ '^0x[0-9a-f]{40}$'),
  owner       text not null check (owner ~ '^0x[0-9a-f]{40}$'),
  signer      text check (signer ~ '^0x[0-9a-f]{40}$'),
  nonce       bigint check (nonce >= 0),
  raw_tx      text check (raw_tx ~ '^0x[0-9a-f]+$'),
  tx_hash     text check (tx_hash ~ '^0x[0-9a-f]{64}$'),
  usdc_raw    numeric(78, 0) not null,
  eth_raw     numeric(78, 0) not null,
  status      text not null check (status in ('claimed', 'signed', 'confirmed')),
  claimed_at  timestamptz not null default now(),
  confirmed_at timestamptz,
  check ((status = 'claimed') = (tx_hash is null))
);
create index faucet_claim_unconfirmed on faucet_claim (status) where status <> 'confirmed';

-- The next nonce of each signing key: allocated under this row's lock, in one place.
create table signer_nonce (
  signer      text primary key check (signer ~ '^0x[0-9a-f]{40}$'),
  next_nonce  bigint not null check (next_nonce >= 0)
);
