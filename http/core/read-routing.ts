/**
 * Request routing onto the read targets (`read-targets.ts`): a routed request runs on the target
 * `pick` chose, with the head taken in the same step as its `Freshness`, so the headers and the
 * caches of that request claim no block its rows lack.
 */
import { HttpServerRequest } from "@effect/platform"
import type { HttpApp } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { ServiceUnavailable } from "../../schema/errors.js"
import { Freshness } from "./freshness.js"
import { ReadTargets } from "./read-targets.js"

/** `app` on a read target when the process has replicas; unchanged otherwise. */
export const routeReads = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E | ServiceUnavailable, R> =>
  Effect.flatMap(Effect.serviceOption(ReadTargets), (targets) =>
    targets._tag === "None"
      ? app
      : targets.value.pick(({ sql, head }) =>
          app.pipe(
            Effect.provideService(SqlClient.SqlClient, sql),
            Effect.provideService(Freshness, { current: Effect.succeed(head), latest: () => head })
          )
        )
  )

/**
 * `effect` on the primary: the backend's own tables (sessions, comments, notifications, claims,
 * nonces, referral codes) are written and read there, so a write and the read after it meet
 * whatever route the request took. Unchanged without replicas.
 */
export const onPrimary = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(Effect.serviceOption(ReadTargets), (targets) =>
    targets._tag === "None" ? effect : Effect.provideService(effect, SqlClient.SqlClient, targets.value.primary)
  )

/**
 * The backend's paths answered from the read model alone: markets (not their comments), events,
 * trades, orders, trading views, tags, traders and the leaderboard. Everything else (sessions,
 * comments, notifications, rewards, claims, faucet, accounts, admin, health) stays on the
 * primary, where a write and the read after it meet.
 */
const READ_MODEL_PATH =
  /^\/api\/(?:markets(?:\/[^/?]+(?:\/(?:candles|orderbook|outcomes\/[^/?]+|prices|trades|pricing\/view))?)?|markets\/hot|markets\/resolve|events(?:\/[^/?]+)?|trades\/[^/?]+\/breakdown|orders\/[^/?]+\/fills|trading\/[^?]+|tags|traders|leaderboard)(?:\?|$)/

/** Whether a backend request (method, target) is a read of the read model. */
export const isBackendReadModelRequest = (method: string, url: string): boolean =>
  (method === "GET" || method === "HEAD") && READ_MODEL_PATH.test(url)

/** `routeReads` for the backend's read-model requests only. */
export const routeBackendReads = <E, R>(
  app: HttpApp.Default<E, R>
): HttpApp.Default<E | ServiceUnavailable, R | HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    isBackendReadModelRequest(request.method, request.url) ? routeReads(app) : app
  )
