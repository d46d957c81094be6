/**
 * The circuit breaker in front of the indexer: when the indexer is down, the backend answers
 * `INDEXER_UNAVAILABLE` (503) at once instead of letting requests pile up behind timeouts.
 *
 * How the backend reads (decision): handlers read the indexed tables directly through the
 * shared read model (`http/read/*`, the code the indexer API runs too) over the
 * same Postgres, not through the indexer's HTTP API: one round trip to the database instead of an
 * HTTP hop plus the indexer's encoding and the backend's decoding, and the derived values
 * (prices, positions, P&L) are computed by exactly one piece of code. The dependency still runs
 * downwards only (http/backend -> http/read -> http/core, schema).
 *
 * Because the data does not come through the indexer process, the breaker hears about the
 * indexer from two sources:
 * - every guarded read: a database outage or timeout (`ServiceUnavailable`, an outage's
 *   `SqlError`: `http/core/sql-failure.ts`) is a failure; any other answer, a 404 included, is a
 *   success. A statement the database refused for its content (a NUL in a search text, a bug in
 *   the SQL) is neither: it says nothing about the indexer's health, so it is not counted (it
 *   dies, and the middleware answers it as the client's 400 or a logged 500). Otherwise one
 *   cheap bad request every few seconds would keep the breaker open for every user;
 * - a probe of the indexer's `/api/health` through its typed client every `probeEvery`: a stopped
 *   or unhealthy indexer (no answer, a 503) is a failure even while the database still answers,
 *   since the data would stop moving.
 *
 * States: closed (requests pass; `threshold` consecutive failures open it); open (every request
 * fails fast for `openFor`); half-open (after `openFor` one trial, a request or the next probe,
 * is let through: success closes, failure opens again).
 */
import { HttpApiClient, type HttpClient } from "@effect/platform"
import { SqlError } from "@effect/sql/SqlError"
import { Context, Duration, Effect, Layer, Schedule } from "effect"
import { IndexerUnavailable, ServiceUnavailable } from "../../../schema/errors.js"
import { isDatabaseOutage } from "../../core/sql-failure.js"
import { IndexerHealthApi } from "../../core/indexer-health.js"

export interface BreakerOptions {
  /** Consecutive failures that open the breaker. */
  readonly threshold: number
  /** How long it stays open before a trial. */
  readonly openForMs: number
}

export type BreakerState = "closed" | "open" | "half-open"

/** The state machine alone (single-threaded: JavaScript runs one callback at a time). */
export class CircuitBreaker {
  private failures = 0
  private openedAt = 0
  private trialInFlight = false
  state: BreakerState = "closed"

  constructor(
    readonly options: BreakerOptions,
    private readonly now: () => number = Date.now
  ) {}

  /** Whether a call may go to the indexer now (in half-open: the one trial). */
  admit(): boolean {
    if (this.state === "closed") return true
    if (this.state === "open") {
      if (this.now() - this.openedAt < this.options.openForMs) return false
      this.state = "half-open"
    }
    if (this.trialInFlight) return false
    this.trialInFlight = true
    return true
  }

  success(): void {
    this.failures = 0
    this.trialInFlight = false
    this.state = "closed"
  }

  failure(): void {
    this.trialInFlight = false
    this.failures += 1
    if (this.state === "half-open" || this.failures >= this.options.threshold) {
      if (this.state !== "open") this.openedAt = this.now()
      this.state = "open"
    }
  }

  /** A trial that ended neither way (interrupted): let the next one go. */
  release(): void {
    this.trialInFlight = false
  }

  /** Seconds until a trial is allowed (for messages). */
  retryInSeconds(): number {
    return Math.max(1, Math.ceil((this.options.openForMs - (this.now() - this.openedAt)) / 1000))
  }
}

const isIndexerFailure = (error: unknown): boolean =>
  error instanceof ServiceUnavailable || (error instanceof SqlError && isDatabaseOutage(error))

/** A refused statement (not an outage) as the defect it is, so it is neither counted nor typed as one. */
const refusedStatement = (error: unknown): error is SqlError => error instanceof SqlError && !isDatabaseOutage(error)

export class IndexerBreaker extends Context.Tag("predix/IndexerBreaker")<
  IndexerBreaker,
  {
    readonly breaker: CircuitBreaker
    /** `effect` behind the breaker: fails fast when open; its indexer failures count and become INDEXER_UNAVAILABLE. */
    readonly guard: <A, E, R>(
      effect: Effect.Effect<A, E, R>
    ) => Effect.Effect<A, Exclude<E, ServiceUnavailable | SqlError> | IndexerUnavailable, R>
  }
>() {}

const unavailable = (breaker: CircuitBreaker) =>
  new IndexerUnavailable({ message: `the indexer is unavailable; retry in ${breaker.retryInSeconds()} s` })

export const guardWith =
  (breaker: CircuitBreaker) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, ServiceUnavailable | SqlError> | IndexerUnavailable, R> =>
    Effect.suspend(() => {
      if (!breaker.admit()) return Effect.fail(unavailable(breaker))
      return effect.pipe(
        Effect.catchIf(refusedStatement, (error) => Effect.die(error)),
        Effect.onExit((exit) =>
          Effect.sync(() => {
            if (exit._tag === "Success") return breaker.success()
            const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
            if (failure !== undefined && isIndexerFailure(failure)) return breaker.failure()
            if (failure !== undefined) return breaker.success()
            breaker.release()
          })
        ),
        Effect.catchIf(isIndexerFailure, (error) =>
          Effect.logWarning("indexer read failed").pipe(
            Effect.annotateLogs("error", String((error as { message?: unknown }).message)),
            Effect.zipRight(Effect.fail(unavailable(breaker)))
          )
        )
      ) as Effect.Effect<A, Exclude<E, ServiceUnavailable | SqlError> | IndexerUnavailable, R>
    })

export interface IndexerBreakerOptions extends BreakerOptions {
  /** The indexer's base URL (probed at /api/health). */
  readonly indexerUrl: string
  readonly probeEveryMs: number
}

/** The breaker and its probe, for as long as the layer lives. */
export const IndexerBreakerLive = (options: IndexerBreakerOptions): Layer.Layer<IndexerBreaker, never, HttpClient.HttpClient> =>
  Layer.scoped(
    IndexerBreaker,
    Effect.gen(function* () {
      const breaker = new CircuitBreaker(options)
      const client = yield* HttpApiClient.make(IndexerHealthApi, { baseUrl: options.indexerUrl })
      const probe = Effect.suspend(() => {
        // While open, probing before the trial time would change nothing.
        if (breaker.state === "open" && !breaker.admit()) return Effect.void
        return client.health
          .health()
          .pipe(
            Effect.timeout(Duration.millis(Math.max(500, options.probeEveryMs))),
            Effect.match({ onFailure: () => breaker.failure(), onSuccess: () => breaker.success() })
          )
      })
      yield* probe.pipe(Effect.repeat(Schedule.spaced(Duration.millis(options.probeEveryMs))), Effect.forkScoped)
      return { breaker, guard: guardWith(breaker) }
    })
  )
