/**
 * What every read shares: database failures and slow answers are a 503 `ServiceUnavailable`
 * (never a 500, never a hang), and list pages come with the total number of matching rows.
 */
import { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { InvalidParameter, ServiceUnavailable } from "../../../schema/errors.js"

/** A read whose database failures (and answers slower than five seconds) are `ServiceUnavailable`. */
export const read = <A, E, R>(effect: Effect.Effect<A, E | SqlError, R>): Effect.Effect<A, Exclude<E, SqlError> | ServiceUnavailable, R> =>
  effect.pipe(
    Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => new ServiceUnavailable({ message: "database did not answer within 5 seconds" }) }),
    Effect.catchIf(
      (error): error is SqlError => error instanceof SqlError,
      (error) => Effect.fail(new ServiceUnavailable({ message: `database unavailable: ${error.message}` }))
    )
  ) as Effect.Effect<A, Exclude<E, SqlError> | ServiceUnavailable, R>

/** One page of rows and the number of rows matching the filters. */
export interface Page<A> {
  readonly rows: ReadonlyArray<A>
  readonly count: number
}

/**
 * A page from a query that selects `count(*) over () as total_count` beside its columns: one round
 * trip in the usual case. Only a page past the end (no rows, so no count) needs `countQuery`.
 */
export const pageOf = <Row extends { readonly total_count: string | number }, R1, R2>(
  pageQuery: Effect.Effect<ReadonlyArray<Row>, SqlError, R1>,
  countQuery: Effect.Effect<ReadonlyArray<{ readonly count: string | number }>, SqlError, R2>,
  offset: number
): Effect.Effect<Page<Row>, SqlError, R1 | R2> =>
  Effect.flatMap(pageQuery, (rows) => {
    const first = rows[0]
    if (first !== undefined) return Effect.succeed({ rows, count: Number(first.total_count) })
    if (offset === 0) return Effect.succeed({ rows, count: 0 })
    return Effect.map(countQuery, (counted) => ({ rows, count: Number(counted[0]?.count ?? 0) }))
  })

/** `from` after `to` can match nothing: said as a 400 naming `from` rather than answered with an empty list. */
export const checkRange = (from: number | undefined, to: number | undefined): Effect.Effect<void, InvalidParameter> =>
  from !== undefined && to !== undefined && from > to
    ? Effect.fail(InvalidParameter.forParameter("from", `from (${from}) is after to (${to})`))
    : Effect.void
