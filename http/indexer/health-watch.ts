/**
 * Whether the index can be trusted to be current: the judgement behind `GET /api/health`, the
 * backend's `/health` and `/ready` (which ask it), and the `X-Indexed-Status` / `X-Indexed-Lag`
 * headers of every indexer answer.
 *
 * Three independent signals, because any one of them alone can be fooled:
 * - the chain's head as the node says it (`chain-head.ts`), not as the indexer recorded it: a
 *   stalled indexer's record stands still with it, so its lag would read 0;
 * - how long ago the indexer last published its metrics (it does after every poll of the tip,
 *   successful or not reaching the node is not success: a failed poll publishes nothing), read
 *   from the database, since the indexer runs in another process;
 * - how long ago the node last answered us.
 * The answer is `degraded` when the lag passes `maxLagBlocks` or either age passes
 * `maxStaleSeconds` (before the first reading, the time since this watch started counts, so a
 * node or an indexer that never answers turns it too); otherwise `ok`.
 *
 * Invariants: a health answer never waits on the node (its head is read in the background every
 * `pollMs`, at most one request out); the database read is shared by concurrent callers and
 * bounded by `DATABASE_DEADLINE_MS`, acquiring a connection included (a server-side statement
 * timeout cannot bound a frozen server), so health answers promptly whatever hangs. Without
 * settings (a server embedded over a finished index, as tests do) nothing is judged stale.
 */
import { Context, Effect, Exit, Layer, Runtime, Schedule } from "effect"
import type { SqlClient } from "@effect/sql"
import { ServiceUnavailable } from "../../schema/errors.js"
import { askable, type ChainHeadReader, type ChainHeadReading, makeChainHeadReader } from "./chain-head.js"
import type { Health } from "../core/indexer-health.js"
import { type Progress, readProgress } from "../read/health.js"

export interface HealthSettings {
  /** The node whose head counts (RPC_URL, or the live devnet's); undefined or ws(s): the head the indexer recorded. */
  readonly rpcUrl: string | undefined
  /** Blocks the index may trail the chain's head by. */
  readonly maxLagBlocks: number
  /** Seconds the indexer may go without reporting, and the node without answering. */
  readonly maxStaleSeconds: number
  /** Bound of one eth_blockNumber; default 2 s. */
  readonly rpcTimeoutMs?: number
  /** How often the head and the judgement behind the headers are refreshed; default 1 s. */
  readonly pollMs?: number
}

/** How long health waits for the database before answering that it is unavailable. */
export const DATABASE_DEADLINE_MS = 1_500

/** What the freshness headers say: the last judgement, without waiting for a new one. */
export interface HeaderJudgement {
  readonly status: "ok" | "degraded" | "unknown"
  readonly lagBlocks: number | null
}

export class HealthWatch extends Context.Tag("predix/IndexerHealthWatch")<
  HealthWatch,
  {
    /** A fresh judgement (the database read now, the node's head as last read). */
    readonly check: Effect.Effect<Health, ServiceUnavailable>
    /** The last judgement, synchronously (for the headers of every answer, cache hits included). */
    readonly latest: () => HeaderJudgement
  }
>() {}

const tenths = (seconds: number) => Math.round(seconds * 10) / 10

