/**
 * Rate limits (spec: Limits), counted with `rate-limiter-flexible` in fixed windows:
 * - per minute: `publicPerMinute` per IP without a session, `userPerMinute` per signed-in user;
 * - per day: `perDay` per IP without a session, or per user;
 * - `authPerMinute` per IP on the two sign-in endpoints, on top of the above.
 * 0 turns a limit off.
 *
 * The counters live in Redis when a URL is given (one atomic Lua increment-with-expiry per limit,
 * so every backend instance draws on one budget), else in this process.
 *
 * Redis going away: the limits are enforced by this instance's own in-process counters until it
 * answers again (fail open to per-instance limits: N instances then allow up to N times the
 * budget, never unlimited), with a warning in the log at most every 10 s and a line when Redis
 * is back. A request never fails because the store did.
 */
import { Context, Effect, Layer, Redacted } from "effect"
import { Redis } from "ioredis"
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible"
import { noProxy, type TrustProxy } from "./client-ip.js"

export interface RateLimitOptions {
  readonly publicPerMinute: number
  readonly userPerMinute: number
  readonly perDay: number
  readonly authPerMinute: number
  readonly redisUrl?: Redacted.Redacted<string> | string | undefined
  /** Prefix of the Redis keys (default `predix:rl`): instances sharing a budget share it. */
  readonly keyPrefix?: string
  readonly trustProxy?: TrustProxy
}

/** The spec's limits. */
export const SPEC_RATE_LIMITS = { publicPerMinute: 60, userPerMinute: 300, perDay: 10_000, authPerMinute: 5 } as const

/** Who a request counts against. */
export interface Subject {
  readonly ip: string
  /** The signed-in user's address, when the request carries a valid session. */
  readonly user?: string | undefined
  /** A request to /api/auth/challenge or /api/auth/verify. */
  readonly auth: boolean
}

export interface Decision {
  readonly allowed: boolean
  /** X-RateLimit-Limit / -Remaining / -Reset of the tightest limit; Retry-After when refused. */
  readonly headers: Record<string, string>
  /** Refused: which limit, in words. */
  readonly refusal?: string
}

interface Limit {
  readonly name: string
  readonly points: number
  readonly seconds: number
  readonly describe: (subject: Subject) => string
  readonly key: (subject: Subject) => string
  readonly local: RateLimiterMemory
  readonly shared: RateLimiterAbstract | undefined
}

const WARN_EVERY_MS = 10_000

const makeLimits = (options: RateLimitOptions, redis: Redis | undefined) => {
  const prefix = options.keyPrefix ?? "predix:rl"
  const limit = (name: string, points: number, seconds: number, key: Limit["key"], describe: Limit["describe"]): Limit | undefined =>
    points === 0
      ? undefined
      : {
          name,
          points,
          seconds,
          key,
          describe,
          local: new RateLimiterMemory({ keyPrefix: name, points, duration: seconds }),
          shared:
            redis === undefined
              ? undefined
              : new RateLimiterRedis({
                  storeClient: redis,
                  keyPrefix: `${prefix}:${name}`,
                  points,
                  duration: seconds,
                  rejectIfRedisNotReady: true
                })
        }
  const who = (s: Subject) => (s.user === undefined ? `ip:${s.ip}` : `user:${s.user}`)
  const auth = limit(
    "auth",
    options.authPerMinute,
    60,
    (s) => `ip:${s.ip}`,
    () => `${options.authPerMinute} sign-in requests per minute per IP`
  )
  const publicMinute = limit(
    "minute-ip",
    options.publicPerMinute,
    60,
    (s) => `ip:${s.ip}`,
    () => `${options.publicPerMinute} requests per minute per IP without a session`
  )
  const userMinute = limit(
    "minute-user",
    options.userPerMinute,
    60,
    (s) => `user:${s.user}`,
    () => `${options.userPerMinute} requests per minute per user`
  )
  const day = limit(
    "day",
    options.perDay,
    86_400,
    who,
    (s) => `${options.perDay} requests per day per ${s.user === undefined ? "IP" : "user"}`
  )
  return { auth, publicMinute, userMinute, day }
}

interface Outcome {
  readonly limit: Limit
  readonly res: RateLimiterRes
  readonly exceeded: boolean
}

export interface RateLimitsService {
  readonly trustProxy: TrustProxy
  readonly check: (subject: Subject) => Effect.Effect<Decision>
}

export class RateLimits extends Context.Tag("predix/RateLimits")<RateLimits, RateLimitsService>() {}

