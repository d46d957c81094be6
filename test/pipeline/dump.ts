/**
 * Every derived table as rows, for comparing two databases: every table of
 * `pipeline/tables.ts`, each in a total order (by the row's text).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Logger, LogLevel, Redacted } from "effect"
import { makeIndexer } from "../../pipeline/run.js"
import { makeRpc } from "../../pipeline/source/rpc.js"
import { SINK_TABLES } from "../../pipeline/tables.js"
import type { Deployment } from "../../schema/deployment.js"
import { pgClientLayer } from "../../src/db/database.js"
import { generationSearchPath } from "../../src/db/generations.js"
import { runMigrations } from "../../src/db/migrations.js"
import { scratchDatabaseUrl } from "../support/postgres.js"

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

/** Every derived table and the checkpoint of the connection's generation. */
export const dumpIndex = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return {
    ...(yield* dumpTables),
    checkpoint: yield* sql.unsafe(`select block_number, block_hash, digest from indexer_checkpoint`)
  }
})

/** `body` on connections of generation `schema` of the database at `url` (its search path). */
export const onGeneration = <A, E>(url: string, schema: string, body: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.provide(body, pgClientLayer(Redacted.make(url), undefined, generationSearchPath(schema))).pipe(Effect.scoped)

/** `dumpIndex` of a fresh index, on a scratch database, of the chain the node at `rpcUrl` serves now. */
export const freshIndexDump = (rpcUrl: string, deployment: Deployment) =>
  Effect.flatMap(scratchDatabaseUrl, (clean) =>
    onGeneration(
      clean,
      "public",
      Effect.gen(function* () {
        yield* runMigrations()
        const indexer = yield* makeIndexer({ rpc: makeRpc({ url: rpcUrl }), deployment, chainId: 130 })
        yield* indexer.step(yield* indexer.loadWindow)
        return yield* dumpIndex
      }).pipe(Logger.withMinimumLogLevel(LogLevel.Warning))
    )
  )
