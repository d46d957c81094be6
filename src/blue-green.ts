/**
 * The indexer of a database with generations (blue-green re-index, docs/reindex.md): it follows
 * the chain into the active generation and, when one is marked building (`predix reindex`,
 * `src/db/generations.ts`), builds it beside the serving one from the log store, hands over and
 * switches, then follows the chain into the new one.
 *
 * The build, while the serving indexer keeps following the tip:
 * 1. catch-up passes: the new generation's backfill from the log store up to the lower of the
 *    node's finalized block and the serving generation's checkpoint (blocks the serving indexer
 *    committed, so the store holds them; holes are fetched and stored), again while a pass had
 *    more than `HANDOVER_BLOCKS` to do. It never deletes store rows (`sharedStore`): those above
 *    its target are the serving indexer's;
 * 2. handover: the serving indexer is stopped (between commits: each is one transaction) at its
 *    tip T; a last pass brings the new generation to F, the finalized block (at most T); the
 *    store's rows above F (the serving generation's unfinalized tip blocks, one row each) are
 *    deleted, and the new generation's own indexer follows the tip from F with undo images and
 *    the store written, as any indexer does, until it reaches T;
 * 3. switch: one transaction moves the pointer and announces the new head; the new generation's
 *    indexer goes on following the tip. The APIs kept serving the old generation, frozen at T,
 *    from step 2 until the switch: nothing failed, answers only aged by that long.
 *
 * Failures: a build that fails is retried (`healing`) from its own checkpoint. A process killed
 * during the handover restarts on the old generation, whose store rows above F are gone (a
 * re-index fetches such holes from the node); when the new generation's checkpoint is already at
 * or past the old one's (killed between reaching T and the switch), the switch is made at once,
 * so the old indexer never writes store rows the new one wrote.
 *
 * Retired generations are dropped here once their grace period is over (`dropRetired`).
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, ExecutionStrategy, Exit, Fiber, Scope } from "effect"
import { healing, makeIndexer, type IndexerOptions } from "../pipeline/run.js"
import { deleteStoredAbove } from "../pipeline/log-store/store-sql.js"
import { FIRST_GENERATION, readActiveGeneration, readCheckpoint } from "../schema/io/indexer-checkpoint.js"
import { dropRetired, type Generation, listGenerations, openGenerationPool, switchGeneration } from "./db/generations.js"

/** A catch-up pass that had at most this many blocks to do is the last before the handover. */
const HANDOVER_BLOCKS = 64

/** How often the pointer is read for a build to start and the retired generations to drop. */
const WATCH_EVERY = Duration.seconds(1)

export interface GenerationsOptions<E, R> extends Omit<IndexerOptions, "sharedStore"> {
  /** Runs on each generation's connections before its indexer starts (claims it for the deployment); its failure ends the indexing. */
  readonly prepare: Effect.Effect<unknown, E, R>
}

/** One generation's connections (the process's own for public), and the scope that closes them. */
interface Attached {
  readonly schema: string
  readonly sql: SqlClient.SqlClient
  readonly scope: Scope.CloseableScope | undefined
}

