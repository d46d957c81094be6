/**
 * What every /api request passes before its route (inside the request-id and error middleware,
 * `middleware.ts`):
 *
 * 1. CORS: an allowed origin (the public URL's, CORS_ORIGINS) gets credentialed CORS headers and
 *    its preflights are answered here; other origins get none.
 * 2. Cross-site writes: a state-changing request (POST, PUT, PATCH, DELETE) that carries the
 *    session cookie, and every sign-in or sign-out (no login CSRF), must come from an allowed
 *    origin: its Origin header, or without one a Sec-Fetch-Site that is not cross-site (scripts
 *    and curl send neither). Else FORBIDDEN.
 * 3. The session of the cookie is looked up once (the route's session middleware reuses it).
 * 4. Rate limits (`rate-limit.ts`): per user with a valid session, else per client IP
 *    (`client-ip.ts`). Every /api answer carries X-RateLimit-Limit, -Remaining and -Reset; a
 *    refused one is RATE_LIMIT_EXCEEDED 429 with Retry-After.
 * 5. Body size: the AA proxy and sponsor paths read at most BODY_LIMITS bytes.
 *
 * The system endpoints (/health, /ready, /version) are outside /api and pass untouched: load
 * balancers probe them often, and a refused probe would take a healthy instance out.
 */
import { FileSystem, HttpApp, HttpIncomingMessage, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, FiberRef, Option } from "effect"
import { Forbidden, RateLimitExceeded, ValidationFailed } from "../../../schema/errors.js"
import { clientIp } from "./client-ip.js"
import { RateLimits } from "./rate-limit.js"
import { AuthSettings, SESSION_COOKIE, Sessions, type SessionLookup } from "../auth/sessions.js"

const STATE_CHANGING = new Set(["POST", "PUT", "PATCH", "DELETE"])
/** Sign-in and sign-out change the browser's session even without a cookie. */
const SESSION_PATHS = new Set(["/api/auth/verify", "/api/auth/logout", "/api/aa/auth/passkey/login", "/api/aa/auth/ecdsa/verify"])
const AUTH_LIMITED = new Set([
  "/api/auth/challenge",
  "/api/auth/verify",
  "/api/aa/auth/passkey/register/challenge",
  "/api/aa/auth/passkey/register/verify",
  "/api/aa/auth/passkey/login/challenge",
  "/api/aa/auth/passkey/login",
  "/api/aa/auth/ecdsa/challenge",
  "/api/aa/auth/ecdsa/verify"
])
/** Bodies larger than this (bytes) are refused before they are read: VALIDATION_FAILED. */
export const BODY_LIMITS: ReadonlyMap<string, number> = new Map([
  ["/api/aa/bundler", 64 * 1024],
  ["/api/aa/paymaster/sponsor", 64 * 1024],
  ["/api/aa/paymaster", 64 * 1024]
])

const EXPOSED = "X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, X-Cache, X-Cache-Tier"

/** The session the guard looked up for this request's cookie (the cookie value and the answer). */
export const resolvedSession = FiberRef.unsafeMake<Option.Option<{ readonly token: string; readonly lookup: SessionLookup }>>(Option.none())

const addHeaders = (headers: Record<string, string>) =>
  HttpApp.appendPreResponseHandler((_request, response) => Effect.succeed(HttpServerResponse.setHeaders(response, headers)))

export const makeGuard = Effect.gen(function* () {
  const sessions = yield* Sessions
  const settings = yield* AuthSettings
  const limits = yield* RateLimits

  const sameSiteOrAllowed = (request: HttpServerRequest.HttpServerRequest) => {
    const origin = request.headers["origin"]
    if (origin !== undefined) return settings.allowedOrigins.has(origin)
    return request.headers["sec-fetch-site"] !== "cross-site"
  }

  return <E, R>(app: HttpApp.Default<E, R>) =>
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const path = request.url.split("?")[0] ?? request.url
      if (!path.startsWith("/api/")) return yield* app

      const origin = request.headers["origin"]
      const corsAllowed = origin !== undefined && settings.allowedOrigins.has(origin)
      if (corsAllowed) {
        yield* addHeaders({
          "access-control-allow-origin": origin,
          "access-control-allow-credentials": "true",
          "access-control-expose-headers": EXPOSED,
          vary: "Origin"
        })
      }
      if (request.method === "OPTIONS") {
        return HttpServerResponse.empty({
          status: 204,
          headers: corsAllowed
            ? {
                "access-control-allow-methods": "GET, POST, PUT, PATCH, DELETE",
                "access-control-allow-headers": request.headers["access-control-request-headers"]?.slice(0, 1_000) ?? "content-type",
                "access-control-max-age": "600"
              }
            : {}
        })
      }

      const token = request.cookies[SESSION_COOKIE]
      if (STATE_CHANGING.has(request.method) && (token !== undefined || SESSION_PATHS.has(path)) && !sameSiteOrAllowed(request)) {
        return yield* new Forbidden({
          message: `cross-site ${request.method} refused: origin ${origin ?? "(none, Sec-Fetch-Site cross-site)"} is not allowed to act with credentials (PUBLIC_URL, CORS_ORIGINS)`
        })
      }

      const lookup =
        token === undefined
          ? undefined
          : yield* sessions
              .lookup(token)
              .pipe(
                Effect.catchAll((error) =>
                  Effect.logWarning("session lookup failed; counting the request by IP").pipe(
                    Effect.annotateLogs({ error: error.message }),
                    Effect.as(undefined)
                  )
                )
              )
      const ip = clientIp(limits.trustProxy, Option.getOrUndefined(request.remoteAddress), request.headers["x-forwarded-for"])
      const decision = yield* limits.check({
        ip,
        user: lookup?._tag === "Valid" ? lookup.user.address : undefined,
        auth: AUTH_LIMITED.has(path)
      })
      yield* addHeaders(decision.headers)
      if (!decision.allowed) {
        return yield* new RateLimitExceeded({
          message: `rate limit exceeded: ${decision.refusal}; retry after ${decision.headers["retry-after"]} s`,
          details: [{ path: "", message: `retry after ${decision.headers["retry-after"]} seconds` }]
        })
      }
      const limit = BODY_LIMITS.get(path)
      // A declared length over the limit is refused before anything is read (node then drains the
      // rest, so the client sees this answer); an undeclared one is cut off at the limit.
      if (limit !== undefined && Number(request.headers["content-length"] ?? 0) > limit) {
        return yield* new ValidationFailed({
          message: `request body over ${limit} bytes`,
          details: [{ path: "", message: `at most ${limit} bytes` }]
        })
      }
      const bounded =
        limit === undefined ? app : Effect.provideService(app, HttpIncomingMessage.MaxBodySize, Option.some(FileSystem.Size(limit)))
      return yield* token === undefined || lookup === undefined
        ? bounded
        : Effect.locally(bounded, resolvedSession, Option.some({ token, lookup }))
    })
})
