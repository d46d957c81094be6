/**
 * The rewards answers: points and quests by the point rules (`schema/protocol/point-rules.ts`),
 * the boards, referrals and tags, from the rows `repository.ts` reads (already decoded: bigint
 * amounts, integer counts). Every read is the indexed tables' answer at the head, so the
 * handlers may cache it under the head (`respond.item/list`).
 */
import { Context, Effect, Layer } from "effect"
import { POINT_RULE_NAMES, POINT_RULES, THRESHOLDS, type PointRule } from "../../../schema/protocol/point-rules.js"
import { type Address, money } from "../../../schema/primitives.js"
import { read } from "../../core/db.js"
import { headTime } from "../../read/market-prices.js"
import type { Points, Referral, Rewards, Tags, TraderStats } from "./api.js"
import { referralCodeOf } from "./referrals.js"
import {
  PERIOD_SECONDS,
  readBoard,
  readPoints,
  readReferred,
  readTags,
  type BoardQuery,
  type BoardRow,
  type Period,
  type PointsRow
} from "./repository.js"

/** How the rewards endpoints are configured. */
export class RewardsSettings extends Context.Tag("predix/RewardsSettings")<
  RewardsSettings,
  {
    /** Resolved markets with a call a user needs before accuracy is shown or ranked (LEADERBOARD_MIN_RESOLVED). */
    readonly minResolved: number
  }
>() {}

export const DEFAULT_MIN_RESOLVED = 5

export const RewardsSettingsLive = (options: { readonly minResolved?: number | undefined } = {}) =>
  Layer.succeed(RewardsSettings, { minResolved: options.minResolved ?? DEFAULT_MIN_RESOLVED })

const usdc = (raw: bigint) => money(raw, 6, "USDC")

/** How many times each rule paid for one points row. */
const countsOf = (row: PointsRow | undefined): Record<PointRule, number> => ({
  connect: row?.connected === true ? 1 : 0,
  firstTrade: row?.first_trade === true ? 1 : 0,
  volume: Number((row?.volume ?? 0n) / THRESHOLDS.volumeStepUsdc),
  liquidity: row?.liquidity_days ?? 0,
  streak: row?.streaks ?? 0,
  referralJoined: row?.referral_joined ?? 0,
  referralActive: row?.referral_active ?? 0
})

/** A points row as the breakdown, total and share of `allPoints`. */
const pointsOf = (address: Address, row: PointsRow | undefined, allPoints: bigint) => {
  const counts = countsOf(row)
  const breakdown = POINT_RULE_NAMES.map((rule) => ({
    rule,
    quest: POINT_RULES[rule].quest,
    count: counts[rule],
    pointsEach: POINT_RULES[rule].points,
    points: counts[rule] * POINT_RULES[rule].points
  }))
  const total = breakdown.reduce((sum, line) => sum + line.points, 0)
  // Equal to the SQL's total by construction (same rules); the share uses the SQL's sum of everybody.
  const share = allPoints === 0n ? 0n : (BigInt(total) * 1_000_000n) / allPoints
  return { address, total, share, breakdown, counts }
}

const units = (raw: bigint) => usdc(raw).decimal

