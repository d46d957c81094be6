/**
 * Every derived table as rows, for comparing two databases: every table of
 * `pipeline/tables.ts`, each in a total order (by the row's text).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { SINK_TABLES } from "../../pipeline/tables.js"

export const ALL_TABLES = SINK_TABLES

export const dumpTables = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const out: Record<string, ReadonlyArray<Record<string, unknown>>> = {}
  for (const t of ALL_TABLES) out[t] = yield* sql.unsafe<Record<string, unknown>>(`select * from ${t} order by (${t}.*)::text`)
  return out
})

/** The current schema's indexes (name and definition), by name. */
export const indexDefinitions = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe<{ indexname: string; indexdef: string }>(
    `select indexname, indexdef from pg_indexes where schemaname = current_schema() order by indexname`
  )
)
