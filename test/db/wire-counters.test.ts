/**
 * The wire counters against a real Postgres: each kind of statement the service sends (simple
 * queries, parameterized ones, a multi-statement query, COPY FROM through the pipeline's copyIn,
 * a COPY TO read, LISTEN) is counted as the module says, the figures are exact (the same work
 * counts the same), and `postgresWorkLine` reads back what `countedPgClient` logs.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Logger, LogLevel, Redacted } from "effect"
import pg from "pg"
import { countedPgClient, pgClientLayer, postgresWorkLine } from "../../src/db/database.js"
import { type PgWork, WireCounters } from "../../src/db/wire-counters.js"
import { copyIn } from "../../pipeline/copy-in.js"
import { scratchDatabaseUrl } from "../support/postgres.js"

const minus = (a: PgWork, b: PgWork) =>
  Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v - b[k as keyof PgWork]])) as unknown as PgWork

/** The same workload, run on a pool counting into `counters`; returns the work it added. */
const workload = (counters: WireCounters) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // Warm the pool's one connection (startup, authentication), so the deltas are only the statements.
    yield* sql`select 1`
    const before = counters.snapshot()
    yield* sql`create table t (id int primary key, v text)` // 1 statement, no rows
    yield* sql`insert into t ${sql.insert([
      { id: 1, v: "a" },
      { id: 2, v: "b" },
      { id: 3, v: "c" }
    ])}` // 3 inserted
    yield* sql`update t set v = 'x' where id <= ${2}` // 2 updated
    yield* sql`delete from t where id = ${3}` // 1 deleted
    yield* sql`select * from t` // a read
    yield* sql.unsafe(`insert into t values (10, 'm'); insert into t values (11, 'n')`) // one simple query, 2 inserted
    // Inside a transaction: begin, the COPY (100 rows), commit.
    const rows = Array.from({ length: 100 }, (_, i) => [100 + i, "r".repeat(i)] as const)
    yield* copyIn("t", ["id", "v"], rows).pipe(sql.withTransaction)
    yield* sql.unsafe(`copy t to stdout`) // a COPY TO reads: no rows written
    return minus(counters.snapshot(), before)
  })

describe("wire counters", () => {
  it.scopedLive("count statements, rows written by kind, and bytes, exactly and the same twice", () =>
    Effect.gen(function* () {
      const runOnce = Effect.gen(function* () {
        const url = yield* scratchDatabaseUrl
        const counters = new WireCounters()
        return yield* Effect.provide(workload(counters), pgClientLayer(Redacted.make(url), counters))
      }).pipe(Effect.scoped)
      const first = yield* runOnce
      // create, insert, update, delete, select, the two-statement query (one 'Q'), begin, copy, commit, copy to.
      expect(first.statements).toBe(10)
      expect(first.rowsInserted).toBe(5)
      expect(first.rowsUpdated).toBe(2)
      expect(first.rowsDeleted).toBe(1)
      expect(first.rowsCopied).toBe(100)
      expect(first.rowsWritten).toBe(108)
      expect(first.copyBytes).toBe(Buffer.byteLength(Array.from({ length: 100 }, (_, i) => `${100 + i}\t${"r".repeat(i)}\n`).join("")))
      expect(first.bytesSent).toBeGreaterThan(first.copyBytes)
      expect(first.bytesReceived).toBeGreaterThan(0)
      expect(first.connections).toBe(0)
      // Deterministic: another database, the same work, the same figures.
      expect(yield* runOnce).toEqual(first)
    })
  )

  it.scopedLive("a connection opened by hand with the counting stream (LISTEN's kind) is counted from its startup", () =>
    Effect.gen(function* () {
      const url = yield* scratchDatabaseUrl
      const counters = new WireCounters()
      const work = yield* Effect.promise(async () => {
        const client = new pg.Client({ connectionString: url, stream: counters.stream })
        await client.connect()
        await client.query("listen some_channel")
        await client.query("select $1::int as n", [1])
        await client.end()
        return counters.snapshot()
      })
      expect(work).toMatchObject({ connections: 1, unparsedConnections: 0, statements: 2, rowsWritten: 0 })
      // The startup message alone is more than the 'Q' and the parse/bind/execute sent after it.
      expect(work.bytesSent).toBeGreaterThan(60)
    })
  )

  it.scopedLive("countedPgClient logs the process's work as the pool closes, in a line postgresWorkLine reads back", () =>
    Effect.gen(function* () {
      const url = yield* scratchDatabaseUrl
      const lines: Array<string> = []
      const capture = Logger.replace(Logger.defaultLogger, Logger.logfmtLogger.pipe(Logger.map((line) => void lines.push(line))))
      yield* Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`create table u (id int)`
        yield* sql`insert into u select generate_series(1, 7)`
      }).pipe(
        Effect.provide(countedPgClient("api", (counters) => pgClientLayer(Redacted.make(url), counters))),
        Effect.provide(capture),
        Logger.withMinimumLogLevel(LogLevel.Info)
      )
      const parsed = lines.map(postgresWorkLine).filter((p) => p !== undefined)
      expect(parsed).toHaveLength(1)
      const [{ role, work }] = parsed as [NonNullable<(typeof parsed)[number]>]
      expect(role).toBe("api")
      // The pool's own check (select 1), then the two statements.
      expect(work).toMatchObject({ connections: 1, statements: 3, rowsInserted: 7, rowsWritten: 7 })
    })
  )
})