export const followGenerations = <E, R>(options: GenerationsOptions<E, R>) =>
  Effect.gen(function* () {
    const primary = yield* SqlClient.SqlClient
    const pg = yield* PgClient.PgClient
    const scope = yield* Effect.scope
    const { chainId } = options

    const attach = (schema: string) =>
      Effect.gen(function* () {
        if (schema === FIRST_GENERATION) return { schema, sql: primary, scope: undefined } satisfies Attached
        const url = pg.config.url
        if (url === undefined) return yield* Effect.dieMessage("the database URL is unknown: cannot open a generation's pool")
        const child = yield* Scope.fork(scope, ExecutionStrategy.sequential)
        const sql = yield* openGenerationPool(url, schema, child)
        return { schema, sql, scope: child } satisfies Attached
      })
    const on =
      (generation: Attached) =>
      <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        Effect.provideService(effect, SqlClient.SqlClient, generation.sql)
    const detach = (generation: Attached) => (generation.scope === undefined ? Effect.void : Scope.close(generation.scope, Exit.void))
    const checkpointBlock = (generation: Attached) => on(generation)(Effect.map(readCheckpoint(chainId), (c) => c?.block ?? -1))
    const indexerOn = (generation: Attached, sharedStore: boolean) =>
      on(generation)(Effect.zipRight(options.prepare, makeIndexer({ ...options, sharedStore })))

    /** Waits for a generation to be marked building, dropping retired ones whose time has come. */
    const nextBuild = Effect.gen(function* () {
      for (;;) {
        // One statement a second while nothing is due (the work budget counts them).
        const all = yield* listGenerations
        if (all.some((g) => g.state === "retired" && g.dropAfter !== null && g.dropAfter.getTime() <= Date.now())) {
          const dropped = yield* dropRetired(false)
          if (dropped.length > 0)
            yield* Effect.logInfo("retired generations dropped").pipe(Effect.annotateLogs({ schemas: dropped.join(",") }))
        }
        const building = all.find((g) => g.state === "building")
        if (building !== undefined) return building
        yield* Effect.sleep(WATCH_EVERY)
      }
    })

    /** Builds `target` beside `serving` (whose follower is `following`), hands over and switches; returns the new generation and its indexer. */
    const build = (target: Generation, serving: Attached, following: Fiber.RuntimeFiber<unknown, unknown>) =>
      Effect.gen(function* () {
        const next = yield* attach(target.schema)
        yield* Effect.logInfo("building a generation").pipe(Effect.annotateLogs({ schema: target.schema, serving: serving.schema }))
        const started = performance.now()
        // The process's CPU over the build (the serving indexer's share included until the handover).
        const cpuBefore = process.cpuUsage()
        // Killed between reaching the old tip and the switch: the switch is all that was left.
        const resumedPast = (yield* checkpointBlock(next)) >= (yield* checkpointBlock(serving)) && (yield* checkpointBlock(serving)) >= 0
        if (!resumedPast) {
          const builder = yield* indexerOn(next, true)
          const latest = () => healing("building", options.rpc.header("latest"))
          const passTo = (stop: number) =>
            Effect.gen(function* () {
              const head = (yield* latest()).number
              const to = Math.min(yield* healing("building", builder.finalizedHead), stop, head)
              const from = yield* checkpointBlock(next)
              yield* on(next)(healing("building", builder.indexTo(to, head)))
              return { from, to }
            })
          // 1. catch-up passes while the serving indexer follows
          for (;;) {
            const pass = yield* passTo(yield* checkpointBlock(serving))
            if (pass.to - pass.from <= HANDOVER_BLOCKS) break
          }
          // 2. handover: the serving indexer stops at its tip, the new generation reaches it
          yield* Fiber.interrupt(following)
          const tip = yield* checkpointBlock(serving)
          const { to: finalized } = yield* passTo(tip)
          yield* on(serving)(healing("handover", deleteStoredAbove(chainId, finalized)))
          const follower = yield* indexerOn(next, false)
          let window = yield* on(next)(healing("handover", follower.loadWindow))
          while (window.tip.number < tip) {
            window = yield* on(next)(healing("handover", follower.step(window)))
            if (window.tip.number < tip) yield* Effect.sleep(Duration.millis(options.pollInterval ?? 1000))
          }
          yield* healing("switching", switchGeneration(chainId, target.schema))
          yield* Effect.logInfo("generation switched").pipe(
            Effect.annotateLogs({
              schema: target.schema,
              retired: serving.schema,
              block: window.tip.number,
              build_s: Math.round((performance.now() - started) / 100) / 10,
              cpu_s: (() => {
                const used = process.cpuUsage(cpuBefore)
                return Math.round((used.user + used.system) / 1e5) / 10
              })()
            })
          )
          return { generation: next, indexer: follower }
        }
        yield* Fiber.interrupt(following)
        yield* healing("switching", switchGeneration(chainId, target.schema))
        yield* Effect.logInfo("generation switched (its build had reached the serving tip)").pipe(
          Effect.annotateLogs({ schema: target.schema, retired: serving.schema })
        )
        return { generation: next, indexer: yield* indexerOn(next, false) }
      })

    let serving = yield* attach(yield* healing("starting", readActiveGeneration))
    let indexer = yield* indexerOn(serving, false)
    for (;;) {
      const following = yield* Effect.fork(on(serving)(indexer.follow))
      // The follower only ends by failing (a reorg deeper than the window): that ends this too.
      const target = yield* Effect.raceFirst(
        Effect.flatMap(Fiber.join(following), () => Effect.never),
        healing("watching", nextBuild)
      )
      const built = yield* build(target, serving, following)
      yield* detach(serving)
      serving = built.generation
      indexer = built.indexer
    }
  }).pipe(Effect.scoped)
