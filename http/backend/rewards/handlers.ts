/**
 * Handlers of the rewards group, each a call of the rewards service (`service.ts`). Public answers
 * (leaderboard, traders, tags) are cached in the warm tier under the indexed head; the session
 * user's points and quests too, under their address. The referral answer is not cached: it shows
 * the user's own sign-in referral, which changes without a block.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentUser } from "../auth/api.js"
import { BackendApi } from "../definition.js"
import { item, list } from "../respond.js"
import { Points, Referral, Rewards, Tags, TraderStats } from "./api.js"
import { board, pointsFor, referralOf, rewardsFor, RewardsSettings, tags } from "./service.js"

const points = item(Points, "warm")
const rewards = item(Rewards, "warm")
const traders = list(TraderStats, "warm")
const referral = item(Referral, null)
const tagList = item(Tags, "warm")

export const RewardsLive = HttpApiBuilder.group(BackendApi, "rewards", (handlers) =>
  Effect.gen(function* () {
    const { minResolved } = yield* RewardsSettings
    return handlers
      .handle("point", () => Effect.flatMap(CurrentUser, (user) => points(() => pointsFor(user.address), user.address)))
      .handle("rewards", () => Effect.flatMap(CurrentUser, (user) => rewards(() => rewardsFor(user.address), user.address)))
      .handle("leaderboard", ({ urlParams: q }) =>
        traders(() => board({ sort: q.sortBy, minResolved, limit: q.limit, offset: q.offset }, q.period))
      )
      .handle("traders", ({ urlParams: q }) =>
        traders(() => board({ sort: q.sortBy, minResolved, limit: q.limit, offset: q.offset }, "all"))
      )
      .handle("referral", ({ urlParams: q }) =>
        Effect.flatMap(CurrentUser, (user) => referral(() => referralOf(user.address, q.limit, q.offset)))
      )
      .handle("tags", () => tagList(() => tags))
  })
)
