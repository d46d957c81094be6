/**
 * The backfill on its own thread: fetching, reading answers and decoding (about half of the
 * indexing CPU) run on a worker thread, so the indexing thread only reduces and writes. On two
 * cores that is the difference between one saturated thread and two busy ones.
 *
 * The worker (`backfill-thread-worker.ts`) runs `decodedBackfill` against its own client of the
 * same HTTP node and posts each decoded range; structured clone carries the events (bigints
 * included). Flow control is by credits: the worker posts a range only against a credit, and one
 * credit comes back each time the consumer takes a range, so at most CREDITS ranges wait between
 * the threads whatever the speed of either side.
 *
 * One worker serves the process (starting one costs about a second of module loading), each
 * backfill a job on it. It keeps the process alive only while a job runs. A worker that dies
 * fails its running jobs (a defect, not a ChainError: nothing a retry of the range would fix)
 * and the next job starts a new one.
 */
import { Deferred, Effect, Exit, FiberId, FiberRef, Option, Queue, Stream } from "effect"
import { Worker } from "node:worker_threads"
import type { Deployment } from "../../schema/deployment.js"
import { RUNS_COMPILED } from "../../schema/io/project-root.js"
import type { DecodedBatch } from "../decode-batch.js"
import type { StoredRange } from "../log-store/store-sql.js"
import { type ChainError, type ChainErrorData, chainErrorFrom } from "./errors.js"
import type { Transport } from "./rpc.js"

/** Decoded ranges in flight between the threads, at most. */
const CREDITS = 8

export interface BackfillJob {
  readonly transport: Transport
  readonly deployment: Deployment
  /** Outcome tokens already watched (the deployment's components are added by the worker). */
  readonly tokens: ReadonlyArray<string>
  readonly from: number
  readonly to: number
  /** The chained digest after block `from - 1`. */
  readonly digest: string
  readonly concurrency: number
  /** Encode each range for the log store too (`log-store/codec.ts`). */
  readonly store?: boolean
}

/** A replay of log store rows (`log-store/replay.ts`): the indexing thread reads them, the worker decodes them. */
export interface ReplayJob {
  readonly deployment: Deployment
  /** Outcome tokens already watched (the deployment's components are added by the worker). */
  readonly tokens: ReadonlyArray<string>
  /** The first block to decode (a row may start below it). */
  readonly from: number
  /** The chained digest after block `from - 1`. */
  readonly digest: string
}

export type ToThread =
  | ({ readonly type: "start"; readonly job: number; readonly credits: number; readonly logLevel: string } & BackfillJob)
  | ({ readonly type: "replay"; readonly job: number } & ReplayJob)
  | { readonly type: "stored"; readonly job: number; readonly range: StoredRange }
  | { readonly type: "credit"; readonly job: number }
  | { readonly type: "stop"; readonly job: number }

export interface ThreadBatch {
  readonly type: "batch"
  readonly job: number
  readonly batch: DecodedBatch
  /** Tokens the worker started watching since its last batch (announced by MarketCreated). */
  readonly watched: ReadonlyArray<string>
  /** Milliseconds the worker spent reading answers and decoding since its last batch. */
  readonly readMs: number
  readonly decodeMs: number
}

export type FromThread =
  | ThreadBatch
  | { readonly type: "end"; readonly job: number }
  | { readonly type: "failed"; readonly job: number; readonly error: ChainErrorData }
  | { readonly type: "defect"; readonly job: number; readonly message: string }

class BackfillThread {
  private readonly worker: Worker
  private readonly jobs = new Map<number, (message: FromThread) => void>()
  private lastJob = 0
  dead = false

  constructor() {
    // Compiled (`bin/build.mjs` bundles the worker's entry beside ours), the worker loads it
    // directly. From the sources, a plain module registers tsx in the worker, then loads the
    // TypeScript entry: a worker does not inherit the loader hooks of the thread that starts it.
    this.worker = RUNS_COMPILED
      ? new Worker(new URL("./backfill-thread-worker.mjs", import.meta.url))
      : new Worker(new URL("./backfill-thread-boot.mjs", import.meta.url), {
          workerData: { entry: new URL("./backfill-thread-worker.ts", import.meta.url).href }
        })
    this.worker.unref()
    this.worker.on("message", (message: FromThread) => this.jobs.get(message.job)?.(message))
    this.worker.on("error", (error) => this.die(`the backfill thread failed: ${error.stack ?? error.message}`))
    this.worker.on("exit", (code) => this.die(`the backfill thread exited (code ${code})`))
  }

  private die(message: string) {
    if (this.dead) return
    this.dead = true
    for (const [job, deliver] of this.jobs) deliver({ type: "defect", job, message })
    this.jobs.clear()
  }

