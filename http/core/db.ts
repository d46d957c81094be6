/**
 * What every read shares: an unreachable or unwell database and slow answers are a 503
 * `ServiceUnavailable` (never a hang), and list pages come with the total number of matching
 * rows. A statement the database refuses for its own content (a value it cannot hold, a bug in
 * the SQL: `http/core/sql-failure.ts`) is no outage and must not be reported as one: it stays a
 * defect carrying the `SqlError`, which the error middlewares answer as the client's 400 (a
 * refused value) or a logged 500.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type { IndexerListMeta } from "../../schema/envelopes.js"
import { InvalidParameter, ServiceUnavailable } from "../../schema/errors.js"
import { isDatabaseOutage } from "./sql-failure.js"

/** A read whose database outages (and answers slower than five seconds) are `ServiceUnavailable`; a refused statement dies. */
export const read = <A, E, R>(effect: Effect.Effect<A, E | SqlError, R>): Effect.Effect<A, Exclude<E, SqlError> | ServiceUnavailable, R> =>
  effect.pipe(
    Effect.timeoutFail({
      duration: "5 seconds",
      onTimeout: () => new ServiceUnavailable({ message: "database did not answer within 5 seconds" })
    }),
    Effect.catchIf(
      (error): error is SqlError => error instanceof SqlError,
      (error) =>
        isDatabaseOutage(error)
          ? Effect.fail(new ServiceUnavailable({ message: `database unavailable: ${error.message}` }))
          : Effect.die(error)
    )
  ) as Effect.Effect<A, Exclude<E, SqlError> | ServiceUnavailable, R>

/** The page a list asks for (validated by the endpoint's `page` parameters). */
export interface Paging {
  readonly limit: number
  readonly offset: number
}

/** One page of a list endpoint, in its envelope: the records and `{ limit, offset, count }`. */
export interface ListPage<A> {
  readonly data: ReadonlyArray<A>
  readonly meta: IndexerListMeta
}

/** What a list endpoint pages through (text is spliced as SQL: only our own literals, never input). */
export interface ListQuery<A> {
  /** The columns of a row (`total_count` is added beside them). */
  readonly select: string | Statement.Fragment
  /** The rows: a FROM clause and its WHERE. */
  readonly from: string | Statement.Fragment
  /** A total order: it ends in a key, so pages never overlap or skip. */
  readonly orderBy: string
  /** A cheaper statement counting the same rows (`select count(*) as count ...`), where there is one. */
  readonly count?: Effect.Effect<ReadonlyArray<{ readonly count: string }>, SqlError>
  /** The record of one row (decoded by a `rowDecoder`); `index` is its place in the page. */
  readonly record: (row: unknown, index: number) => A
}

/**
 * The page of `query` at `paging`, with the number of matching rows: the page selects
 * `count(*) over ()` beside its columns, so one round trip in the usual case; only a page past
 * the end (no rows, so no count) runs the count statement.
 */
export const listPage = <A>(query: ListQuery<A>, paging: Paging): Effect.Effect<ListPage<A>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const from = fragmentOf(sql, query.from)
    const rows = yield* sql<{ readonly total_count: string }>`
      select ${fragmentOf(sql, query.select)}, count(*) over () as total_count from ${from}
      order by ${sql.literal(query.orderBy)} limit ${paging.limit} offset ${paging.offset}`
    const first = rows[0]
    const count =
      first !== undefined
        ? Number(first.total_count)
        : paging.offset === 0
          ? 0
          : Number((yield* query.count ?? sql<{ readonly count: string }>`select count(*) as count from ${from}`)[0]?.count ?? 0)
    return { data: rows.map(query.record), meta: { limit: paging.limit, offset: paging.offset, count } }
  })

const fragmentOf = (sql: SqlClient.SqlClient, part: string | Statement.Fragment) => (typeof part === "string" ? sql.literal(part) : part)

/**
 * The records of `query` at `paging` without the total: `listPage`'s page alone, for a reader that
 * needs no count (the total makes Postgres visit every matching row, however small the page).
 */
export const listRows = <A>(query: ListQuery<A>, paging: Paging): Effect.Effect<ReadonlyArray<A>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql`select ${fragmentOf(sql, query.select)} from ${fragmentOf(sql, query.from)}
        order by ${sql.literal(query.orderBy)} limit ${paging.limit} offset ${paging.offset}`,
      (rows) => rows.map(query.record)
    )
  )

/** `from` after `to` can match nothing: said as a 400 naming `from` rather than answered with an empty list. */
export const checkRange = (from: number | undefined, to: number | undefined): Effect.Effect<void, InvalidParameter> =>
  from !== undefined && to !== undefined && from > to
    ? Effect.fail(InvalidParameter.forParameter("from", `from (${from}) is after to (${to})`))
    : Effect.void
