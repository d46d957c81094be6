/**
 * The backfill thread's side (see backfill-thread.ts): runs each job's `decodedBackfill` against
 * its own client of the node and posts the decoded ranges in order, one per credit.
 */
import { Cause, Effect, Exit, Fiber, Logger, LogLevel, Queue, Stream } from "effect"
import { parentPort } from "node:worker_threads"
import { AddressBook } from "../decode.js"
import { decodeStoredRange } from "../log-store/replay.js"
import type { FromThread, ToThread } from "./backfill-thread.js"
import { decodedBackfill, watchlistOf } from "./decoded-backfill.js"
import { chainErrorData } from "./errors.js"
import { makeRpc, rpcOptionsOf } from "./rpc.js"

const port = parentPort!
const post = (message: FromThread) => port.postMessage(message)

interface Running {
  readonly credits: Queue.Queue<void>
  readonly fiber: Fiber.RuntimeFiber<void, unknown>
}

const jobs = new Map<number, Running>()

/** Replay jobs: the address book and where the next row's decoding continues. */
interface Replaying {
  readonly book: AddressBook
  from: number
  digest: string
}

const replays = new Map<number, Replaying>()

const startReplay = (m: Extract<ToThread, { type: "replay" }>) => {
  const book = new AddressBook(m.deployment)
  for (const token of m.tokens) book.watchToken(token)
  replays.set(m.job, { book, from: m.from, digest: m.digest })
}

const replayRow = (m: Extract<ToThread, { type: "stored" }>) => {
  const replay = replays.get(m.job)
  if (replay === undefined) return
  try {
    const started = performance.now()
    const watched: Array<string> = []
    const batch = decodeStoredRange(replay.book, m.range, replay.from, replay.digest, (token) => watched.push(token))
    replay.from = batch.to + 1
    replay.digest = batch.digest
    post({ type: "batch", job: m.job, batch, watched, readMs: 0, decodeMs: performance.now() - started })
  } catch (error) {
    replays.delete(m.job)
    post({
      type: "defect",
      job: m.job,
      message: `replaying log store rows ${m.range.from}-${m.range.to}: ${(error as Error).stack ?? String(error)}`
    })
  }
}

const start = (m: Extract<ToThread, { type: "start" }>) => {
  const job = m.job
  const credits = Effect.runSync(Queue.unbounded<void>())
  for (let i = 0; i < m.credits; i++) Queue.unsafeOffer(credits, undefined)
  const book = new AddressBook(m.deployment)
  for (const token of m.tokens) book.watchToken(token)
  const watched: Array<string> = []
  const timings = { decodeMs: 0 }
  const rpc = makeRpc(rpcOptionsOf(m.transport))
  let readMs = rpc.timings.readMs
  const program = decodedBackfill(
    rpc,
    book,
    watchlistOf(book, (a) => watched.push(a)),
    m,
    m.digest,
    timings,
    m.store === true
  ).pipe(
    Stream.runForEach((batch) =>
      Effect.map(Queue.take(credits), () => {
        // The stored ranges' bytes move to the other thread instead of being copied.
        const transfer = batch.stored.map((r) => r.bytes.buffer as ArrayBuffer)
        port.postMessage(
          {
            type: "batch",
            job,
            batch,
            watched: watched.splice(0),
            readMs: rpc.timings.readMs - readMs,
            decodeMs: timings.decodeMs
          } satisfies FromThread,
          transfer
        )
        readMs = rpc.timings.readMs
        timings.decodeMs = 0
      })
    ),
    Logger.withMinimumLogLevel(LogLevel.fromLiteral(m.logLevel as LogLevel.Literal))
  )
  const fiber = Effect.runFork(program)
  jobs.set(job, { credits, fiber })
  fiber.addObserver((exit) => {
    // A stopped job is gone from `jobs` already, and its consumer no longer listens.
    if (jobs.get(job)?.fiber !== fiber) return
    jobs.delete(job)
    if (Exit.isSuccess(exit)) return post({ type: "end", job })
    const failure = Cause.failureOption(exit.cause)
    if (failure._tag === "Some") return post({ type: "failed", job, error: chainErrorData(failure.value) })
    post({ type: "defect", job, message: Cause.pretty(exit.cause) })
  })
}

port.on("message", (m: ToThread) => {
  switch (m.type) {
    case "start":
      return start(m)
    case "replay":
      return startReplay(m)
    case "stored":
      return replayRow(m)
    case "credit": {
      const running = jobs.get(m.job)
      if (running !== undefined) Queue.unsafeOffer(running.credits, undefined)
      return
    }
    case "stop": {
      replays.delete(m.job)
      const running = jobs.get(m.job)
      if (running === undefined) return
      jobs.delete(m.job)
      Effect.runFork(Fiber.interrupt(running.fiber))
    }
  }
})
