/**
 * The read targets of an API process without read replicas (`http/core/read-targets.ts`) over the
 * generations of the index (blue-green re-index, `generations.ts`): a routed request runs on the
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
 * - writes and the backend's own tables stay on the process's pool (`primary`): every
 *   generation's search path ends in public, so they are the same tables either way.
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer } from "effect"
import { IndexedHeads } from "../../http/core/indexed-heads.js"
import { ReadTargets } from "../../http/core/read-targets.js"
import { FIRST_GENERATION } from "../../schema/io/indexer-checkpoint.js"
import { pgClientLayer } from "./database.js"
import { generationSearchPath } from "./generations.js"

/** Needs the process's `SqlClient`/`PgClient` (the primary) and its `IndexedHeads`. */
export const GenerationTargetsLive = Layer.scoped(
  ReadTargets,
  Effect.gen(function* () {
    const primary = yield* SqlClient.SqlClient
    const pg = yield* PgClient.PgClient
    const heads = yield* IndexedHeads
    const scope = yield* Effect.scope
    const url = pg.config.url
    // One pool per generation, opened once: the memo holds the opening (cached), so requests
    // that arrive together share it; a failed opening is forgotten and tried again.
    const pools = new Map<string, Effect.Effect<SqlClient.SqlClient, unknown>>()
    const poolOf = (schema: string): Effect.Effect<SqlClient.SqlClient, unknown> => {
      if (schema === FIRST_GENERATION || url === undefined) return Effect.succeed(primary)
      const known = pools.get(schema)
      if (known !== undefined) return known
      const opening = Effect.runSync(
        Effect.cached(
          Layer.buildWithScope(pgClientLayer(url, undefined, generationSearchPath(schema)), scope).pipe(
            Effect.map((built) => Context.get(built, SqlClient.SqlClient)),
            Effect.tapError(() => Effect.sync(() => pools.delete(schema)))
          )
        )
      )
      pools.set(schema, opening)
      return opening
    }
    return {
      pick: Effect.suspend(() => {
        const head = heads.latest()
        // A generation's pool that cannot be opened (the database gone at that very moment) is
        // a defect here: the one case a switch can answer 500. Its next request opens it again.
        return Effect.map(Effect.orDie(poolOf(head?.generation ?? FIRST_GENERATION)), (sql) => ({ sql, head }))
      }),
      head: heads.latest,
      primary,
      replicas: () => []
    }
  })
)
