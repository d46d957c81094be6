/**
 * The rewards group of the backend API: points, quests, leaderboard, top traders, referrals and
 * tags (handlers: `handlers.ts`, reads: `repository.ts`, rules: `schema/protocol/point-rules.ts`).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { BackendItem, BackendList } from "../../../schema/envelopes.js"
import { Address, Money, Price, Timestamp } from "../../../schema/primitives.js"
import { integerParam, literalParam, NoQuery, page, strictQuery, withDefault } from "../../core/params.js"
import { RequireUser } from "../auth/api.js"
import { POINT_RULE_NAMES, REFERRAL_RULE, rulesTable } from "../../../schema/protocol/point-rules.js"
import { BOARD_SORTS, LEADERBOARD_PERIODS } from "./repository.js"

const RuleName = Schema.Literal(...POINT_RULE_NAMES).annotations({
  identifier: "PointRule",
  description: "a points rule (see the table in the operation's description)"
})
const Count = Schema.Int.pipe(Schema.nonNegative())

export const PointLine = Schema.Struct({
  rule: RuleName,
  quest: Schema.String.annotations({ description: "the quest's name" }),
  count: Count.annotations({
    description: "how many times the rule paid: 0/1 for connect and first trade, 100-USDC steps, days, 7-day streaks, referred users"
  }),
  pointsEach: Count.annotations({ description: "points per count" }),
  points: Count.annotations({ description: "count x pointsEach" })
}).annotations({ identifier: "PointLine" })

export const Points = Schema.Struct({
  address: Address,
  total: Count.annotations({ description: "all-time points: the sum of the breakdown" }),
  share: Price.annotations({
    description: "total / the points of every user, 0 to 1 with six fraction digits (a season's PRX = share x pool)"
  }),
  breakdown: Schema.Array(PointLine)
}).annotations({ identifier: "Points", description: "the session user's points by rule" })

export const Quest = Schema.Struct({
  rule: RuleName,
  quest: Schema.String,
  description: Schema.String.annotations({ description: "the rule, in words" }),
  repeatable: Schema.Boolean.annotations({
    description: "pays again at every further step (volume, liquidity days, streaks); referral gates up to their cap"
  }),
  earned: Count.annotations({ description: "points earned by this quest so far" }),
  completed: Schema.Boolean.annotations({ description: "nothing more to earn (one-time quest done, or a referral gate at its cap)" }),
  progress: Schema.Struct({
    current: Schema.String.annotations({ description: "where the user stands, as a decimal string in `unit`" }),
    target: Schema.String.annotations({ description: "where the next payment is reached" }),
    unit: Schema.Literal("sign-ins", "trades", "USDC", "days", "users")
  })
}).annotations({ identifier: "Quest", description: "a quest and the user's progress in it" })

export const Rewards = Schema.Struct({
  address: Address,
  season: Schema.Literal("S1"),
  total: Count,
  share: Price.annotations({ description: "total / the points of every user (six fraction digits)" }),
  quests: Schema.Array(Quest)
}).annotations({ identifier: "Rewards", description: "the session user's quests, progress and points" })

export const TraderStats = Schema.Struct({
  rank: Schema.Int.annotations({ description: "place in the order asked for, from 1" }),
  address: Address,
  volume: Money.annotations({ description: "USDC of router trades as trader in the period" }),
  pnl: Money.annotations({ description: "realized P&L made in the period (USDC, signed): to the minute, from the position history" }),
  tradeCount: Count,
  marketsTraded: Count,
  resolvedMarkets: Count.annotations({ description: "markets resolved in the period in which the user made a call (net long one side)" }),
  correctMarkets: Count,
  accuracy: Schema.NullOr(Price).annotations({
    description: "correctMarkets / resolvedMarkets; null below the minimum of resolved markets"
  }),
  points: Count.annotations({ description: "points earned in the period (all-time points for period=all and on /api/traders)" }),
  firstTradeAt: Timestamp,
  lastTradeAt: Timestamp
}).annotations({ identifier: "TraderStats", description: "a trader's aggregates over a period" })

export const Referred = Schema.Struct({
  address: Address,
  via: Schema.Literal("sign-in", "on-chain", "both").annotations({
    description: "signed in with the user's code, named the user as referrer in a swap (Hook_ReferralRecorded), or both"
  }),
  joinedAt: Timestamp.annotations({ description: "sign-in time with the code, else the first referred swap's block time" }),
  swaps: Count.annotations({ description: "indexed Hook_ReferralRecorded naming this user as referrer" }),
  referredVolume: Money.annotations({ description: "USDC volume of those swaps" }),
  countsForPoints: Schema.Boolean.annotations({ description: "this user is the referred user's referrer for points (see the rule)" })
}).annotations({ identifier: "ReferredUser" })

export const Referral = Schema.Struct({
  code: Schema.String.annotations({ description: "the user's referral code (8 characters a-z0-9); others sign in with ?ref=<code>" }),
  referredBy: Schema.NullOr(Schema.Struct({ address: Address, via: Schema.Literal("sign-in", "on-chain") })).annotations({
    description: "who referred the user, by the rule; null when nobody did"
  }),
  referredUsers: Count.annotations({ description: "users the user referred, at sign-in or on chain" }),
  referredVolume: Money.annotations({ description: "USDC volume of every indexed Hook_ReferralRecorded naming the user as referrer" }),
  referred: Schema.Array(Referred).annotations({ description: "one page (limit, offset) of the referred users, newest first" })
}).annotations({ identifier: "Referral" })

export const CategoryCount = Schema.Struct({
  slug: Schema.String,
  markets: Count,
  activeMarkets: Count.annotations({ description: "neither resolved nor refunding, and not past their end at the chain's time" }),
  events: Count
}).annotations({ identifier: "CategoryCount" })

export const TagCount = Schema.Struct({ slug: Schema.String, markets: Count, activeMarkets: Count }).annotations({ identifier: "TagCount" })

export const Tags = Schema.Struct({
  categories: Schema.Array(CategoryCount).annotations({ description: "every category of an indexed market or event, most markets first" }),
  tags: Schema.Array(TagCount).annotations({ description: "every tag of an indexed market, most markets first" })
}).annotations({ identifier: "Tags" })

const period = withDefault(
  literalParam("period", LEADERBOARD_PERIODS, "window ending at the latest indexed block's time; default all"),
  () => "all" as const
)

export const LeaderboardQuery = strictQuery({
  period,
  sortBy: withDefault(
    literalParam(
      "sortBy",
      BOARD_SORTS.filter((s) => s !== "trades") as ["volume", "pnl", "accuracy", "points"],
      "order, descending, ties by address; default volume. accuracy lists only users with the minimum of resolved markets"
    ),
    () => "volume" as const
  ),
  ...page
})

export const TradersQuery = strictQuery({
  sortBy: withDefault(
    literalParam(
      "sortBy",
      BOARD_SORTS.filter((s) => s !== "accuracy") as ["volume", "pnl", "points", "trades"],
      "order, descending, ties by address; default volume"
    ),
    () => "volume" as const
  ),
  ...page
})

export const ReferralQuery = strictQuery({
  limit: withDefault(integerParam("limit", 1, 100, "referred users per page, default 20"), () => 20),
  offset: withDefault(integerParam("offset", 0, Number.MAX_SAFE_INTEGER, "referred users to skip, default 0"), () => 0)
})

const RULES = `Points are computed from indexed chain data and the backend's own rows at read time (a reorg takes an event's points with it):\n\n${rulesTable()}\n\nReferrals: ${REFERRAL_RULE}.`

export class RewardsGroup extends HttpApiGroup.make("rewards")
  .add(
    HttpApiEndpoint.get("point", "/api/point")
      .setUrlParams(NoQuery)
      .addSuccess(BackendItem(Points))
      .middleware(RequireUser)
      .annotate(OpenApi.Summary, "The session user's points: total, share and breakdown by rule")
      .annotate(OpenApi.Description, RULES)
  )
  .add(
    HttpApiEndpoint.get("rewards", "/api/rewards")
      .setUrlParams(NoQuery)
      .addSuccess(BackendItem(Rewards))
      .middleware(RequireUser)
      .annotate(OpenApi.Summary, "The session user's quests (season S1 rules) with progress and points")
      .annotate(OpenApi.Description, RULES)
  )
  .add(
    HttpApiEndpoint.get("leaderboard", "/api/leaderboard")
      .setUrlParams(LeaderboardQuery)
      .addSuccess(BackendList(TraderStats))
      .annotate(OpenApi.Summary, "Traders with a router trade in the period, ranked by volume, realized P&L, accuracy or points")
      .annotate(
        OpenApi.Description,
        `Periods 24h, 7d, 30d, 90d end at the latest indexed block's time. Accuracy counts markets resolved in the period and needs a minimum of resolved markets with a call (default 5, LEADERBOARD_MIN_RESOLVED). Points of a period are those earned in it: the rules applied to the chain up to its end minus up to its start (the connect quest has no chain time and counts only in all).\n\n${RULES}`
      )
  )
  .add(
    HttpApiEndpoint.get("traders", "/api/traders")
      .setUrlParams(TradersQuery)
      .addSuccess(BackendList(TraderStats))
      .annotate(OpenApi.Summary, "Top traders with all-time stats (every address with a router trade)")
  )
  .add(
    HttpApiEndpoint.get("referral", "/api/referral")
      .setUrlParams(ReferralQuery)
      .addSuccess(BackendItem(Referral))
      .middleware(RequireUser)
      .annotate(
        OpenApi.Summary,
        "The session user's referral code, who referred them, and the users they referred with their volume from Hook_ReferralRecorded"
      )
      .annotate(
        OpenApi.Description,
        `Referrals: ${REFERRAL_RULE}. A code is applied by signing in with POST /api/auth/verify?ref=<code>.\n\n${RULES}`
      )
  )
  .add(
    HttpApiEndpoint.get("tags", "/api/tags")
      .setUrlParams(NoQuery)
      .addSuccess(BackendItem(Tags))
      .annotate(OpenApi.Summary, "Categories and tags of the indexed markets, with market counts")
  ) {}
