/**
 * Handlers of the rewards group. Public answers (leaderboard, traders, tags) are cached in the
 * warm tier under the indexed head; the session user's points and quests too, under their
 * address. The referral answer is not cached: it shows the user's own sign-in referral, which
 * changes without a block.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Context, Effect, Layer } from "effect"
import { type Address, money } from "../../../schema/primitives.js"
import { read } from "../../core/db.js"
import { headTime } from "../../read/market-prices.js"
import { CurrentUser } from "../auth/api.js"
import { BackendApi } from "../definition.js"
import { POINT_RULE_NAMES, POINT_RULES, THRESHOLDS, type PointRule } from "../../../schema/protocol/point-rules.js"
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
import { referralCodeOf } from "./referrals.js"
import { item, list } from "../respond.js"
import { Points, Referral, Rewards, Tags, TraderStats } from "./api.js"

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
  volume: Number(BigInt(row?.volume ?? "0") / THRESHOLDS.volumeStepUsdc),
  liquidity: Number(row?.liquidity_days ?? 0),
  streak: Number(row?.streaks ?? 0),
  referralJoined: Number(row?.referral_joined ?? 0),
  referralActive: Number(row?.referral_active ?? 0)
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
  const volume = BigInt(row?.volume ?? "0")
  const longest = Number(row?.longest_run ?? 0)
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
  volume: usdc(BigInt(row.volume)),
  pnl: usdc(BigInt(row.pnl)),
  tradeCount: Number(row.trades),
  marketsTraded: Number(row.markets),
  resolvedMarkets: Number(row.calls),
  correctMarkets: Number(row.correct),
  accuracy: row.accuracy === null ? null : BigInt(row.accuracy),
  points: Number(row.points),
  firstTradeAt: Number(row.first_trade_at),
  lastTradeAt: Number(row.last_trade_at)
})

const board = (query: Omit<BoardQuery, "since">, period: Period) =>
  Effect.gen(function* () {
    const since = period === "all" ? null : (yield* headTime) - PERIOD_SECONDS[period]
    const { rows, total } = yield* read(readBoard({ ...query, since }))
    return { rows: rows.map((row, i) => toTraderStats(row, query.offset + i + 1)), total, limit: query.limit, offset: query.offset }
  })

export const RewardsLive = HttpApiBuilder.group(BackendApi, "rewards", (handlers) =>
  Effect.gen(function* () {
    const settings = yield* RewardsSettings
    return handlers
      .handle("point", () =>
        Effect.gen(function* () {
          const user = yield* CurrentUser
          return yield* item(Points, "warm")(
            () =>
              Effect.map(read(readPoints(user.address)), ({ row, allPoints }) => {
                const { counts: _, ...points } = pointsOf(user.address as Address, row, allPoints)
                return points
              }),
            user.address
          )
        })
      )
      .handle("rewards", () =>
        Effect.gen(function* () {
          const user = yield* CurrentUser
          return yield* item(Rewards, "warm")(
            () =>
              Effect.map(read(readPoints(user.address)), ({ row, allPoints }) => {
                const points = pointsOf(user.address as Address, row, allPoints)
                return {
                  address: points.address,
                  season: "S1" as const,
                  total: points.total,
                  share: points.share,
                  quests: questsOf(row, points.counts)
                }
              }),
            user.address
          )
        })
      )
      .handle("leaderboard", ({ urlParams: q }) =>
        list(
          TraderStats,
          "warm"
        )(() => board({ sort: q.sortBy, minResolved: settings.minResolved, limit: q.limit, offset: q.offset }, q.period))
      )
      .handle("traders", ({ urlParams: q }) =>
        list(
          TraderStats,
          "warm"
        )(() => board({ sort: q.sortBy, minResolved: settings.minResolved, limit: q.limit, offset: q.offset }, "all"))
      )
      .handle("referral", ({ urlParams: q }) =>
        Effect.gen(function* () {
          const user = yield* CurrentUser
          return yield* item(
            Referral,
            null
          )(() =>
            Effect.gen(function* () {
              const code = yield* read(referralCodeOf(user.address))
              const referred = yield* read(readReferred(user.address, q.limit, q.offset))
              return {
                code,
                referredBy:
                  referred.referredBy === undefined
                    ? null
                    : {
                        address: referred.referredBy.referrer as Address,
                        via: referred.referredBy.via_sign_in ? ("sign-in" as const) : ("on-chain" as const)
                      },
                referredUsers: referred.users,
                referredVolume: usdc(referred.volume),
                referred: referred.rows.map((r) => ({
                  address: r.address as Address,
                  via: r.via_sign_in ? (BigInt(r.swaps) > 0n ? ("both" as const) : ("sign-in" as const)) : ("on-chain" as const),
                  joinedAt: Number(r.joined_at ?? 0),
                  swaps: Number(r.swaps),
                  referredVolume: usdc(BigInt(r.referred_volume)),
                  countsForPoints: r.counts
                }))
              }
            })
          )
        })
      )
      .handle("tags", () =>
        item(
          Tags,
          "warm"
        )(() =>
          Effect.map(read(readTags), ({ categories, tags }) => ({
            categories: categories.map((c) => ({
              slug: c.category,
              markets: Number(c.markets),
              activeMarkets: Number(c.active_markets),
              events: Number(c.events)
            })),
            tags: tags.map((t) => ({ slug: t.tag, markets: Number(t.markets), activeMarkets: Number(t.active_markets) }))
          }))
        )
      )
  })
)
