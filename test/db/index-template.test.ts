/**
 * The templates of the derived tables (migration 0027, `src/db/generations.ts`): `index_template`
 * holds a copy of every generation table and view; `index_shape` hashes a generation's shape,
 * equal for tables made `like` one another and different after a changed column or index; each
 * generation records the shape it was built with. And the writers' locks
 * (`src/db/writer-lock.ts`): one writer per generation, seen only in its own database.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Layer, Redacted } from "effect"
import { GENERATION_TABLES } from "../../src/db/chain-data.js"
import { pgClientLayer } from "../../src/db/database.js"
import { listGenerations, requestBuild, TEMPLATE_SCHEMA, templateShape } from "../../src/db/generations.js"
import { releaseWriterLock, tryWriterLock, writtenGenerations } from "../../src/db/writer-lock.js"
import { migratedDatabaseUrl, withScratchDb } from "../support/postgres.js"

const shapeOf = (schema: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ shape: string }>`select index_shape(${schema}) as shape`).pipe(
    Effect.map((rows) => rows[0]!.shape)
  )

const relations = (schema: string, kind: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ name: string }>`
      select relname as name from pg_class where relnamespace = ${schema}::regnamespace and relkind = ${kind} order by 1`
  ).pipe(Effect.map((rows) => rows.map((r) => r.name)))

describe("the index template and its shape", () => {
  it.live("holds every generation table and public's views; its shape is public's and public's recorded one", () =>
    withScratchDb(
      Effect.gen(function* () {
        expect(yield* relations(TEMPLATE_SCHEMA, "r")).toEqual([...GENERATION_TABLES].sort())
        expect(yield* relations(TEMPLATE_SCHEMA, "v")).toEqual(yield* relations("public", "v"))
        const shape = yield* templateShape
        expect(shape).toMatch(/^[0-9a-f]{32}$/)
        expect(yield* shapeOf("public")).toBe(shape)
        const [first] = yield* listGenerations
        expect(first).toMatchObject({ schema: "public", state: "active", shape, handoverRequestedAt: null })
      })
    )
  )

  it.live("a new generation is made like the template and records its shape", () =>
    withScratchDb(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        // The template changed by a migration: public keeps its old shape, the new generation has the new one.
        yield* sql`alter table index_template.market add column upgrade_note text not null default ''`
        const shape = yield* templateShape
        const { generation } = yield* requestBuild(Duration.seconds(1))
        expect(generation).toMatchObject({ schema: "index_2", shape })
        expect(yield* shapeOf("index_2")).toBe(shape)
        expect(yield* shapeOf("public")).not.toBe(shape)
        expect(yield* relations("index_2", "v")).toEqual(yield* relations(TEMPLATE_SCHEMA, "v"))
        const recorded = (yield* listGenerations).find((g) => g.schema === "index_2")
        expect(recorded?.shape).toBe(shape)
      })
    )
  )

  it.live("index_shape sees a changed column type, a dropped default, a new index; not a renamed index", () =>
    withScratchDb(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const base = yield* templateShape
        const changes = [
          "alter table index_template.trade alter column log_index type bigint",
          "alter table index_template.trade alter column log_index type integer",
          "create index trade_upgrade_idx on index_template.trade (block_number, log_index)",
          "alter index index_template.trade_upgrade_idx rename to trade_upgrade_renamed",
          "drop index index_template.trade_upgrade_renamed"
        ]
        const shapes: Array<string> = []
        for (const change of changes) {
          yield* sql.unsafe(change)
          shapes.push(yield* templateShape)
        }
        expect(shapes[0]).not.toBe(base) // a type changed
        expect(shapes[1]).toBe(base) // changed back
        expect(shapes[2]).not.toBe(base) // an index added
        expect(shapes[3]).toBe(shapes[2]) // an index's name is not its shape
        expect(shapes[4]).toBe(base) // dropped again
        yield* sql`alter table index_template.market alter column question drop not null`
        expect(yield* templateShape).not.toBe(base)
      })
    )
  )
})

describe("the writers' locks", () => {
  it.live("one writer per generation; pg_locks read for this database only", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const [one, other] = [yield* migratedDatabaseUrl, yield* migratedDatabaseUrl]
        // One pool per database for the whole test: a lock lives on a connection of it.
        const onDb = (url: string) =>
          Effect.map(
            Layer.build(pgClientLayer(Redacted.make(url))),
            (context) =>
              <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
                Effect.provide(effect, context)
          )
        const inOne = yield* onDb(one)
        const inOther = yield* onDb(other)
        const lock = yield* inOne(tryWriterLock(2))
        expect(lock).toBeDefined()
        // A second session of the same database cannot take it; another database's can (its own lock).
        expect(yield* inOne(tryWriterLock(2))).toBeUndefined()
        expect([...(yield* inOne(writtenGenerations))]).toEqual([2])
        // The cluster's pg_locks holds the other database's lock too: it is not a writer of this one.
        expect([...(yield* inOther(writtenGenerations))]).toEqual([])
        const there = yield* inOther(tryWriterLock(2))
        expect(there).toBeDefined()
        yield* releaseWriterLock(there!)
        yield* releaseWriterLock(lock!)
        expect([...(yield* inOne(writtenGenerations))]).toEqual([])
        const again = yield* inOne(tryWriterLock(2))
        expect(again).toBeDefined()
        yield* releaseWriterLock(again!)
      })
    )
  )
})