const makeService = (options: RateLimitOptions, redis: Redis | undefined): RateLimitsService => {
  const limits = makeLimits(options, redis)
  let degradedSince: number | undefined
  let lastWarning = 0

  /** Consumes one point; a store failure falls back to the in-process counter and is reported. */
  const consume = async (limit: Limit, key: string, failures: Array<unknown>): Promise<Outcome> => {
    const take = async (limiter: RateLimiterAbstract): Promise<Outcome> => {
      try {
        return { limit, res: await limiter.consume(key), exceeded: false }
      } catch (error) {
        if (error instanceof RateLimiterRes) return { limit, res: error, exceeded: true }
        throw error
      }
    }
    if (limit.shared === undefined) return take(limit.local)
    try {
      return await take(limit.shared)
    } catch (error) {
      failures.push(error)
      return take(limit.local)
    }
  }

  const report = (failures: ReadonlyArray<unknown>) =>
    Effect.suspend(() => {
      const now = Date.now()
      if (failures.length === 0) {
        if (degradedSince === undefined) return Effect.void
        const since = degradedSince
        degradedSince = undefined
        return Effect.logWarning("rate-limit store answers again; limits are shared across instances").pipe(
          Effect.annotateLogs({ degradedMs: now - since })
        )
      }
      degradedSince ??= now
      if (now - lastWarning < WARN_EVERY_MS) return Effect.void
      lastWarning = now
      const first = failures[0]
      return Effect.logWarning("rate-limit store unavailable: limits are counted by this instance alone until it is back").pipe(
        Effect.annotateLogs({ error: first instanceof Error ? first.message : String(first) })
      )
    })

  const check = (subject: Subject) =>
    Effect.gen(function* () {
      const applicable = [
        subject.auth ? limits.auth : undefined,
        subject.user === undefined ? limits.publicMinute : limits.userMinute,
        limits.day
      ].filter((l): l is Limit => l !== undefined)
      if (applicable.length === 0) return { allowed: true, headers: {} } satisfies Decision
      const failures: Array<unknown> = []
      const outcomes = yield* Effect.promise(() => Promise.all(applicable.map((l) => consume(l, l.key(subject), failures))))
      yield* report(failures)
      const now = Date.now()
      const refused = outcomes.filter((o) => o.exceeded).sort((a, b) => b.res.msBeforeNext - a.res.msBeforeNext)[0]
      // The tightest limit: refused, else the one with the fewest requests left (ties: shorter window).
      const shown = refused ?? outcomes.reduce((a, b) => (b.res.remainingPoints < a.res.remainingPoints ? b : a))
      const headers: Record<string, string> = {
        "x-ratelimit-limit": String(shown.limit.points),
        "x-ratelimit-remaining": String(refused === undefined ? shown.res.remainingPoints : 0),
        "x-ratelimit-reset": String(Math.ceil((now + shown.res.msBeforeNext) / 1000))
      }
      if (refused === undefined) return { allowed: true, headers } satisfies Decision
      headers["retry-after"] = String(Math.max(1, Math.ceil(refused.res.msBeforeNext / 1000)))
      return { allowed: false, headers, refusal: refused.limit.describe(subject) } satisfies Decision
    })

  return { trustProxy: options.trustProxy ?? noProxy, check }
}

/** The limits, over Redis when `redisUrl` is given (connected with the layer, closed with it). */
export const RateLimitsLive = (options: RateLimitOptions) =>
  Layer.scoped(
    RateLimits,
    Effect.gen(function* () {
      if (options.redisUrl === undefined) return makeService(options, undefined)
      const url = Redacted.isRedacted(options.redisUrl) ? Redacted.value(options.redisUrl) : options.redisUrl
      const redis = yield* Effect.acquireRelease(
        Effect.sync(
          () =>
            new Redis(url, {
              lazyConnect: true,
              // Fail at once while disconnected, and soon when Redis hangs: the fallback counts meanwhile.
              enableOfflineQueue: false,
              maxRetriesPerRequest: 0,
              commandTimeout: 500,
              connectTimeout: 2_000,
              retryStrategy: (attempt) => Math.min(attempt * 200, 2_000)
            })
        ),
        (client) => Effect.sync(() => client.disconnect())
      )
      // Errors surface through the commands that fail (and the warning above); the client reconnects itself.
      redis.on("error", () => {})
      yield* Effect.tryPromise(() => redis.connect()).pipe(
        Effect.timeout("3 seconds"),
        Effect.catchAll((error) =>
          Effect.logWarning("rate-limit store not reachable at start; counting in-process until it is").pipe(
            Effect.annotateLogs({ error: String(error) })
          )
        )
      )
      return makeService(options, redis)
    })
  )
