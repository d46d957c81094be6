/**
 * Retries for outages: the database or the node gone for a moment or an hour. Every write of the
 * pipeline is a transaction and every step starts from what the database holds, so running a
 * failed step again is exact.
 */
import { SqlError } from "@effect/sql"
import { Context, Duration, Effect } from "effect"
import { backoffUpTo } from "./source/rpc.js"

/**
 * The longest pause between two attempts of `healing`: 5 s unless provided (`predix start` provides
 * INDEXER_RETRY_MAX_MS). Shorter means an outage's end is noticed sooner, at the price of more
 * attempts (each a connection attempt and a log line) for as long as it lasts.
 */
export class HealingPauseCap extends Context.Reference<HealingPauseCap>()("predix/HealingPauseCap", {
  defaultValue: (): Duration.Duration => Duration.seconds(5)
}) {}

/**
 * Runs `effect` until it succeeds, however long that takes: each failure but a `fatal` one is
 * logged (`message="indexing failed; retrying" phase attempt error`) and retried after the next
 * pause of a backoff from 100 ms, doubling, at most `HealingPauseCap` (5 s by default).
 */
export const healing = <A, E, R>(
  phase: string,
  effect: Effect.Effect<A, E, R>,
  fatal: (error: E | SqlError.SqlError) => boolean = () => false
) =>
  Effect.flatMap(HealingPauseCap, (cap) => {
    let attempt = 0
    return effect.pipe(
      // @effect/sql makes a failed COMMIT or ROLLBACK a defect; with the database gone, that is
      // an outage like any other (a commit's outcome is then read back from the checkpoint).
      Effect.catchAllDefect((defect) => (defect instanceof SqlError.SqlError ? Effect.fail(defect) : Effect.die(defect))),
      Effect.tapError((error) =>
        fatal(error)
          ? Effect.void
          : Effect.logError("indexing failed; retrying").pipe(Effect.annotateLogs({ phase, attempt: ++attempt, error: describe(error) }))
      ),
      Effect.retry({ schedule: backoffUpTo(cap), while: (error) => !fatal(error) })
    )
  })

/** An error's tag and message, on one line. */
export const describe = (error: unknown): string => {
  const e = error as { _tag?: unknown; message?: unknown; cause?: unknown }
  const cause = e.cause instanceof Error ? `: ${e.cause.message}` : ""
  const text = `${typeof e._tag === "string" ? `${e._tag}: ` : ""}${typeof e.message === "string" ? e.message : String(error)}${cause}`
  return text.replace(/\s+/g, " ")
}
