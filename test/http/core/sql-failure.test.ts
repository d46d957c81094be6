/**
 * Outage or refused statement, told apart on real Postgres failures: a statement the server
 * refuses for its content never counts against the backend's breaker; a database that cannot be
 * reached does.
 */
import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Effect, Redacted } from "effect"
import { describe, expect, it } from "vitest"
import { CircuitBreaker, guardWith } from "../../../http/backend/edge/breaker.js"
import { isDatabaseOutage, isRefusedValue, sqlState } from "../../../http/core/sql-failure.js"
import { pgClientLayer } from "../../../src/db/database.js"
import { EXTERNAL_URL } from "../../support/postgres.js"

/** The SqlError `statement` fails with on the database at `url`. */
const failureOf = (url: string, statement: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, SqlError>) =>
  Effect.runPromise(
    Effect.flatMap(SqlClient.SqlClient, statement).pipe(
      Effect.flip,
      Effect.scoped,
      Effect.provide(pgClientLayer(Redacted.make(url))),
      Effect.catchAll((error) => Effect.succeed(error))
    )
  ) as Promise<unknown>

describe("database failures", () => {
  it("a refused value (SQLSTATE class 22) is no outage; a closed port is one", async () => {
    const nul = await failureOf(EXTERNAL_URL, (sql) => sql`select ${"a\u0000b"}::text as t`)
    expect(nul).toBeInstanceOf(SqlError)
    expect(sqlState(nul as SqlError)?.slice(0, 2)).toBe("22")
    expect(isDatabaseOutage(nul as SqlError)).toBe(false)
    expect(isRefusedValue(nul)).toBe(true)

    const syntax = await failureOf(EXTERNAL_URL, (sql) => sql`select from where`)
    expect(sqlState(syntax as SqlError)?.slice(0, 2)).toBe("42")
    expect(isDatabaseOutage(syntax as SqlError)).toBe(false)

    const closed = await failureOf("postgres://postgres@127.0.0.1:9/postgres", (sql) => sql`select 1`)
    expect(closed).toBeInstanceOf(SqlError)
    expect(isDatabaseOutage(closed as SqlError)).toBe(true)
  }, 60_000)

  it("the breaker opens on outages only: 20 refused statements leave it closed", async () => {
    const breaker = new CircuitBreaker({ threshold: 2, openForMs: 60_000 })
    const guard = guardWith(breaker)
    const nul = (await failureOf(EXTERNAL_URL, (sql) => sql`select ${"\u0000"}::text`)) as SqlError
    for (let i = 0; i < 20; i++) {
      const exit = await Effect.runPromiseExit(guard(Effect.fail(nul)))
      expect(exit._tag).toBe("Failure")
    }
    expect(breaker.state).toBe("closed")
    const closed = (await failureOf("postgres://postgres@127.0.0.1:9/postgres", (sql) => sql`select 1`)) as SqlError
    await Effect.runPromiseExit(guard(Effect.fail(closed)))
    await Effect.runPromiseExit(guard(Effect.fail(closed)))
    expect(breaker.state).toBe("open")
  }, 60_000)
})
