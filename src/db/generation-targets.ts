/**
 * The read targets of an API process on the primary (`http/core/read-targets.ts`) over the
 * generations of the index (blue-green re-index, `generations.ts`); with read replicas they are
 * what serves when no replica is in rotation, and the primary of `read-replicas.ts`, which
 * replaces them as the process's `ReadTargets`. A routed request runs on the
 * pool of the generation its head is of, so every statement of it reads that one generation's
 * tables, even when a switch happens while it runs (`read-routing.ts` takes the head and the pool
 * in one step, when the request starts).
 *
 * Invariants:
 * - the head and the generation come together from the process's `IndexedHeads` (the pointer and
 *   that generation's checkpoint, read as one: `readActiveCheckpoint`), so an answer never claims
 *   a block of one generation while reading another's rows;
 * - the first generation (`public`) is read on the process's own pool; another's pool is opened
 *   the first time a head of it is seen and lives as long as the layer (a few connections a
 *   re-index; a retired generation's pool idles out, `idleTimeoutMillis`);
 * - writes and the backend's own tables go through `primary`: every generation's search path
 *   ends in public, so they are the same tables from any generation's pool;
 * - `primary` (and the `SqlClient` the servers get: `GenerationsLive`) is a client that takes each
 *   statement's connection, or each transaction's, from the pool of the generation the head is of
 *   when it starts: what runs outside a request (the WebSocket feeds, which read in one
 *   transaction; the notification consumer; health) follows the switch too, one generation per
 *   transaction;
 * - a version reads only a generation of its own shape (upgrades, docs/reindex.md): this process's
 *   shape is the template's when it starts (after its migrations); a routed request whose head is
 *   of a generation with another shape fails with 503 `ServiceUnavailable` saying "building" (this
 *   is the newest version: the template's shape is still its own, and its generation is being
 *   built) or "superseded" (a newer version migrated the template and switched), so a load
 *   balancer's health check (`/api/health` is routed too) moves traffic to the other version.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer } from "effect"
import { IndexedHeads } from "../../http/core/indexed-heads.js"
import { type ReadTarget, ReadTargets } from "../../http/core/read-targets.js"
import { ServiceUnavailable } from "../../schema/errors.js"
import { FIRST_GENERATION } from "../../schema/io/indexer-checkpoint.js"
import { openGenerationPool, templateShape } from "./generations.js"

/**
 * The read targets, and the `SqlClient` that follows the active generation. Needs the process's
 * `SqlClient`/`PgClient` (public's pool) and its `IndexedHeads`.
 */
export const GenerationsLive = Layer.scopedContext(
  Effect.gen(function* () {
    const own = yield* SqlClient.SqlClient
    const pg = yield* PgClient.PgClient
    const heads = yield* IndexedHeads
    const scope = yield* Effect.scope
    const url = pg.config.url
    const ownShape = yield* templateShape
    // Whether a generation has this version's shape, by schema: its shape never changes, so it is
    // read once; the verdict on another shape (building or superseded) is read again after a second.
    const shapes = new Map<string, string | null>()
    const verdicts = new Map<string, { readonly at: number; readonly refusal: ServiceUnavailable | undefined }>()
    const refusalOf = (schema: string): Effect.Effect<ServiceUnavailable | undefined> =>
      Effect.gen(function* () {
        const known = verdicts.get(schema)
        if (known !== undefined && (known.refusal === undefined || Date.now() - known.at < 1_000)) return known.refusal
        if (!shapes.has(schema)) {
          const rows = yield* own<{ shape: string | null }>`select shape from index_generation where schema_name = ${schema}`
          shapes.set(schema, rows[0]?.shape ?? null)
        }
        const shape = shapes.get(schema)
        let refusal: ServiceUnavailable | undefined
        if (shape !== null && shape !== undefined && shape !== ownShape) {
          const newest = (yield* Effect.provideService(templateShape, SqlClient.SqlClient, own)) === ownShape
          refusal = new ServiceUnavailable({
            message: newest
              ? `building: this version's index (a new generation of the derived tables) is being built; the version before serves until it switches`
              : `superseded: a newer version's index serves (generation ${schema}); this instance's version no longer reads it`
          })
        }
        verdicts.set(schema, { at: Date.now(), refusal })
        return refusal
      }).pipe(
        // A database that does not answer: the request's own statements will say so.
        Effect.catchAll(() => Effect.succeed(undefined))
      )
    // One pool per generation, opened once: the memo holds the opening (cached), so requests
    // that arrive together share it; a failed opening is forgotten and tried again.
    const pools = new Map<string, Effect.Effect<SqlClient.SqlClient, unknown>>()
    const poolOf = (schema: string): Effect.Effect<SqlClient.SqlClient, unknown> => {
      if (schema === FIRST_GENERATION || url === undefined) return Effect.succeed(own)
      const known = pools.get(schema)
      if (known !== undefined) return known
      const opening = Effect.runSync(
        Effect.cached(openGenerationPool(url, schema, scope).pipe(Effect.tapError(() => Effect.sync(() => pools.delete(schema)))))
      )
      pools.set(schema, opening)
      return opening
    }
    // A generation's pool that cannot be opened (the database gone at that very moment) is a
    // defect here: the one case a switch can answer 500. The next use opens it again.
    const current = Effect.suspend(() => Effect.orDie(poolOf(heads.latest()?.generation ?? FIRST_GENERATION)))
    const primary = yield* SqlClient.make({
      acquirer: Effect.flatMap(current, (sql) => sql.reserve),
      compiler: PgClient.makeCompiler(),
      spanAttributes: [["db.system", "postgresql"]]
    }).pipe(Effect.provide(Reactivity.layer))
    const targets = {
      pick: <A, E, R>(use: (target: ReadTarget) => Effect.Effect<A, E, R>): Effect.Effect<A, E | ServiceUnavailable, R> =>
        Effect.suspend(() => {
          const head = heads.latest()
          const schema = head?.generation ?? FIRST_GENERATION
          return Effect.flatMap(refusalOf(schema), (refusal): Effect.Effect<A, E | ServiceUnavailable, R> =>
            refusal !== undefined ? Effect.fail(refusal) : Effect.flatMap(Effect.orDie(poolOf(schema)), (sql) => use({ sql, head }))
          )
        }),
      head: heads.latest,
      primary,
      replicas: () => []
    }
    return Context.make(ReadTargets, targets).pipe(Context.add(SqlClient.SqlClient, primary))
  })
)
