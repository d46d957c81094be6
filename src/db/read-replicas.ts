/**
 * The read targets of an API process (`http/core/read-targets.ts`) over the replicas of
 * `DATABASE_READ_URL`: one pool per replica, and one poll that every `pollEveryMs` reads the
 * index checkpoint on the primary and on every replica, and judges each replica:
 *
 * - in rotation when it answered and trails the primary by at most `maxLagBlocks`;
 * - out otherwise (unreachable, checkpoint unreadable, too far behind), with the reason.
 *
 * The head the read side claims is the lowest of the replicas in rotation (the primary's when
 * none is): when a replica joins after the primary served alone, the head may step back by up to
 * `maxLagBlocks`; it never names a block the chosen target lacks, which is what matters.
 *
 * Why polling: a hot standby's sessions hear no NOTIFY (LISTEN is refused or silent on a standby:
 * notifications are not WAL-logged), so the only way to know what a replica holds is to read its
 * own checkpoint row; between two reads it only moves forward (WAL replay), short of a reorg.
 *
 * A replica that does not answer at start does not stop the process: its pool is built again at
 * the next polls until it answers.
 */
import { SqlClient } from "@effect/sql"
import type { PgClient } from "@effect/sql-pg"
import { Context, Duration, Effect, ExecutionStrategy, Exit, Layer, Redacted, Schedule, Scope } from "effect"
import { IndexedHeads, readIndexedHead, type IndexedHead } from "../../http/core/indexed-heads.js"
import { type ReplicaState, ReadTargets } from "../../http/core/read-targets.js"
import { pgClientLayer } from "./database.js"

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

interface Replica {
  readonly name: string
  readonly url: Redacted.Redacted<string>
  sql: SqlClient.SqlClient | null
  state: ReplicaState
  head: IndexedHead | null
}

/** The checkpoint on `sql`, or the reason it could not be read. */
const checkpointOn = (sql: SqlClient.SqlClient, chainId: number) =>
  readIndexedHead(chainId).pipe(
    Effect.provideService(SqlClient.SqlClient, sql),
    Effect.timeoutFail({ duration: READ_DEADLINE, onTimeout: () => "did not answer in time" }),
    Effect.mapError((error) => (typeof error === "string" ? error : `does not answer: ${error.message}`)),
    Effect.either
  )

/** The read targets over `options.urls`; needs the primary's `SqlClient` and the process's `IndexedHeads`. */
export const ReadReplicasLive = (options: ReadReplicasOptions) =>
  Layer.scoped(
    ReadTargets,
    Effect.gen(function* () {
      const primary = yield* SqlClient.SqlClient
      const heads = yield* IndexedHeads
      const scope = yield* Effect.scope
      const replicas: Array<Replica> = options.urls.map((url) => ({
        name: replicaName(url),
        url,
        sql: null,
        head: null,
        state: { name: replicaName(url), inRotation: false, indexedBlock: null, lagBlocks: null, problem: "not polled yet" }
      }))
      // The head the read side claims: the lowest of the replicas in rotation, else the primary's.
      let served: IndexedHead | null = null
      let next = 0

      const inRotation = () => replicas.filter((r) => r.state.inRotation && r.sql !== null)
      const servedHead = (): IndexedHead | null => {
        const rotating = inRotation()
        if (rotating.length === 0) return heads.latest()
        let lowest: IndexedHead | null = null
        for (const r of rotating) if (r.head === null || lowest === null || r.head.block < lowest.block) lowest = r.head
        // A replica in rotation with no index yet holds nothing to claim.
        return rotating.some((r) => r.head === null) ? null : lowest
      }

      /** A pool for `replica`, built in a scope of its own (closed with the layer's). */
      const connect = (replica: Replica) =>
        Effect.gen(function* () {
          const child = yield* Scope.fork(scope, ExecutionStrategy.sequential)
          const built = yield* Layer.buildWithScope(pgClientLayer(replica.url), child).pipe(Effect.either)
          if (built._tag === "Left") {
            yield* Scope.close(child, Exit.void)
            return `does not answer: ${built.left.message}`
          }
          replica.sql = Context.get(built.right as Context.Context<PgClient.PgClient | SqlClient.SqlClient>, SqlClient.SqlClient)
          return null
        })

      /** The replica's state and head as read now; applied by `poll` together with the others'. */
      const judge = (replica: Replica, primaryBlock: number | null) =>
        Effect.gen(function* () {
          const failed = replica.sql === null ? yield* connect(replica) : null
          const read = replica.sql === null ? undefined : yield* checkpointOn(replica.sql, options.chainId)
          const problem = failed ?? (read === undefined ? "not connected" : read._tag === "Left" ? read.left : null)
          const head = read !== undefined && read._tag === "Right" ? read.right : null
          const block = head === null ? null : head.block
          const lag = problem !== null || primaryBlock === null ? null : Math.max(0, primaryBlock - (block ?? 0))
          const reason =
            problem ??
            (lag !== null && lag > options.maxLagBlocks ? `trails the primary by ${lag} blocks (more than ${options.maxLagBlocks})` : null)
          const state: ReplicaState = {
            name: replica.name,
            inRotation: reason === null,
            indexedBlock: block,
            lagBlocks: lag,
            problem: reason
          }
          return { replica, state, head: problem === null ? head : replica.head }
        })

      // Every replica is read first and the judgements applied in one synchronous step, so `pick`
      // never sees a rotation and a served head from different polls.
      const poll = Effect.gen(function* () {
        const primaryRead = yield* checkpointOn(primary, options.chainId)
        const primaryBlock = primaryRead._tag === "Right" ? (primaryRead.right?.block ?? 0) : null
        const judged = yield* Effect.forEach(replicas, (replica) => judge(replica, primaryBlock), { concurrency: "unbounded" })
        for (const { replica, state } of judged) {
          if (replica.state.inRotation !== state.inRotation) {
            yield* state.inRotation
              ? Effect.logInfo("read replica in rotation").pipe(Effect.annotateLogs({ replica: replica.name }))
              : Effect.logWarning("read replica out of rotation").pipe(
                  Effect.annotateLogs({ replica: replica.name, reason: state.problem })
                )
          }
        }
        for (const { replica, state, head } of judged) {
          replica.state = state
          replica.head = head
        }
        served = servedHead()
      })

      yield* poll
      yield* poll.pipe(Effect.repeat(Schedule.spaced(Duration.millis(options.pollEveryMs ?? 1_000))), Effect.forkScoped)

      return {
        pick: Effect.sync(() => {
          const rotating = inRotation()
          if (rotating.length === 0) return { sql: primary, head: heads.latest() }
          const replica = rotating[next++ % rotating.length]!
          return { sql: replica.sql!, head: served }
        }),
        head: () => (inRotation().length === 0 ? heads.latest() : served),
        primary,
        replicas: () => replicas.map((r) => r.state)
      }
    })
  )
