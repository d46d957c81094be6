/**
 * Generations of the index (blue-green re-index, issue 31 item 2, docs/reindex.md): each build of
 * the derived tables lives in a schema of its own, and the pointer `index_generation` (migration
 * 0026) says which one serves. `public` is the first generation and the templates' home: a new
 * generation `index_<n>` gets a copy of every table of `GENERATION_TABLES` made `like` public's
 * (columns, defaults, checks, indexes; not foreign keys, which the derived tables have none of)
 * and of public's views, so migrations keep altering public's tables only.
 *
 * Invariants:
 * - at most one generation is active and at most one building (partial unique indexes); the
 *   pointer is the only thing that says which tables serve, and it changes in one transaction
 *   (`switchGeneration`), which also announces the new head on `predix_indexed`;
 * - a generation's connections use `search_path = <schema>, public`: unqualified names reach its
 *   derived tables first and the shared tables (the backend's own, the log store, the commit
 *   sequence) in public. The copies' defaults keep naming public's sequence
 *   (`indexer_commit_seq`), so commit positions never repeat across generations;
 * - a retired generation stays whole until `drop_after` (requests that started on it end first);
 *   `dropRetired` then drops its schema (public's derived tables are emptied instead), after the
 *   exports reading it have ended (`GENERATION_DROP_LOCK`).
 */
import { SqlClient } from "@effect/sql"
import { Context, Duration, Effect, Layer, type Redacted, type Scope } from "effect"
import { INDEXED_CHANNEL } from "../../schema/indexed-notify.js"
import { FIRST_GENERATION, readActiveCheckpoint, schemaIdent } from "../../schema/io/indexer-checkpoint.js"
import { GENERATION_DROP_LOCK, GENERATION_TABLES } from "./chain-data.js"
import { pgClientLayer } from "./database.js"

export type GenerationState = "building" | "active" | "retired" | "dropped"

export interface Generation {
  readonly n: number
  readonly schema: string
  readonly state: GenerationState
  readonly dropAfter: Date | null
  /** The shape it was built with (`index_shape` of the template when it was created). */
  readonly shape: string | null
  /** When a new version's builder asked the writer of the serving generation to hand over (set on the building one). */
  readonly handoverRequestedAt: Date | null
}

/** The search path of a generation's connections. */
export const generationSearchPath = (schema: string): ReadonlyArray<string> =>
  schema === FIRST_GENERATION ? [FIRST_GENERATION] : [schema, FIRST_GENERATION]

/** A pool of `schema`'s connections (its search path: that generation, then public), open while `scope` lasts. */
export const openGenerationPool = (url: Redacted.Redacted<string>, schema: string, scope: Scope.Scope) =>
  Effect.map(Layer.buildWithScope(pgClientLayer(url, undefined, generationSearchPath(schema)), scope), (built) =>
    Context.get(built, SqlClient.SqlClient)
  )

interface GenerationRow {
  n: number
  schema: string
  state: GenerationState
  drop_after: Date | null
  shape: string | null
  handover_requested_at: Date | null
}

const rowsOf = (rows: ReadonlyArray<GenerationRow>) =>
  rows.map((r): Generation => ({
    n: r.n,
    schema: r.schema,
    state: r.state,
    dropAfter: r.drop_after,
    shape: r.shape,
    handoverRequestedAt: r.handover_requested_at
  }))

/** Every generation the pointer lists, oldest first. */
export const listGenerations = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<GenerationRow>`
    select n, schema_name as schema, state, drop_after, shape, handover_requested_at from index_generation order by n`.pipe(
    Effect.map(rowsOf)
  )
)

/** The generation being built, if any. */
const buildingGeneration = Effect.map(listGenerations, (all) => all.find((g) => g.state === "building"))

/** The schema of the templates (migration 0027): what migrations alter, what new generations copy. */
export const TEMPLATE_SCHEMA = "index_template"

/**
 * The copies of the template's tables and views in `schema`, in the transaction in progress. Every
 * table of `index_template` is a generation table (GENERATION_TABLES; a migration that adds a
 * derived table adds it there).
 */
const createTables = (schema: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const target = schemaIdent(schema)
    yield* sql.unsafe(`create schema ${target}`)
    const tables = yield* sql<{ name: string }>`
      select c.relname as name from pg_class c
      where c.relnamespace = ${TEMPLATE_SCHEMA}::regnamespace and c.relkind = 'r' order by c.relname`
    for (const { name } of tables) {
      yield* sql.unsafe(`create table ${target}.${schemaIdent(name)} (like ${TEMPLATE_SCHEMA}.${schemaIdent(name)} including all)`)
    }
    // Views are read back as text with the template alone on the search path (its tables
    // unqualified, public's qualified), then created with the new schema first, so they read its tables.
    yield* sql.unsafe(`set local search_path = ${TEMPLATE_SCHEMA}`)
    const views = yield* sql<{ name: string; definition: string }>`
      select c.relname as name, pg_get_viewdef(c.oid) as definition
      from pg_class c where c.relnamespace = ${TEMPLATE_SCHEMA}::regnamespace and c.relkind = 'v' order by c.relname`
    yield* sql.unsafe(`set local search_path = ${target}, public`)
    for (const view of views) yield* sql.unsafe(`create view ${target}.${schemaIdent(view.name)} as ${view.definition}`)
    yield* sql.unsafe(`set local search_path = public`)
  })

