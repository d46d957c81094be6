/**
 * The points rules (season S1 of the deployed product, protocol-facts section 5, adapted to what
 * the index holds). One table: the SQL that computes points (`http/backend/rewards/repository.ts`) and the OpenAPI
 * descriptions are made from it, and docs/rewards.md's table is `rulesTable()` verbatim (a test checks).
 *
 * Invariants:
 * - points are a pure function of the indexed tables (router trades, liquidity events, on-chain
 *   referrals, and the per-trader totals the pipeline derives from them: pipeline/reduce/
 *   trader-activity.ts) and the backend's own rows (users who signed in, sign-in referrals).
 *   Points themselves are not stored: the same chain gives the same points, and an event a reorg
 *   removes takes its points with it (the totals are reverted like every keyed table);
 * - "trade" means a router `Trade` with the user as trader, its USDC side as volume (the indexer's
 *   volume rule); protocol contracts earn nothing (they have no user_stats row);
 * - days are UTC days of the block timestamp.
 */

/** USDC has 6 decimals. */
const USDC = 1_000_000n

export const POINT_RULES = {
  connect: { points: 10, quest: "Connect", rule: "signed in once (SIWE); no chain time, so it counts only in all-time totals" },
  firstTrade: { points: 100, quest: "First trade", rule: "a first router trade of at least 10 USDC" },
  volume: { points: 10, quest: "Volume", rule: "10 points per full 100 USDC of router volume" },
  liquidity: { points: 20, quest: "Liquidity", rule: "20 points per UTC day on which the user added AMM liquidity" },
  streak: { points: 50, quest: "Streak", rule: "50 points per 7 consecutive UTC days with a router trade (a 14-day run earns 100)" },
  referralJoined: {
    points: 50,
    quest: "Referral, gate 1",
    rule: "50 points per referred user who made a first trade of at least 10 USDC (at most 50 users)"
  },
  referralActive: {
    points: 100,
    quest: "Referral, gate 2",
    rule: "100 points per referred user with at least 1,000 USDC of router volume (at most 50 users)"
  }
} as const

export type PointRule = keyof typeof POINT_RULES
export const POINT_RULE_NAMES = Object.keys(POINT_RULES) as ReadonlyArray<PointRule>

/** The thresholds the rules above name, in raw USDC units. */
export const THRESHOLDS = {
  firstTradeUsdc: 10n * USDC,
  volumeStepUsdc: 100n * USDC,
  referralActiveUsdc: 1_000n * USDC,
  streakDays: 7,
  referralCap: 50
} as const

/**
 * Who referred whom: a sign-in with `?ref=<code>` (first code wins, never oneself), else the
 * earliest on-chain `Hook_ReferralRecorded` naming the user as trader. So a referred user counts
 * for one referrer only.
 */
export const REFERRAL_RULE =
  "a user's referrer is the owner of the code they signed in with (POST /api/auth/verify?ref=<code>; first code wins, never oneself), else the referrer of their earliest on-chain Hook_ReferralRecorded"

/** The rules as Markdown table rows (docs/rewards.md, OpenAPI). */
export const rulesTable = (): string =>
  [
    "| quest | points | rule |",
    "|---|---|---|",
    ...POINT_RULE_NAMES.map(
      (name) => `| ${POINT_RULES[name].quest} (\`${name}\`) | ${POINT_RULES[name].points} | ${POINT_RULES[name].rule} |`
    )
  ].join("\n")