/** Each quest's progress toward its next payment. */
const questsOf = (row: PointsRow | undefined, counts: Record<PointRule, number>) => {
  const volume = row?.volume ?? 0n
  const longest = row?.longest_run ?? 0
  const cap = THRESHOLDS.referralCap
  const progress: Record<
    PointRule,
    { current: string; target: string; unit: "sign-ins" | "trades" | "USDC" | "days" | "users"; repeatable: boolean; completed: boolean }
  > = {
    connect: { current: String(counts.connect), target: "1", unit: "sign-ins", repeatable: false, completed: counts.connect === 1 },
    firstTrade: { current: String(counts.firstTrade), target: "1", unit: "trades", repeatable: false, completed: counts.firstTrade === 1 },
    volume: {
      current: units(volume),
      target: units((volume / THRESHOLDS.volumeStepUsdc + 1n) * THRESHOLDS.volumeStepUsdc),
      unit: "USDC",
      repeatable: true,
      completed: false
    },
    liquidity: {
      current: String(counts.liquidity),
      target: String(counts.liquidity + 1),
      unit: "days",
      repeatable: true,
      completed: false
    },
    // The longest run of consecutive trading days so far; every full 7 days of a run pay.
    streak: {
      current: String(longest),
      target: String((Math.floor(longest / THRESHOLDS.streakDays) + 1) * THRESHOLDS.streakDays),
      unit: "days",
      repeatable: true,
      completed: false
    },
    referralJoined: {
      current: String(counts.referralJoined),
      target: String(Math.min(counts.referralJoined + 1, cap)),
      unit: "users",
      repeatable: true,
      completed: counts.referralJoined >= cap
    },
    referralActive: {
      current: String(counts.referralActive),
      target: String(Math.min(counts.referralActive + 1, cap)),
      unit: "users",
      repeatable: true,
      completed: counts.referralActive >= cap
    }
  }
  return POINT_RULE_NAMES.map((rule) => {
    const { repeatable, completed, ...rest } = progress[rule]
    return {
      rule,
      quest: POINT_RULES[rule].quest,
      description: POINT_RULES[rule].rule,
      repeatable,
      earned: counts[rule] * POINT_RULES[rule].points,
      completed,
      progress: rest
    }
  })
}

const toTraderStats = (row: BoardRow, rank: number): typeof TraderStats.Type => ({
  rank,
  address: row.address as Address,
  volume: usdc(row.volume),
  pnl: usdc(row.pnl),
  tradeCount: row.trades,
  marketsTraded: row.markets,
  resolvedMarkets: row.calls,
  correctMarkets: row.correct,
  accuracy: row.accuracy,
  points: row.points,
  firstTradeAt: row.first_trade_at ?? 0,
  lastTradeAt: row.last_trade_at ?? 0
})

export const board = (query: Omit<BoardQuery, "since">, period: Period) =>
  Effect.gen(function* () {
    const since = period === "all" ? null : (yield* headTime) - PERIOD_SECONDS[period]
    const { rows, total } = yield* read(readBoard({ ...query, since }))
    return { rows: rows.map((row, i) => toTraderStats(row, query.offset + i + 1)), total, limit: query.limit, offset: query.offset }
  })

/** The points of `address`: total, share of everybody's and the breakdown by rule. */
export const pointsFor = (address: string) =>
  Effect.map(read(readPoints(address)), ({ row, allPoints }): typeof Points.Type => {
    const { counts: _, ...points } = pointsOf(address as Address, row, allPoints)
    return points
  })

/** The season's rewards of `address`: its points and each quest's progress. */
export const rewardsFor = (address: string) =>
  Effect.map(read(readPoints(address)), ({ row, allPoints }): typeof Rewards.Type => {
    const points = pointsOf(address as Address, row, allPoints)
    return { address: points.address, season: "S1", total: points.total, share: points.share, quests: questsOf(row, points.counts) }
  })

/** `referrer`'s code, who referred it, and a page of the users it referred. */
export const referralOf = (referrer: string, limit: number, offset: number) =>
  Effect.gen(function* () {
    const code = yield* read(referralCodeOf(referrer))
    const referred = yield* read(readReferred(referrer, limit, offset))
    const answer: typeof Referral.Type = {
      code,
      referredBy:
        referred.referredBy === undefined
          ? null
          : { address: referred.referredBy.referrer as Address, via: referred.referredBy.via_sign_in ? "sign-in" : "on-chain" },
      referredUsers: referred.users,
      referredVolume: usdc(referred.volume),
      referred: referred.rows.map((r) => ({
        address: r.address as Address,
        via: r.via_sign_in ? (r.swaps > 0 ? "both" : "sign-in") : "on-chain",
        joinedAt: r.joined_at ?? 0,
        swaps: r.swaps,
        referredVolume: usdc(r.referred_volume),
        countsForPoints: r.counts
      }))
    }
    return answer
  })

/** The categories and tags of the indexed markets, with their counts. */
export const tags = Effect.map(read(readTags), ({ categories, tags }): typeof Tags.Type => ({
  categories: categories.map((c) => ({ slug: c.category, markets: c.markets, activeMarkets: c.active_markets, events: c.events })),
  tags: tags.map((t) => ({ slug: t.tag, markets: t.markets, activeMarkets: t.active_markets }))
}))