/** The judgement itself, pure: what the database and the node said, and when. */
export const judge = (input: {
  readonly chainId: number
  readonly progress: Progress
  /** Milliseconds since the progress was read (its ages grow meanwhile). */
  readonly progressAgeMs: number
  readonly node: ChainHeadReading | undefined
  readonly settings: HealthSettings | undefined
  readonly now: number
  readonly startedAt: number
}): Health => {
  const { progress, node, settings, now } = input
  const grown = (age: number | null) => (age === null ? null : tenths(age + input.progressAgeMs / 1000))
  const indexerAgeSeconds = grown(progress.indexerAgeSeconds)
  const rpcAgeSeconds = node?.at == null ? null : tenths((now - node.at) / 1000)
  const heads = [node?.block ?? null, progress.recordedHead].filter((h): h is number => h !== null)
  const headBlock = heads.length === 0 ? null : Math.max(...heads)
  const lagBlocks = headBlock === null || progress.block === null ? null : Math.max(0, headBlock - progress.block)
  const problems: Array<string> = []
  if (settings !== undefined) {
    const sinceStart = (now - input.startedAt) / 1000
    if (lagBlocks !== null && lagBlocks > settings.maxLagBlocks)
      problems.push(`index ${lagBlocks} blocks behind the head (bound ${settings.maxLagBlocks})`)
    const indexerSilent = indexerAgeSeconds ?? sinceStart
    if (indexerSilent > settings.maxStaleSeconds) {
      problems.push(
        indexerAgeSeconds === null
          ? `the indexer has not reported progress (bound ${settings.maxStaleSeconds} s)`
          : `the indexer last reported progress ${indexerAgeSeconds} s ago (bound ${settings.maxStaleSeconds} s)`
      )
    }
    if (node !== undefined) {
      const nodeSilent = rpcAgeSeconds ?? sinceStart
      if (nodeSilent > settings.maxStaleSeconds) {
        const why = node.error === null ? "" : `: ${node.error}`
        problems.push(
          rpcAgeSeconds === null
            ? `the node has not answered (bound ${settings.maxStaleSeconds} s)${why}`
            : `the node last answered ${rpcAgeSeconds} s ago (bound ${settings.maxStaleSeconds} s)${why}`
        )
      }
    }
  }
  return {
    status: problems.length === 0 ? "ok" : "degraded",
    chainId: input.chainId,
    latestIndexedBlock: progress.block,
    headBlock,
    lagBlocks,
    indexedAgeSeconds: grown(progress.indexedAgeSeconds),
    indexerAgeSeconds,
    rpcAgeSeconds,
    problems
  }
}

/** The watch of `chainId`'s index, for as long as the layer lives; `settings` undefined judges nothing stale. */
export const HealthWatchLive = (chainId: number, settings: HealthSettings | undefined) =>
  Layer.scoped(
    HealthWatch,
    Effect.gen(function* () {
      const runtime = yield* Effect.runtime<SqlClient.SqlClient>()
      const startedAt = Date.now()
      const rpcUrl = settings?.rpcUrl
      const node: ChainHeadReader | undefined =
        rpcUrl !== undefined && askable(rpcUrl) ? makeChainHeadReader(rpcUrl, settings?.rpcTimeoutMs ?? 2_000) : undefined

      // Concurrent checks share one read: a frozen database costs one stuck connection, not one per probe.
      let reading: Promise<Exit.Exit<{ progress: Progress; at: number }, ServiceUnavailable>> | undefined
      const read = readProgress(chainId).pipe(
        Effect.map((progress) => ({ progress, at: Date.now() })),
        // Disconnected: a query stuck in an uninterruptible connect must not hold the answer back.
        Effect.disconnect,
        Effect.timeoutFail({
          duration: DATABASE_DEADLINE_MS,
          onTimeout: () => new ServiceUnavailable({ message: `database unavailable: no answer within ${DATABASE_DEADLINE_MS} ms` })
        }),
        Effect.catchAllCause((cause) =>
          Effect.fail(
            cause._tag === "Fail" && cause.error instanceof ServiceUnavailable
              ? cause.error
              : new ServiceUnavailable({ message: `database unavailable: ${messageOf(cause)}` })
          )
        )
      )
      const shared = Effect.promise(() => (reading ??= Runtime.runPromiseExit(runtime)(read).finally(() => (reading = undefined)))).pipe(
        Effect.flatten
      )

      let last: HeaderJudgement = { status: settings === undefined ? "ok" : "unknown", lagBlocks: null }
      const check = Effect.map(shared, ({ progress, at }) => {
        const now = Date.now()
        const health = judge({ chainId, progress, progressAgeMs: now - at, node: node?.latest(), settings, now, startedAt })
        last = { status: health.status, lagBlocks: health.lagBlocks }
        return health
      }).pipe(Effect.tapError(() => Effect.sync(() => (last = { status: "degraded", lagBlocks: last.lagBlocks }))))

      const poll = Effect.gen(function* () {
        if (node !== undefined) void node.refresh()
        yield* Effect.ignore(check)
      })
      // Only the real process judges (settings given); a test's embedded server reads on demand.
      if (settings !== undefined) yield* poll.pipe(Effect.repeat(Schedule.spaced(settings.pollMs ?? 1_000)), Effect.forkScoped)
      return { check, latest: () => last }
    })
  )

const messageOf = (cause: unknown): string => {
  const failure = cause as { error?: { message?: unknown }; defect?: { message?: unknown } }
  const message = failure.error?.message ?? failure.defect?.message
  return typeof message === "string" ? message : "no answer"
}
