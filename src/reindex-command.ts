/**
 * `predix reindex`: asks the running indexer for a blue-green re-index (docs/reindex.md) and
 * follows it to the switch; `--drop-retired` and `--discard` act on the pointer at once.
 *
 * The command talks to the running service's database (DATABASE_URL, or the embedded cluster's
 * `connection.json`, as `predix export` finds it); the build itself runs in the service's indexer
 * (`src/blue-green.ts`), which alone can stop its serving follower between two commits.
 */
import { SqlClient } from "@effect/sql"
import { Console, Duration, Effect, Redacted } from "effect"
import { schemaIdent } from "../schema/io/indexer-checkpoint.js"
import { exportSource } from "./analytics/source.js"
import { AppConfig } from "./config.js"
import { pgClientLayer } from "./db/database.js"
import { discardBuilding, dropRetired, listGenerations, requestBuild } from "./db/generations.js"

export interface ReindexArgs {
  /** How long the retired generation stays after the switch. */
  readonly grace: Duration.Duration
  readonly dropRetired: boolean
  readonly discard: boolean
  /** Return once the build is asked for, without following it. */
  readonly detach: boolean
}

/** The block a generation's checkpoint holds (-1 before its first commit). */
const checkpointOf = (chainId: number, schema: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe<{ block: string }>(`select block_number::text as block from ${schemaIdent(schema)}.indexer_checkpoint where chain_id = $1`, [
      chainId
    ])
  ).pipe(Effect.map((rows) => (rows[0] === undefined ? -1 : Number(rows[0].block))))

const run = (args: ReindexArgs) =>
  Effect.gen(function* () {
    const { chainId } = yield* AppConfig
    if (args.dropRetired) {
      const dropped = yield* dropRetired(true)
      return yield* Console.log(dropped.length === 0 ? "no retired generation" : `dropped: ${dropped.join(", ")}`)
    }
    if (args.discard) {
      const discarded = yield* discardBuilding
      return yield* Console.log(discarded === undefined ? "no generation is being built" : `discarded: ${discarded.schema}`)
    }
    const { generation, created } = yield* requestBuild(args.grace)
    yield* Console.log(
      `${created ? "asked for" : "already building"}: generation ${generation.n} (schema ${generation.schema}); the running indexer builds it from the log store and switches the APIs to it`
    )
    if (args.detach) return
    const started = Date.now()
    let shown = -2
    for (;;) {
      const all = yield* listGenerations
      const mine = all.find((g) => g.n === generation.n)
      if (mine === undefined || mine.state === "dropped") return yield* Console.log(`generation ${generation.n} was discarded`)
      if (mine.state !== "building") {
        return yield* Console.log(
          `switched: generation ${generation.n} serves at block ${yield* checkpointOf(chainId, mine.schema)} (${((Date.now() - started) / 1000).toFixed(1)} s)`
        )
      }
      const at = yield* checkpointOf(chainId, mine.schema)
      if (at !== shown) {
        const active = all.find((g) => g.state === "active")
        const serving = active === undefined ? -1 : yield* checkpointOf(chainId, active.schema)
        yield* Console.log(`building: block ${at} of ${serving}`)
        shown = at
      }
      yield* Effect.sleep(Duration.seconds(1))
    }
  })

export const reindex = (args: ReindexArgs) =>
  Effect.flatMap(exportSource, (source) => run(args).pipe(Effect.provide(pgClientLayer(Redacted.make(source.url))))).pipe(Effect.scoped)