  /** Starts a job whose messages go to `deliver`; the worker keeps the process alive meanwhile. */
  start(job: BackfillJob, logLevel: string, deliver: (message: FromThread) => void): number {
    const id = ++this.lastJob
    this.jobs.set(id, deliver)
    this.worker.ref()
    this.post({ type: "start", job: id, credits: CREDITS, logLevel, ...job })
    return id
  }

  /** Starts a replay job: the worker decodes the rows `stored` sends, in order, one batch each. */
  startReplay(job: ReplayJob, deliver: (message: FromThread) => void): number {
    const id = ++this.lastJob
    this.jobs.set(id, deliver)
    this.worker.ref()
    this.post({ type: "replay", job: id, ...job })
    return id
  }

  /** One row for replay job `job` (its bytes are copied: a row read by pg may share its buffer). */
  stored(job: number, range: StoredRange) {
    this.post({ type: "stored", job, range })
  }

  credit(job: number) {
    this.post({ type: "credit", job })
  }

  /** Ends a job (stopping it if it still runs); idle again, the worker no longer holds the process. */
  stop(job: number) {
    if (!this.jobs.delete(job)) return
    this.post({ type: "stop", job })
    if (this.jobs.size === 0) this.worker.unref()
  }

  private post(message: ToThread) {
    if (!this.dead) this.worker.postMessage(message)
  }
}

let shared: BackfillThread | undefined

const thread = () => {
  if (shared === undefined || shared.dead) shared = new BackfillThread()
  return shared
}

/**
 * The decoded ranges of `job`, in block order, from the backfill thread; fails with the
 * ChainError the worker's backfill failed with. Interrupting the stream stops the job.
 */
export const threadBackfill = (job: BackfillJob): Stream.Stream<ThreadBatch, ChainError> =>
  Stream.unwrapScoped(
    Effect.gen(function* () {
      const logLevel = yield* FiberRef.get(FiberRef.currentMinimumLogLevel)
      const messages = yield* Queue.unbounded<FromThread>()
      const worker = thread()
      const id = yield* Effect.acquireRelease(
        Effect.sync(() => worker.start(job, logLevel._tag, (message) => Queue.unsafeOffer(messages, message))),
        (id) => Effect.sync(() => worker.stop(id))
      )
      return Stream.repeatEffectOption(
        Effect.flatMap(Queue.take(messages), (message): Effect.Effect<ThreadBatch, Option.Option<ChainError>> => {
          switch (message.type) {
            case "batch":
              worker.credit(id)
              return Effect.succeed(message)
            case "end":
              return Effect.fail(Option.none())
            case "failed":
              return Effect.fail(Option.some(chainErrorFrom(message.error)))
            case "defect":
              return Effect.die(new Error(message.message))
          }
        })
      )
    })
  )

/**
 * The rows of `rows` decoded on the backfill thread, in order, one ThreadBatch each (its
 * `watched` the tokens the row's announcements added). At most CREDITS rows are in flight; the
 * indexing thread only reads them. A worker that fails to decode one (a damaged row) or dies
 * fails the stream with a defect.
 */
export const threadReplay = <E, R>(job: ReplayJob, rows: Stream.Stream<StoredRange, E, R>): Stream.Stream<ThreadBatch, E, R> =>
  Stream.unwrapScoped(
    Effect.gen(function* () {
      /** The replies still awaited, in the order their rows were posted (the worker answers in that order). */
      const pending: Array<Deferred.Deferred<ThreadBatch>> = []
      let failed: string | undefined
      const worker = thread()
      const id = yield* Effect.acquireRelease(
        Effect.sync(() =>
          worker.startReplay(job, (message) => {
            if (message.type === "batch") {
              const reply = pending.shift()
              if (reply !== undefined) Deferred.unsafeDone(reply, Exit.succeed(message))
              return
            }
            failed = message.type === "defect" ? message.message : `the backfill thread answered a replay with ${message.type}`
            for (const reply of pending.splice(0)) Deferred.unsafeDone(reply, Exit.die(new Error(failed)))
          })
        ),
        (id) => Effect.sync(() => worker.stop(id))
      )
      return rows.pipe(
        // Posted one at a time in stream order, so replies pair with rows in order.
        Stream.mapEffect((range) =>
          Effect.suspend(() => {
            if (failed !== undefined || worker.dead) return Effect.die(new Error(failed ?? "the backfill thread is gone"))
            const reply = Deferred.unsafeMake<ThreadBatch>(FiberId.none)
            pending.push(reply)
            worker.stored(id, range)
            return Effect.succeed(reply)
          })
        ),
        Stream.mapEffect(Deferred.await, { concurrency: CREDITS })
      )
    })
  )
