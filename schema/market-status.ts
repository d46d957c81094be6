/**
 * A market's status: the one rule every answer that names it follows (indexer and backend
 * markets, positions, portfolios, the WebSocket), in TypeScript and in SQL from one rule list,
 * so a filter in SQL selects exactly the markets whose records say that status.
 *
 * The rule, first match wins (what the router would do with a trade now):
 * 1. `resolved`: the market is resolved (redeem);
 * 2. `refunding`: it is in refund mode and unresolved (refund);
 * 3. `closed`: its endTime has passed (swaps revert from endTime on) and it awaits resolution;
 * 4. `paused`: trading is paused globally or for the diamond's market module;
 * 5. `active`: the router takes trades.
 *
 * "Now" is the chain's time as indexed (the latest indexed block's timestamp), never the wall
 * clock: an answer depends only on the indexed head, which is what caches key on. The enum is the
 * deployed backend's `active | resolved | refunding` (protocol-facts section 1) with `closed` and
 * `paused` added, because "active" for a market whose trades revert would be untrue.
 */
import { keccak256, stringToHex } from "viem"

export const MARKET_STATUSES = ["active", "paused", "closed", "resolved", "refunding"] as const
export type MarketStatus = (typeof MARKET_STATUSES)[number]

export const MARKET_STATUS_DESCRIPTION =
  "active (tradable), paused (trading paused globally or for the market module), closed (past endTime, awaiting resolution), resolved, refunding (refund mode)"

/** The diamond's market module id; pausing it (or everything) stops trading on every market. */
export const MARKET_MODULE_ID = keccak256(stringToHex("predix.module.market"))

/** What a market's status depends on in its own row. */
export interface MarketStatusFacts {
  readonly isResolved: boolean
  readonly refundMode: boolean
  /** Unix seconds. */
  readonly endTime: number
}

/** What it depends on besides its row: the chain's time and pauses at the indexed head. */
export interface ChainMoment {
  /** Unix seconds of the latest indexed block. */
  readonly time: number
  /** Trading is paused globally or for the market module. */
  readonly paused: boolean
}

/**
 * The chain's time as indexed, in SQL: the latest indexed block's timestamp, else the latest price
 * snapshot's (a database whose unfinalized window is empty), else the current time.
 */
export const HEAD_TIME_SQL = `coalesce(
      (select timestamp from indexed_block order by number desc limit 1),
      (select timestamp from price_snapshot order by block_number desc, log_index desc limit 1),
      extract(epoch from now())::bigint)`

/** `ChainMoment.paused` in SQL. */
export const TRADING_PAUSED_SQL = `exists (select 1 from pause_state where paused and scope in ('global', '${MARKET_MODULE_ID}'))`

interface Rule {
  readonly status: MarketStatus
  readonly holds: (market: MarketStatusFacts, now: ChainMoment) => boolean
  /** The same condition over market alias `m`'s columns. */
  readonly sql: (m: string) => string
}

const RULES: ReadonlyArray<Rule> = [
  { status: "resolved", holds: (market) => market.isResolved, sql: (m) => `${m}.is_resolved` },
  { status: "refunding", holds: (market) => market.refundMode, sql: (m) => `${m}.refund_mode` },
  { status: "closed", holds: (market, now) => market.endTime <= now.time, sql: (m) => `${m}.end_time <= ${HEAD_TIME_SQL}` },
  { status: "paused", holds: (_market, now) => now.paused, sql: () => TRADING_PAUSED_SQL }
]

export const marketStatus = (market: MarketStatusFacts, now: ChainMoment): MarketStatus =>
  RULES.find((rule) => rule.holds(market, now))?.status ?? "active"

/** `marketStatus` as a SQL expression (a text value) over the `market` row aliased `m`. */
export const marketStatusSql = (m = "m"): string =>
  `(case ${RULES.map((rule) => `when ${rule.sql(m)} then '${rule.status}'`).join(" ")} else 'active' end)`
