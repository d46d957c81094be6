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
import { FIRST_GENERATION, readCheckpoint } from "../schema/io/indexer-checkpoint.js"
import {
  discardBuilding,
  dropRetired,
  type Generation,
  listGenerations,
  openGenerationPool,
  requestBuild,
  switchGeneration,
  templateShape
} from "./db/generations.js"
import { releaseWriterLock, tryWriterLock, writerLock, writtenGenerations } from "./db/writer-lock.js"

/** A catch-up pass that had at most this many blocks to do is the last before the handover. */
const HANDOVER_BLOCKS = 64

/** How often the pointer is read for a build to start and the retired generations to drop. */
const WATCH_EVERY = Duration.seconds(1)

/** How long the generation an upgrade replaces stays after the switch (`predix reindex`'s default too). */
const DEFAULT_GRACE = Duration.minutes(10)

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

    // This version's shape: the template's as this process's migrations left it. A newer version
    // migrates the template further; the shapes then differ and this process is the old version.
    const myShape = yield* healing("starting", templateShape)
    const locks = new Map<string, Scope.CloseableScope>()
    const lockOf = (generation: Generation) =>
      Effect.gen(function* () {
        if (locks.has(generation.schema)) return
        locks.set(generation.schema, yield* healing("locking", writerLock(generation.n)))
      })
    const unlock = (schema: string) =>
      Effect.suspend(() => {
        const lock = locks.get(schema)
        locks.delete(schema)
        return lock === undefined ? Effect.void : releaseWriterLock(lock)
      })
    yield* Effect.addFinalizer(() => Effect.forEach([...locks.keys()], unlock, { discard: true }))

    /** A building generation of another version whose builder (alive: it holds its lock) asks this writer to hand over. */
    const handoverAsked = (all: ReadonlyArray<Generation>) =>
      Effect.gen(function* () {
        const asking = all.find((g) => g.state === "building" && g.shape !== myShape && g.handoverRequestedAt !== null)
        if (asking === undefined) return false
        return (yield* writtenGenerations).has(asking.n)
      })

    /**
     * Waits for what the serving writer must do next: build a generation of this version marked
     * building, or hand over to another version's builder; drops the retired generations whose time has come.
     */
    const nextEvent = Effect.gen(function* () {
      for (;;) {
        // One statement a second while nothing is due (the work budget counts them).
        const all = yield* listGenerations
        if (all.some((g) => g.state === "retired" && g.dropAfter !== null && g.dropAfter.getTime() <= Date.now())) {
          const dropped = yield* dropRetired(false)
          if (dropped.length > 0)
            yield* Effect.logInfo("retired generations dropped").pipe(Effect.annotateLogs({ schemas: dropped.join(",") }))
        }
        const building = all.find((g) => g.state === "building")
        if (building !== undefined && (building.shape === null || building.shape === myShape)) return { build: building }
        if (yield* handoverAsked(all)) return { handover: true as const }
        yield* Effect.sleep(WATCH_EVERY)
      }
    })

    /**
     * Builds `target` beside `serving` and switches; returns the new generation and its indexer.
     * `following` is this process's follower of `serving`, if it has one; without, the serving
     * generation's writer (another version's process, or none) is asked to hand over.
     */
    const build = (target: Generation, serving: Generation, following: Fiber.RuntimeFiber<unknown, unknown> | undefined) =>
      Effect.gen(function* () {
        yield* lockOf(target)
        const next = yield* attach(target.schema)
        const old = yield* attach(serving.schema)
        yield* Effect.logInfo("building a generation").pipe(
          Effect.annotateLogs({ schema: target.schema, serving: serving.schema, writer: following === undefined ? "other" : "own" })
        )
        const started = performance.now()
        // The process's CPU over the build (the serving indexer's share included until the handover).
        const cpuBefore = process.cpuUsage()
        /** Stops the serving generation's writer between two commits: this process's follower, or the other process's (asked, then its lock taken). */
        const stopServingWriter = Effect.gen(function* () {
          if (following !== undefined) return yield* Fiber.interrupt(following)
          const sql = yield* SqlClient.SqlClient
          yield* healing("handover", sql`update index_generation set handover_requested_at = now() where n = ${target.n}`)
          yield* Effect.logInfo("handover asked of the serving writer").pipe(Effect.annotateLogs({ schema: serving.schema }))
          yield* lockOf(serving)
          yield* Effect.logInfo("the serving writer handed over").pipe(Effect.annotateLogs({ schema: serving.schema }))
        })
        const switched = (window: number | undefined) =>
          Effect.logInfo("generation switched").pipe(
            Effect.annotateLogs({
              schema: target.schema,
              retired: serving.schema,
              block: window ?? "",
              build_s: Math.round((performance.now() - started) / 100) / 10,
              cpu_s: (() => {
                const used = process.cpuUsage(cpuBefore)
                return Math.round((used.user + used.system) / 1e5) / 10
              })()
            })
          )
        // Killed between reaching the old tip and the switch: the switch is all that was left.
        const resumedPast = (yield* checkpointBlock(next)) >= (yield* checkpointBlock(old)) && (yield* checkpointBlock(old)) >= 0
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
          // 1. catch-up passes while the serving writer follows
          for (;;) {
            const pass = yield* passTo(yield* checkpointBlock(old))
            if (pass.to - pass.from <= HANDOVER_BLOCKS) break
          }
          // 2. handover: the serving writer stops at its tip, the new generation reaches it
          yield* stopServingWriter
          const tip = yield* checkpointBlock(old)
          const { to: finalized } = yield* passTo(tip)
          yield* on(old)(healing("handover", deleteStoredAbove(chainId, finalized)))
          const follower = yield* indexerOn(next, false)
          let window = yield* on(next)(healing("handover", follower.loadWindow))
          while (window.tip.number < tip) {
            window = yield* on(next)(healing("handover", follower.step(window)))
            if (window.tip.number < tip) yield* Effect.sleep(Duration.millis(options.pollInterval ?? 1000))
          }
          yield* healing("switching", switchGeneration(chainId, target.schema))
          yield* switched(window.tip.number)
          yield* detach(old)
          yield* unlock(serving.schema)
          return { generation: next, indexer: follower }
        }
        yield* stopServingWriter
        yield* healing("switching", switchGeneration(chainId, target.schema))
        yield* switched(undefined)
        yield* detach(old)
        yield* unlock(serving.schema)
        return { generation: next, indexer: yield* indexerOn(next, false) }
      })

    /** Follows `active` (this process its writer) until it hands over to another version's builder; builds and switches to this version's generations meanwhile. */
    const serve = (active: Generation) =>
      Effect.gen(function* () {
        let generation = active
        let attached = yield* attach(active.schema)
        let indexer = yield* indexerOn(attached, false)
        for (;;) {
          const following = yield* Effect.fork(on(attached)(indexer.follow))
          // The follower only ends by failing (a reorg deeper than the window): that ends this too.
          const event = yield* Effect.raceFirst(
            Effect.flatMap(Fiber.join(following), () => Effect.never),
            healing("watching", nextEvent)
          )
          if ("handover" in event) {
            yield* Fiber.interrupt(following)
            yield* detach(attached)
            yield* unlock(generation.schema)
            return yield* Effect.logInfo("handed over to a new version's builder").pipe(Effect.annotateLogs({ schema: generation.schema }))
          }
          const built = yield* build(event.build, generation, following)
          yield* detach(attached)
          generation = { ...event.build, state: "active" }
          attached = built.generation
          indexer = built.indexer
        }
      })

    /**
     * What this process does next, from the pointer: serve the active generation when it has this
     * version's shape; build one of this version's shape when this is the newest version (the
     * template's shape is its own); wait otherwise (an old version, superseded, or one that
     * handed over and waits to see the build switch or die).
     */
    let superseded = false
    for (;;) {
      const all = yield* healing("watching", listGenerations)
      const active = all.find((g) => g.state === "active") ?? {
        n: 1,
        schema: FIRST_GENERATION,
        state: "active",
        dropAfter: null,
        shape: null,
        handoverRequestedAt: null
      }
      const building = all.find((g) => g.state === "building")
      const written = yield* healing("watching", writtenGenerations)
      if (active.shape === null || active.shape === myShape) {
        // The writer's lock, unless a new version's live builder has it or asks for it.
        const waiting =
          building !== undefined && building.shape !== myShape && building.handoverRequestedAt !== null && written.has(building.n)
        if (!waiting && !locks.has(active.schema)) {
          const lock = yield* healing("locking", tryWriterLock(active.n))
          if (lock !== undefined) locks.set(active.schema, lock)
        }
        if (!waiting && locks.has(active.schema)) {
          // Read again under the lock: the pointer may have moved meanwhile.
          const now = (yield* healing("watching", listGenerations)).find((g) => g.state === "active")
          if (now?.n === active.n) {
            yield* serve(active)
            continue
          }
          yield* unlock(active.schema)
        }
      } else if (myShape === (yield* healing("watching", templateShape))) {
        // The newest version, and the active generation is of an older one: build this version's.
        if (building !== undefined && building.shape !== myShape && !written.has(building.n)) {
          const discarded = yield* healing("watching", discardBuilding)
          yield* Effect.logInfo("discarded another version's abandoned build").pipe(
            Effect.annotateLogs({ schema: discarded?.schema ?? "" })
          )
        } else if (building === undefined || building.shape === myShape) {
          const target = building ?? (yield* healing("watching", requestBuild(DEFAULT_GRACE))).generation
          if (building === undefined)
            yield* Effect.logInfo("a migration changed the derived tables: building a new generation").pipe(
              Effect.annotateLogs({ schema: target.schema, serving: active.schema })
            )
          if (!written.has(target.n)) {
            const built = yield* build(target, active, undefined)
            yield* detach(built.generation)
            continue
          }
        }
      } else if (!superseded) {
        superseded = true
        yield* Effect.logInfo("superseded: the active generation is of a newer version; this indexer writes nothing").pipe(
          Effect.annotateLogs({ schema: active.schema })
        )
      }
      yield* Effect.sleep(WATCH_EVERY)
    }
  }).pipe(Effect.scoped)
