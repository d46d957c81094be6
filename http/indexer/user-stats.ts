/**
 * Per-user aggregates: the leaderboard (`/api/user-stats`) and one user's stats
 * (`/api/user-stats/{address}`, also `/api/users/{address}/accuracy`).
 *
 * Accuracy: in every market resolved by an oracle or by emergency (refund mode excluded), a
 * user's call is the side on which their router trades (as recipient) left them net long: net
 * YES = YES bought - YES sold, net NO likewise; YES when net YES > net NO, NO when less, no call
 * when equal. accuracy = correct calls / calls, six fraction digits; null without a call.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { IndexerItem, IndexerList } from "../../schema/envelopes.js"
import { IndexerInvalidAddress } from "../../schema/errors.js"
import { Address, Amount6, Price, SignedAmount6 } from "../../schema/primitives.js"
import { AddressPath, literalParam, NoQuery, page, strictQuery, withDefault } from "../core/params.js"
import { Count } from "./records.js"
import { LEADERBOARD_SORTS, type LeaderboardSort } from "../read/user-stats.js"

export { LEADERBOARD_SORTS, type LeaderboardSort }

export const Accuracy = Schema.Struct({
  address: Address,
  resolvedPositions: Count.annotations({ description: "resolved markets in which the user made a call" }),
  correctPositions: Count.annotations({ description: "calls that matched the outcome" }),
  accuracy: Schema.NullOr(Price).annotations({
    description: "correctPositions / resolvedPositions, 0 to 1, six fraction digits; null without a call"
  })
}).annotations({ identifier: "Accuracy", title: "Accuracy", description: "how often a user's resolved calls were right" })
export type Accuracy = typeof Accuracy.Type

export const UserStats = Schema.Struct({
  ...Accuracy.fields,
  rank: Schema.NullOr(Schema.Int).annotations({
    description: "place on the leaderboard in its order; on /api/user-stats/{address}, by pnl; null when not ranked (no router trade)"
  }),
  volume: Amount6.annotations({ description: "USDC traded through the router as trader" }),
  tradeCount: Count,
  realizedPnl: SignedAmount6
}).annotations({ identifier: "UserStats", title: "User stats", description: "a user's trading aggregates" })
export type UserStats = typeof UserStats.Type

export const LeaderboardQuery = strictQuery({
  sort: withDefault(
    literalParam(
      "sort",
      LEADERBOARD_SORTS,
      "order: pnl (realized P&L descending, the default), volume (descending), accuracy (descending, users without a call last, then more calls first); ties by address"
    ),
    () => "pnl" as const
  ),
  ...page
})
export type LeaderboardQuery = typeof LeaderboardQuery.Type

export class UserStatsGroup extends HttpApiGroup.make("userStats")
  .add(
    HttpApiEndpoint.get("leaderboard", "/api/user-stats")
      .setUrlParams(LeaderboardQuery)
      .addSuccess(IndexerList(UserStats))
      .annotate(OpenApi.Summary, "Leaderboard of every address with a router trade")
  )
  .add(
    HttpApiEndpoint.get("get", "/api/user-stats/:address")
      .setPath(AddressPath)
      .setUrlParams(NoQuery)
      .addSuccess(IndexerItem(UserStats))
      .addError(IndexerInvalidAddress.wire)
      .annotate(OpenApi.Summary, "One user's aggregates (zeros for an address with no activity)")
  ) {}
