/** Handlers of the user-stats and users groups (per-user aggregates and lists). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { IndexerItem, IndexerList } from "../../../schema/envelopes.js"
import { IndexerApi } from "../definition.js"
import { Match } from "../exchange.js"
import { readLeaderboard, readUserStats } from "../../read/user-stats.js"
import { listMakerFills, listResolvedPositions, readUserAccuracy } from "../../read/users.js"
import { respond } from "../respond.js"
import { Accuracy, UserStats } from "../user-stats.js"
import { ResolvedPosition } from "../users.js"

const board = respond(IndexerList(UserStats))
const stats = respond(IndexerItem(UserStats))
const accuracy = respond(IndexerItem(Accuracy))
const resolved = respond(IndexerList(ResolvedPosition))
const fills = respond(IndexerList(Match))

export const UserStatsLive = HttpApiBuilder.group(IndexerApi, "userStats", (handlers) =>
  handlers
    .handle("leaderboard", ({ urlParams }) => Effect.flatMap(readLeaderboard(urlParams), board))
    .handle("get", ({ path }) => Effect.flatMap(readUserStats(path.address), stats))
)

export const UsersLive = HttpApiBuilder.group(IndexerApi, "users", (handlers) =>
  handlers
    .handle("accuracy", ({ path }) => Effect.flatMap(readUserAccuracy(path.address), accuracy))
    .handle("resolvedPositions", ({ path, urlParams }) => Effect.flatMap(listResolvedPositions(path.address, urlParams), resolved))
    .handle("makerFills", ({ path, urlParams }) => Effect.flatMap(listMakerFills(path.address, urlParams), fills))
)
