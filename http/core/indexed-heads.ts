/**
 * The committed heads of the index, one source per process: what freshness headers, caches, the
 * notification consumer and the WebSocket feeds all follow.
 *
 * Two inputs, one state:
 * - one LISTEN on `INDEXED_CHANNEL` (`schema/indexed-notify.ts`), on a connection of its own
 *   (`application_name` = `LISTEN_APPLICATION_NAME`) that this module opens, watches and, when it
 *   drops, opens again with a growing pause (100 ms doubling to 5 s; back to the start once a
 *   connection has lived `STABLE_MS`). The pipeline sends the NOTIFY inside the commit's
 *   transaction, so a notification arrives after its rows are visible;
 * - the checkpoint (`schema/io/indexer-checkpoint.ts`), read at start, right after every
 *   (re)connection (what was committed while nobody listened) and every `pollEveryMs` (a
 *   connection that died without telling).
 *
 * Invariants:
 * - every notification of this chain is a move, passed on as it came (`reverted` and `markets` included), to
 *   every subscriber: subscriptions are unbounded queues, none drops or merges a move;
 * - a checkpoint read is a move only when it finds the head elsewhere than last heard (`reverted`
 *   when it went back), and is applied only when no notification arrived while it was read: a
 *   notification is never older than a read that started before it, so a slow read cannot take
 *   the head back;
 * - after a reconnection the head is the checkpoint's (or newer) before the next poll is due;
 * - the layer is built once the first connection listens (or failed), so subscribers taken after
 *   it hear every later commit.
 *
 * Why not `PgClient.listen`: its shared listen connection swallows connection errors, so a
 * dropped connection stays silent and is never replaced while the process lives.
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Context, Deferred, Duration, Effect, Exit, Layer, PubSub, Queue, Redacted, Schedule, Stream } from "effect"
import type { Scope } from "effect"
import pg from "pg"
import { decodeIndexedPayload, INDEXED_CHANNEL } from "../../schema/indexed-notify.js"
import { FIRST_GENERATION, readActiveCheckpoint, readCheckpoint } from "../../schema/io/indexer-checkpoint.js"

export interface IndexedHead {
  readonly block: number
  readonly hash: string
  /**
   * The schema of the generation the head is of (blue-green re-index, `src/db/generations.ts`):
   * an answer at this head is read from that generation's tables. Absent: the first (`public`).
   */
  readonly generation?: string
}

/** One move of the head: a notification, or a checkpoint read that found the head elsewhere. */
export interface HeadMove {
  readonly head: IndexedHead
  /** The head went back to the common ancestor of a reorg. */
  readonly reverted: boolean
  /**
   * The markets (decimal ids) whose rows changed since the move before (the notification's
   * `markets`); undefined when not known: any market may have changed (a checkpoint read, a
   * revert, a notification that does not name them).
   */
  readonly markets?: ReadonlyArray<string> | undefined
}

export class IndexedHeads extends Context.Tag("predix/IndexedHeads")<
  IndexedHeads,
  {
    /** The last committed head as last heard of; null before the first batch. */
    readonly current: Effect.Effect<IndexedHead | null>
    /** The same, read synchronously (for the Node-level cache path). */
    readonly latest: () => IndexedHead | null
    /** Every move from now on, in order, until the scope closes. */
    readonly subscribe: Effect.Effect<Queue.Dequeue<HeadMove>, never, Scope.Scope>
  }
>() {}

/** How the LISTEN connection names itself in `pg_stat_activity`. */
export const LISTEN_APPLICATION_NAME = "predix indexed heads"

/** A connection that lived this long counts as healthy: the next drop reconnects without a pause. */
const STABLE_MS = 5_000
const FIRST_PAUSE_MS = 100
const MAX_PAUSE_MS = 5_000

