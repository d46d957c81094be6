/**
 * The read targets of an API process (`http/core/read-targets.ts`) over the replicas of
 * `DATABASE_READ_URL`, following the generations of the index (blue-green re-index,
 * `generations.ts`). Every `pollEveryMs` one poll reads the pointer and the active generation's
 * checkpoint (`readActiveCheckpoint`) on the primary and on every replica, and judges each replica:
 *
 * - in rotation when it answered, its active generation is the primary's, and its checkpoint in
 *   that generation trails the primary's by at most `maxLagBlocks`;
 * - out otherwise (unreachable, checkpoint unreadable, on another generation because it has not
 *   replayed a switch yet, too far behind), with the reason.
 *
 * Invariants:
 * - a replica's head is read with its own pointer: the generation and the checkpoint it has
 *   replayed, never the primary's, so a claim is always about rows that replica holds;
 * - every replica in rotation is on one generation (the primary's as read at that poll), and the
 *   head claimed is the lowest of theirs, with that generation; with none in rotation the
 *   primary's targets (`GenerationsLive`: its active generation, its own head) serve;
 * - a request runs to its end on the pool it started on: one pool per (replica, generation),
 *   opened with that generation's search path; a pool whose generation the replica left is
 *   closed once the last request on it ends (`users` counts them), not before;
 * - a replica's base pool (the default search path) reads its pointer and serves `public`; it
 *   lives as long as the layer.
 *
 * Why polling: a hot standby's sessions hear no NOTIFY (notifications are not WAL-logged), so the
 * only way to know what a replica holds is to read its own pointer and checkpoint; between two
 * reads they only move forward (WAL replay), short of a reorg the next read sees.
 *
 * A replica that does not answer at start does not stop the process: its pool is built again at
 * the next polls until it answers.
 */
import { SqlClient } from "@effect/sql"
import type { PgClient } from "@effect/sql-pg"
import { Context, Duration, Effect, ExecutionStrategy, Exit, Layer, Redacted, Schedule, Scope } from "effect"
import type { IndexedHead } from "../../http/core/indexed-heads.js"
import { type ReadTarget, type ReplicaState, ReadTargets } from "../../http/core/read-targets.js"
import { FIRST_GENERATION, readActiveCheckpoint } from "../../schema/io/indexer-checkpoint.js"
import { pgClientLayer } from "./database.js"
import { openGenerationPool } from "./generations.js"

export interface ReadReplicasOptions {
  readonly chainId: number
  readonly urls: ReadonlyArray<Redacted.Redacted<string>>
  /** Blocks a replica may trail the primary's checkpoint by and stay in rotation. */
  readonly maxLagBlocks: number
  /** How often the checkpoints are read (default 1 s). */
  readonly pollEveryMs?: number
}

/** How long one checkpoint read may take before the replica counts as unreachable. */
const READ_DEADLINE = "1500 millis"

/** `host:port/database` of a URL: what health names a replica by (no user, no password). */
export const replicaName = (url: Redacted.Redacted<string>): string => {
  try {
    const parsed = new URL(Redacted.value(url))
    return `${parsed.host}${parsed.pathname}`
  } catch {
    return "replica"
  }
}

/** One generation's pool on one replica. */
interface GenerationPool {
  readonly generation: string
  readonly sql: SqlClient.SqlClient
  /** What closes it; undefined for `public`, served by the replica's base pool. */
  readonly scope: Scope.CloseableScope | undefined
  /** Requests running on it now. */
  users: number
  /** Its replica has left its generation: closed once `users` is 0. */
  retired: boolean
}

interface Replica {
  readonly name: string
  readonly url: Redacted.Redacted<string>
  /** The base pool: reads the pointer, serves `public`. */
  base: SqlClient.SqlClient | null
  /** The pool of the generation the replica serves (its active one at the last poll that read it). */
  pool: GenerationPool | null
  state: ReplicaState
  head: IndexedHead | null
}

/** What the primary holds: its active generation and that generation's checkpoint block (-1 before the first). */
interface PrimaryRead {
  readonly generation: string
  readonly block: number
}

