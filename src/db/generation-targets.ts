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
 *   transaction.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer } from "effect"
import { IndexedHeads } from "../../http/core/indexed-heads.js"
import { type ReadTarget, ReadTargets } from "../../http/core/read-targets.js"
import { FIRST_GENERATION } from "../../schema/io/indexer-checkpoint.js"
import { openGenerationPool } from "./generations.js"

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
      pick: <A, E, R>(use: (target: ReadTarget) => Effect.Effect<A, E, R>) =>
        Effect.suspend(() => {
          const head = heads.latest()
          return Effect.flatMap(Effect.orDie(poolOf(head?.generation ?? FIRST_GENERATION)), (sql) => use({ sql, head }))
        }),
      head: heads.latest,
      primary,
      replicas: () => []
    }
    return Context.make(ReadTargets, targets).pipe(Context.add(SqlClient.SqlClient, primary))
  })
)