/** The pause before connecting again after `failures` short-lived or failed connections. */
export const reconnectPause = (failures: number) => (failures === 0 ? 0 : Math.min(MAX_PAUSE_MS, FIRST_PAUSE_MS * 2 ** (failures - 1)))

export interface IndexedHeadsOptions {
  /** How often the checkpoint is read besides the notifications (default 5 s). */
  readonly pollEveryMs?: number
}

/** The committed head as the checkpoint holds it; null before the first batch. */
export const readIndexedHead = (chainId: number) =>
  Effect.map(readCheckpoint(chainId), (checkpoint): IndexedHead | null =>
    checkpoint === undefined ? null : { block: checkpoint.block, hash: checkpoint.hash }
  )

/** Whether two heads are the same state: block, hash and generation. */
const sameHead = (a: IndexedHead, b: IndexedHead) => a.block === b.block && a.hash === b.hash && a.generation === b.generation

class ListenDropped {
  readonly _tag = "ListenDropped"
  constructor(readonly cause: unknown) {}
}

/** Connection settings of the process's pool (`PgClient.config`), for one plain client. */
const clientConfig = (config: PgClient.PgClientConfig): pg.ClientConfig => ({
  ...(config.url === undefined ? {} : { connectionString: Redacted.value(config.url) }),
  host: config.host,
  port: config.port,
  database: config.database,
  user: config.username,
  password: config.password === undefined ? undefined : Redacted.value(config.password),
  ssl: config.ssl,
  connectionTimeoutMillis: config.connectTimeout === undefined ? 5_000 : Duration.toMillis(config.connectTimeout),
  application_name: LISTEN_APPLICATION_NAME,
  keepAlive: true,
  // The pool's socket factory when it has one (the wire counters of `src/db`): this connection's
  // work is the process's too.
  ...(config.stream === undefined ? {} : { stream: config.stream })
})

/**
 * The payloads of `INDEXED_CHANNEL` on a fresh connection, from the moment LISTEN is in place
 * (`onListening` runs then); fails with `ListenDropped` when the connection fails or ends. The
 * client's events are taken from its creation on (an "error" with no listener would throw).
 */
const listenOnce = (config: pg.ClientConfig, onListening: Effect.Effect<void>) =>
  Stream.unwrapScoped(
    Effect.gen(function* () {
      const inbox = yield* Queue.unbounded<string>()
      const lost = yield* Deferred.make<never, ListenDropped>()
      const client = new pg.Client(config)
      client.on("notification", (message) => {
        if (message.channel === INDEXED_CHANNEL && message.payload !== undefined) Queue.unsafeOffer(inbox, message.payload)
      })
      client.on("error", (error) => void Deferred.unsafeDone(lost, Exit.fail(new ListenDropped(error))))
      client.on("end", () => void Deferred.unsafeDone(lost, Exit.fail(new ListenDropped("connection ended"))))
      yield* Effect.addFinalizer(() => Effect.promise(() => client.end().catch(() => undefined)).pipe(Effect.timeoutOption("1 second")))
      yield* Effect.tryPromise({
        try: async () => {
          await client.connect()
          await client.query(`LISTEN ${client.escapeIdentifier(INDEXED_CHANNEL)}`)
        },
        catch: (cause) => new ListenDropped(cause)
      })
      yield* onListening
      return Stream.fromQueue(inbox).pipe(Stream.interruptWhen(Deferred.await(lost)))
    })
  )

/**
 * The source for `chainId` for as long as the layer lives. Needs `PgClient` (its connection
 * settings, and the checkpoint reads through its pool).
 */
