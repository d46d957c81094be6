/**
 * The one writer of each generation of the index (upgrades without downtime, docs/reindex.md):
 * whoever writes a generation's tables (its follower, its builder) holds a session-level advisory
 * lock keyed by the generation's number, on a connection reserved for as long as it writes. Two
 * processes (an old version still running, a new one started) so never write one generation at
 * once, and a process can tell whether a generation has a live writer.
 *
 * Invariants:
 * - the lock is `(WRITER_LOCK_CLASS, n)`; Postgres keys advisory locks by database too, so two
 *   databases on one cluster (tests, or several deployments) never contend;
 * - `pg_locks`, though, lists the whole cluster's locks: `writtenGenerations` reads only this
 *   database's (`database` = its oid), or a writer of another database would pass for ours;
 * - the lock is let go (`pg_advisory_unlock`) before its connection returns to the pool, so a
 *   pooled connection never carries a lock; a connection that dies takes its lock with it.
 */
import { SqlClient } from "@effect/sql"
import { Duration, Effect, ExecutionStrategy, Exit, Scope } from "effect"

/** The first key of the writers' advisory locks ("pw", predix writer); the second is the generation's number. */
export const WRITER_LOCK_CLASS = 0x7077

/**
 * Tries to become the writer of generation `n`: a scope holding the lock (closing it lets go),
 * or undefined when another session holds it.
 */
export const tryWriterLock = (n: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const scope = yield* Scope.make(ExecutionStrategy.sequential)
    const held = yield* Effect.gen(function* () {
      const connection = yield* sql.reserve
      const rows = yield* connection.execute(`select pg_try_advisory_lock($1, $2) as held`, [WRITER_LOCK_CLASS, n], undefined)
      if (rows[0]?.held !== true) return false
      yield* Effect.addFinalizer(() =>
        Effect.ignore(connection.execute(`select pg_advisory_unlock($1, $2)`, [WRITER_LOCK_CLASS, n], undefined))
      )
      return true
    }).pipe(
      Scope.extend(scope),
      Effect.onError(() => Scope.close(scope, Exit.void))
    )
    if (held) return scope
    yield* Scope.close(scope, Exit.void)
    return undefined
  })

/** `tryWriterLock` again every `every` until it holds the lock. */
export const writerLock = (n: number, every: Duration.DurationInput = Duration.millis(200)) =>
  Effect.gen(function* () {
    for (;;) {
      const lock = yield* tryWriterLock(n)
      if (lock !== undefined) return lock
      yield* Effect.sleep(every)
    }
  })

/** Lets go of a lock `tryWriterLock` took. */
export const releaseWriterLock = (lock: Scope.CloseableScope) => Scope.close(lock, Exit.void)

/** The numbers of the generations of this database that have a writer now. */
export const writtenGenerations = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ n: number }>`
    select objid::int as n from pg_locks
    where locktype = 'advisory' and granted and classid = ${WRITER_LOCK_CLASS} and objsubid = 2
      and database = (select oid from pg_database where datname = current_database())
    order by 1`.pipe(Effect.map((rows) => new Set(rows.map((r) => r.n))))
)