/** The active generation and its head on `sql`, or the reason they could not be read. */
const activeHeadOn = (sql: SqlClient.SqlClient, chainId: number) =>
  readActiveCheckpoint(chainId).pipe(
    Effect.map(({ generation, checkpoint }) => ({
      generation,
      head: checkpoint === undefined ? null : ({ block: checkpoint.block, hash: checkpoint.hash, generation } satisfies IndexedHead)
    })),
    Effect.provideService(SqlClient.SqlClient, sql),
    Effect.timeoutFail({ duration: READ_DEADLINE, onTimeout: () => "did not answer in time" }),
    Effect.mapError((error) => (typeof error === "string" ? error : `does not answer: ${error.message}`)),
    Effect.either
  )

/**
 * The read targets over `options.urls`. Needs the primary's targets (`ReadTargets` of
 * `GenerationsLive`: its active generation, what serves when no replica is in rotation, and the
 * client writes and own tables use).
 */
export const ReadReplicasLive = (options: ReadReplicasOptions) =>
  Layer.scoped(
    ReadTargets,
    Effect.gen(function* () {
      const onPrimary = yield* ReadTargets
      const scope = yield* Effect.scope
      const replicas: Array<Replica> = options.urls.map((url) => ({
        name: replicaName(url),
        url,
        base: null,
        pool: null,
        head: null,
        state: { name: replicaName(url), inRotation: false, indexedBlock: null, lagBlocks: null, problem: "not polled yet" }
      }))
      // The head the replicas in rotation claim: the lowest of theirs, of their one generation.
      let served: IndexedHead | null = null
      let next = 0
      // The primary's generation as last read: the one replicas must be on (a failed read keeps it).
      let primaryGeneration = onPrimary.head()?.generation ?? FIRST_GENERATION

      const inRotation = () => replicas.filter((r) => r.state.inRotation && r.pool !== null)
      const servedHead = (): IndexedHead | null => {
        const rotating = inRotation()
        let lowest: IndexedHead | null = null
        for (const r of rotating) if (r.head === null || lowest === null || r.head.block < lowest.block) lowest = r.head
        // A replica in rotation with no index yet holds nothing to claim.
        return rotating.some((r) => r.head === null) ? null : lowest
      }

      /** A fresh scope under the layer's: what one pool lives in. */
      const childScope = Scope.fork(scope, ExecutionStrategy.sequential)

      /** The base pool for `replica`, or why it could not be built. */
      const connect = (replica: Replica) =>
        Effect.gen(function* () {
          const child = yield* childScope
          const built = yield* Layer.buildWithScope(pgClientLayer(replica.url), child).pipe(Effect.either)
          if (built._tag === "Left") {
            yield* Scope.close(child, Exit.void)
            return `does not answer: ${built.left.message}`
          }
          replica.base = Context.get(built.right as Context.Context<PgClient.PgClient | SqlClient.SqlClient>, SqlClient.SqlClient)
          return null
        })

      /** A pool of `generation` on `replica` (its base pool for public), or why it could not be opened. */
      const openPool = (replica: Replica, base: SqlClient.SqlClient, generation: string) =>
        Effect.gen(function* () {
          if (generation === FIRST_GENERATION)
            return { generation, sql: base, scope: undefined, users: 0, retired: false } satisfies GenerationPool
          const child = yield* childScope
          const opened = yield* openGenerationPool(replica.url, generation, child).pipe(Effect.either)
          if (opened._tag === "Left") {
            yield* Scope.close(child, Exit.void)
            return `cannot open generation ${generation}: ${opened.left.message}`
          }
          return { generation, sql: opened.right, scope: child, users: 0, retired: false } satisfies GenerationPool
        })

      /** Closes `pool` if it is retired and nobody uses it; at most once (`scope` is then dropped from use). */
      const closeIfIdle = (pool: GenerationPool) =>
        pool.retired && pool.users === 0 && pool.scope !== undefined ? Scope.close(pool.scope, Exit.void) : Effect.void

      /** The replica's pointer and head as it answers now, or why it does not. */
      const readReplica = (replica: Replica) =>
        Effect.gen(function* () {
          const failed = replica.base === null ? yield* connect(replica) : null
          const read = replica.base === null ? undefined : yield* activeHeadOn(replica.base, options.chainId)
          return { replica, failed, read }
        })

      /** The replica's state, head and pool from what it answered; applied by `poll` together with the others'. */
      const judge = ({ replica, failed, read }: Effect.Effect.Success<ReturnType<typeof readReplica>>, primary: PrimaryRead | null) =>
        Effect.gen(function* () {
          const base = replica.base
          const problem = failed ?? (read === undefined ? "not connected" : read._tag === "Left" ? read.left : null)
          const active = read !== undefined && read._tag === "Right" ? read.right : null
          const block = active?.head?.block ?? null
          const lag = active === null || primary === null ? null : Math.max(0, primary.block - (block ?? 0))
          let reason =
            problem ??
            (active !== null && active.generation !== primaryGeneration
              ? `on generation ${active.generation}, the primary's is ${primaryGeneration}: out until it replays the switch`
              : lag !== null && lag > options.maxLagBlocks
                ? `trails the primary by ${lag} blocks (more than ${options.maxLagBlocks})`
                : null)
          // The pool of the generation it serves: kept while it stays on it, else opened (when it
          // qualifies) or none (the one it left is retired by `poll`).
          let pool: GenerationPool | null = replica.pool
          if (active !== null && base !== null && pool?.generation !== active.generation) {
            pool = null
            if (reason === null) {
              const opened = yield* openPool(replica, base, active.generation)
              if (typeof opened === "string") reason = opened
              else pool = opened
            }
          }
          const state: ReplicaState = {
            name: replica.name,
            inRotation: reason === null,
            indexedBlock: block,
            lagBlocks: lag,
            problem: reason
          }
          return { replica, state, head: active === null ? replica.head : active.head, pool }
        })

      // The replicas are read before the primary: a replica replays what the primary committed,
      // so none is then seen on a newer generation than the primary's, and the lag is never
      // under-counted. Every judgement is then applied in one synchronous step, so `pick` never
      // sees a rotation and a served head from different polls.
      const poll = Effect.gen(function* () {
        const reads = yield* Effect.forEach(replicas, readReplica, { concurrency: "unbounded" })
        const primaryRead = yield* activeHeadOn(onPrimary.primary, options.chainId)
        const primary =
          primaryRead._tag === "Right" ? { generation: primaryRead.right.generation, block: primaryRead.right.head?.block ?? 0 } : null
        if (primary !== null) primaryGeneration = primary.generation
        const judged = yield* Effect.forEach(reads, (read) => judge(read, primary), { concurrency: "unbounded" })
        for (const { replica, state } of judged) {
          if (replica.state.inRotation !== state.inRotation) {
            yield* state.inRotation
              ? Effect.logInfo("read replica in rotation").pipe(Effect.annotateLogs({ replica: replica.name }))
              : Effect.logWarning("read replica out of rotation").pipe(
                  Effect.annotateLogs({ replica: replica.name, reason: state.problem })
                )
          }
        }
        const left: Array<GenerationPool> = []
        for (const { replica, state, head, pool } of judged) {
          if (replica.pool !== null && replica.pool !== pool) {
            replica.pool.retired = true
            left.push(replica.pool)
          }
          replica.state = state
          replica.head = head
          replica.pool = pool
        }
        served = servedHead()
        yield* Effect.forEach(left, closeIfIdle, { discard: true })
      })

      yield* poll
      yield* poll.pipe(Effect.repeat(Schedule.spaced(Duration.millis(options.pollEveryMs ?? 1_000))), Effect.forkScoped)

      /** The next replica in rotation and the head it claims, its pool counted as used; none: the primary serves. */
      const take = Effect.sync((): { pool: GenerationPool; head: IndexedHead | null } | null => {
        const rotating = inRotation()
        if (rotating.length === 0) return null
        const pool = rotating[next++ % rotating.length]!.pool!
        pool.users += 1
        return { pool, head: served }
      })

      return {
        pick: <A, E, R>(use: (target: ReadTarget) => Effect.Effect<A, E, R>) =>
          Effect.acquireUseRelease(
            take,
            // A replica in rotation is on the primary's active generation: the primary's pick judges
            // whether this version reads it (its 503 during an upgrade) before the replica is used.
            (taken) => (taken === null ? onPrimary.pick(use) : onPrimary.pick(() => use({ sql: taken.pool.sql, head: taken.head }))),
            (taken) =>
              taken === null
                ? Effect.void
                : Effect.suspend(() => {
                    taken.pool.users -= 1
                    return closeIfIdle(taken.pool)
                  })
          ),
        head: () => (inRotation().length === 0 ? onPrimary.head() : served),
        primary: onPrimary.primary,
        replicas: () => replicas.map((r) => r.state)
      }
    })
  )