export const IndexedHeadsLive = (chainId: number, options: IndexedHeadsOptions = {}) =>
  Layer.scoped(
    IndexedHeads,
    Effect.gen(function* () {
      const pool = yield* PgClient.PgClient
      const moves = yield* Effect.acquireRelease(PubSub.unbounded<HeadMove>(), PubSub.shutdown)
      // One plain variable: JavaScript runs one callback at a time, and readers need it synchronously.
      let head: IndexedHead | null = null
      // Counts notifications: a checkpoint read is applied only if none arrived while it ran.
      let heard = 0
      // The generation the head is of: notifications of another (a build in progress, or the
      // switch to it) are not moves of this head; they make the pointer be read again.
      let active = FIRST_GENERATION
      // One read at a time, so an older read never lands after a newer one.
      const oneRead = yield* Effect.makeSemaphore(1)

      const onNotification = (payload: string): Effect.Effect<void> => {
        const notification = decodeIndexedPayload(chainId, payload)
        if (notification === undefined) return Effect.void
        const generation = notification.generation ?? active
        if (generation !== active) return reconcile
        heard += 1
        head = { block: notification.block, hash: notification.hash, generation }
        return PubSub.publish(moves, { head, reverted: notification.reverted, markets: notification.markets })
      }

      const reconcile: Effect.Effect<void> = Effect.suspend(() => {
        const before = heard
        return readActiveCheckpoint(chainId).pipe(
          Effect.provideService(SqlClient.SqlClient, pool),
          Effect.flatMap(({ generation, checkpoint }) => {
            if (heard !== before) return Effect.void
            const read = checkpoint === undefined ? null : { block: checkpoint.block, hash: checkpoint.hash, generation }
            const previous = head
            head = read
            active = generation
            if (read === null || (previous !== null && sameHead(read, previous))) return Effect.void
            return PubSub.publish(moves, {
              head: read,
              reverted: previous !== null && previous.generation === read.generation && read.block < previous.block
            })
          }),
          Effect.catchAll((error) =>
            Effect.logDebug("indexed heads: checkpoint not read").pipe(Effect.annotateLogs("error", String(error)))
          ),
          oneRead.withPermits(1)
        )
      })

      yield* reconcile
      yield* reconcile.pipe(Effect.repeat(Schedule.spaced(Duration.millis(options.pollEveryMs ?? 5_000))), Effect.forkScoped)

      const config = clientConfig(pool.config)
      // Done once the first connection listens and its checkpoint read is applied, or once it failed.
      const firstAttempt = yield* Deferred.make<void>()
      const settle = Deferred.succeed(firstAttempt, undefined)
      // Connects, listens until the connection drops, and again, pausing as `reconnectPause` says.
      yield* Effect.gen(function* () {
        let failures = 0
        for (;;) {
          yield* Effect.sleep(Duration.millis(reconnectPause(failures)))
          const started = Date.now()
          const ended = yield* listenOnce(config, Effect.zipRight(reconcile, settle)).pipe(Stream.runForEach(onNotification), Effect.either)
          yield* settle
          failures = Date.now() - started >= STABLE_MS ? 0 : failures + 1
          yield* Effect.logWarning("indexed heads: LISTEN connection lost; reconnecting").pipe(
            Effect.annotateLogs({
              error: ended._tag === "Left" ? String(ended.left.cause) : "stream ended",
              pause_ms: reconnectPause(failures)
            })
          )
        }
      }).pipe(Effect.forkScoped)
      // The source is handed out listening: a commit made after the layer is built is heard, and a
      // commit made before it is in the head (unless the first connection failed; then the retries
      // and the poll catch up).
      yield* Deferred.await(firstAttempt)

      return {
        current: Effect.sync(() => head),
        latest: () => head,
        subscribe: PubSub.subscribe(moves)
      }
    })
  )

/**
 * The process's source when one is provided (the servers of `start` share one), else one of this
 * layer's own for `chainId` (a server built alone, as tests and benches do).
 */
export const IndexedHeadsShared = (chainId: number, options: IndexedHeadsOptions = {}) =>
  Layer.unwrapEffect(
    Effect.map(Effect.serviceOption(IndexedHeads), (provided) =>
      provided._tag === "Some" ? Layer.succeed(IndexedHeads, provided.value) : IndexedHeadsLive(chainId, options)
    )
  )