/** The template's shape now (`index_shape`, migration 0027): what this version's code reads and writes. */
export const templateShape = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ shape: string }>`select index_shape(${TEMPLATE_SCHEMA}) as shape`.pipe(Effect.map((rows) => rows[0]!.shape))
)

/**
 * A new generation marked building, its schema and tables created, in one transaction; the one
 * already building when there is one (a build that stopped resumes from its own checkpoint).
 */
export const requestBuild = (grace: Duration.Duration) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(
      Effect.gen(function* () {
        yield* sql`lock table index_generation in exclusive mode`
        const all = yield* listGenerations
        const building = all.find((g) => g.state === "building")
        if (building !== undefined) return { generation: building, created: false }
        const n = Math.max(0, ...all.map((g) => g.n)) + 1
        const schema = `index_${n}`
        const shape = yield* templateShape
        yield* sql`insert into index_generation (n, schema_name, state, grace_ms, shape)
          values (${n}, ${schema}, 'building', ${Duration.toMillis(grace)}, ${shape})`
        yield* createTables(schema)
        return {
          generation: { n, schema, state: "building", dropAfter: null, shape, handoverRequestedAt: null } satisfies Generation,
          created: true
        }
      })
    )
  )

/** Drops the generation being built, if any (its schema and its row). */
export const discardBuilding = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.withTransaction(
    Effect.gen(function* () {
      const building = yield* buildingGeneration
      if (building === undefined) return undefined
      yield* sql.unsafe(`drop schema if exists ${schemaIdent(building.schema)} cascade`)
      yield* sql`delete from index_generation where n = ${building.n}`
      return building
    })
  )
)

/**
 * The switch, one transaction: `schema` (building) becomes active, the active one retired until
 * now + the grace period asked for with the build, and the new head announced with its generation (`predix_indexed`), so API
 * processes move to it at once (their checkpoint poll catches a missed notification). Fails when
 * `schema` is not the generation being built.
 */
export const switchGeneration = (chainId: number, schema: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(
      Effect.gen(function* () {
        yield* sql`lock table index_generation in exclusive mode`
        const building = yield* sql<{ grace_ms: string }>`
          select grace_ms::text from index_generation where schema_name = ${schema} and state = 'building'`
        if (building[0] === undefined) return yield* Effect.dieMessage(`generation ${schema} is not being built`)
        // The one active first retired: at most one is active at any point (a unique index).
        yield* sql`update index_generation set state = 'retired', drop_after = now() + ${`${building[0].grace_ms} milliseconds`}::interval
          where state = 'active'`
        yield* sql`update index_generation set state = 'active', activated_at = now() where schema_name = ${schema}`
        const { checkpoint } = yield* readActiveCheckpoint(chainId)
        if (checkpoint !== undefined) {
          const payload = JSON.stringify({ chainId, block: checkpoint.block, hash: checkpoint.hash, reverted: false, generation: schema })
          yield* sql`select pg_notify(${INDEXED_CHANNEL}, ${payload})`
        }
      })
    )
  )

/**
 * Drops the retired generations whose grace period is over (all of them with `now`): their schema,
 * or public's derived tables emptied (public also holds the shared tables). Returns their names.
 */
export const dropRetired = (now: boolean) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.gen(function* () {
      const due = yield* sql<{ n: number; schema: string }>`
        select n, schema_name as schema from index_generation
        where state = 'retired' and (${now} or drop_after <= now()) order by n`
      for (const g of due) {
        yield* sql.withTransaction(
          Effect.gen(function* () {
            // Exports reading it end first (`GENERATION_DROP_LOCK`): a drop never lands under a snapshot.
            yield* sql`select pg_advisory_xact_lock(${GENERATION_DROP_LOCK})`
            if (g.schema === FIRST_GENERATION) yield* sql.unsafe(`truncate ${GENERATION_TABLES.map((t) => `public."${t}"`).join(", ")}`)
            else yield* sql.unsafe(`drop schema if exists ${schemaIdent(g.schema)} cascade`)
            yield* sql`update index_generation set state = 'dropped' where n = ${g.n}`
          })
        )
      }
      return due.map((g) => g.schema)
    })
  )
