/**
 * Secondary indexes deferred through a backfill from nothing.
 *
 * Maintaining the derived tables' secondary (non-unique) indexes row by row was about 45% of
 * Postgres's CPU in the 1M-event backfill; building them once at the end, from sorted data, costs
 * a fraction of that. So a backfill that starts on empty tables drops them first, and they are
 * created again when it ends, whatever the ending (done, failed, interrupted). Unique indexes
 * stay: upserts and the API's lookups by key need them throughout.
 *
 * Invariant: an index is either present or listed in `deferred_index` (all dropped and listed in
 * one transaction; each created and unlisted in one transaction), so a process killed in between
 * leaves the list for the next indexer, which restores it before indexing anything.
 * Meanwhile the API answers from the same rows, only slower for queries those indexes serve.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { SINK_TABLES } from "./tables.js"

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`

/** Drops the sink tables' secondary indexes, listing each for `restoreIndexes`. */
export const deferIndexes = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.withTransaction(
    Effect.gen(function* () {
      const indexes = yield* sql.unsafe<{ name: string; definition: string }>(
        `select i.relname as name, pg_get_indexdef(x.indexrelid) as definition
           from pg_index x
           join pg_class i on i.oid = x.indexrelid
           join pg_class t on t.oid = x.indrelid
          where t.relnamespace = current_schema()::regnamespace and t.relname = any($1) and not x.indisunique
          order by i.relname`,
        [SINK_TABLES]
      )
      if (indexes.length === 0) return
      yield* sql.unsafe(
        `insert into deferred_index (name, definition) select * from unnest($1::text[], $2::text[]) on conflict do nothing`,
        [indexes.map((i) => i.name), indexes.map((i) => i.definition)]
      )
      for (const i of indexes) yield* sql.unsafe(`drop index ${ident(i.name)}`)
    })
  )
)

/**
 * Creates every listed index again, two at a time (Postgres sorts for each build; the backfill
 * is over, so both cores are free), each in one transaction with its unlisting.
 */
export const restoreIndexes = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.gen(function* () {
    const listed = yield* sql.unsafe<{ name: string; definition: string }>(`select name, definition from deferred_index order by name`)
    if (listed.length === 0) return
    yield* Effect.forEach(
      listed,
      (i) =>
        sql.withTransaction(
          Effect.gen(function* () {
            // Listed still (not restored by another indexer meanwhile): locked while it is built.
            const still = yield* sql.unsafe(`select 1 from deferred_index where name = $1 for update`, [i.name])
            if (still.length === 0) return
            // pg_get_indexdef's text, made idempotent.
            yield* sql.unsafe(i.definition.replace(/^CREATE INDEX /, "CREATE INDEX IF NOT EXISTS "))
            yield* sql.unsafe(`delete from deferred_index where name = $1`, [i.name])
          })
        ),
      { concurrency: 2, discard: true }
    )
    yield* Effect.logInfo("secondary indexes created").pipe(Effect.annotateLogs({ indexes: listed.length }))
  })
)
