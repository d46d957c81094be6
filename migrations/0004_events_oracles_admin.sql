-- Event groups, oracles and admin history. Conventions as in 0002 and 0003.

create table event_group (
  id            numeric(78,0) primary key,
  name          text          not null,
  creator       text          not null,
  end_time      numeric(78,0) not null,
  market_ids    jsonb         not null, -- JSON array of decimal strings
  oracle        text,
  winning_index numeric(78,0),
  state         text          not null check (state in ('CREATED', 'RESOLVED', 'REFUND')),
  resolver      text,
  closed_at     bigint,
  created_at    bigint        not null,
  created_block bigint        not null,
  created_tx    text          not null
);

create table approved_oracle (
  oracle        text    primary key,
  approved      boolean not null,
  updated_at    bigint  not null,
  updated_block bigint  not null
);

create table oracle_approval_change (
  block_number bigint  not null,
  log_index    integer not null,
  tx_hash      text    not null,
  timestamp    bigint  not null,
  oracle       text    not null,
  approved     boolean not null,
  primary key (block_number, log_index)
);

-- Per manual-oracle contract: its current challenge delay (0 until ChallengeDelayUpdated).
create table manual_oracle (
  address         text          primary key,
  challenge_delay numeric(78,0) not null
);

-- The current report of each subject (a market or an event) at each manual oracle.
create table manual_report (
  oracle        text          not null,
  subject       text          not null check (subject in ('market', 'event')),
  subject_id    numeric(78,0) not null,
  state         text          not null check (state in ('REPORTED', 'REVOKED', 'REOPENED')),
  outcome       boolean,
  winning_index numeric(78,0),
  reporter      text,
  reported_at   bigint,
  finalizes_at  numeric(78,0),
  admin         text,
  updated_at    bigint        not null,
  updated_block bigint        not null,
  primary key (oracle, subject, subject_id)
);

create table manual_oracle_action (
  block_number    bigint        not null,
  log_index       integer       not null,
  tx_hash         text          not null,
  timestamp       bigint        not null,
  oracle          text          not null,
  action          text          not null check (action in ('REPORTED', 'REVOKED', 'REOPENED', 'CHALLENGE_DELAY')),
  subject         text          check (subject in ('market', 'event')),
  subject_id      numeric(78,0),
  outcome         boolean,
  winning_index   numeric(78,0),
  account         text,
  challenge_delay numeric(78,0),
  primary key (block_number, log_index)
);
create index manual_oracle_action_oracle_idx on manual_oracle_action (oracle, block_number desc, log_index desc);

create table price_feed_market (
  oracle        text          not null,
  market_id     numeric(78,0) not null,
  feed          text          not null,
  threshold     numeric(78,0) not null, -- signed, in the feed's own decimals
  gte           boolean       not null,
  snapshot_at   numeric(78,0) not null,
  state         text          not null check (state in ('REGISTERED', 'RESOLVED', 'UNREGISTERED')),
  price         numeric(78,0),
  outcome       boolean,
  registered_at bigint        not null,
  updated_at    bigint        not null,
  updated_block bigint        not null,
  primary key (oracle, market_id)
);

create table role_change (
  block_number bigint  not null,
  log_index    integer not null,
  tx_hash      text    not null,
  timestamp    bigint  not null,
  role         text    not null,
  account      text    not null,
  sender       text    not null,
  action       text    not null check (action in ('GRANTED', 'REVOKED')),
  primary key (block_number, log_index)
);

create table pause_change (
  block_number bigint  not null,
  log_index    integer not null,
  tx_hash      text    not null,
  timestamp    bigint  not null,
  scope        text    not null check (scope in ('GLOBAL', 'MODULE', 'HOOK')),
  module_id    text,
  paused       boolean not null,
  account      text,
  primary key (block_number, log_index)
);

-- Latest pause or unpause per scope: 'global', 'hook' or a module id (bytes32 hex).
create table pause_state (
  scope         text    primary key,
  paused        boolean not null,
  account       text,
  updated_at    bigint  not null,
  updated_block bigint  not null
);

create table diamond_cut (
  block_number bigint  not null,
  log_index    integer not null,
  tx_hash      text    not null,
  timestamp    bigint  not null,
  cuts         jsonb   not null, -- [{facetAddress, action, functionSelectors}]
  init         text    not null,
  data         text    not null,
  primary key (block_number, log_index)
);

create table fee_change (
  block_number   bigint        not null,
  log_index      integer       not null,
  tx_hash        text          not null,
  timestamp      bigint        not null,
  kind           text          not null check (kind in ('DEFAULT_REDEMPTION_FEE', 'MARKET_CREATION_FEE', 'FEE_RECIPIENT', 'MARKET_REDEMPTION_FEE')),
  market_id      numeric(78,0),
  previous_value text,
  new_value      text          not null,
  overridden     boolean,
  primary key (block_number, log_index)
);

create table hook_upgrade (
  block_number   bigint        not null,
  log_index      integer       not null,
  tx_hash        text          not null,
  timestamp      bigint        not null,
  action         text          not null check (action in ('PROPOSED', 'EXECUTED', 'CANCELLED')),
  implementation text          not null,
  ready_at       numeric(78,0),
  primary key (block_number, log_index)
);

-- The pause state as each market sees it, read from pause_state rather than copied into every
-- market row (one pause is one row write). The market module id is
-- keccak256("predix.module.market").
create view market_pause as
select m.id as market_id,
       coalesce(g.paused, false) as global_paused,
       coalesce(mm.paused, false) as module_paused,
       coalesce(h.paused, false) as amm_paused,
       coalesce(g.paused, false) or coalesce(mm.paused, false) as paused
from market m
left join pause_state g on g.scope = 'global'
left join pause_state mm on mm.scope = '0xebe5e1b4e81c19df2eae56464f20c171ff4cc84e0e7a45fb50315f3ef189da73'
left join pause_state h on h.scope = 'hook';
