/**
 * Handlers of the system endpoints (`api.ts`): `/health` checks the database and the indexer (its
 * API answers, and its own health judges the index current: `health-watch.ts`), `/ready` is
 * exactly `/health`'s verdict (with read replicas, `/health` lists them and is degraded when none is
 * in rotation), `/version` names the build. Both checks answer within about 2 s
 * whatever hangs. Answered through `respond.own`: never cached, and not behind the indexer's
 * breaker (the breaker's state is what a probe asks about); the 503s carry the same envelope.
 */
import { HttpApiClient, HttpClient } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Cause, Effect, Option } from "effect"
import { ServiceUnavailable } from "../../../schema/errors.js"
import { type Health, IndexerHealthApi } from "../../core/indexer-health.js"
import { ReadTargets } from "../../core/read-targets.js"
import { own, requestMeta } from "../respond.js"
import { Degraded, NotReady, Readiness, SystemHealth, Version } from "./api.js"
import { BuildInfo } from "./build-info.js"

/**
 * How long each check may take: a health answer must come promptly whatever hangs (a frozen
 * database, an indexer that does not answer), so a probe reads "degraded" instead of timing out.
 * The indexer's own database deadline (1.5 s) fits inside its bound.
 */
const DATABASE_DEADLINE = "1500 millis"
const INDEXER_DEADLINE = "1800 millis"

/**
 * Whether the database answers `select 1` within the deadline. Every failure counts as down,
 * defects included (a lost connection surfaces as one): a health check answers, never 500s.
 */
const databaseUp = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`select 1`).pipe(
  // Disconnected: a query stuck in an uninterruptible connect must not hold the answer back.
  Effect.disconnect,
  Effect.timeout(DATABASE_DEADLINE),
  Effect.as(true),
  Effect.catchAllCause(() => Effect.succeed(false))
)

interface IndexerView {
  readonly up: boolean
  readonly health: Health | null
  /** Why it is down: its own 503's message, or that it did not answer in time. */
  readonly problem: string | null
}

/** Asks the indexer through its typed client; any failure or slow answer counts as down. */
const indexerHealth = (indexerUrl: string) =>
  HttpApiClient.make(IndexerHealthApi, { baseUrl: indexerUrl }).pipe(
    Effect.flatMap((client) => client.health.health()),
    Effect.disconnect,
    Effect.timeout(INDEXER_DEADLINE),
    Effect.map((answer): IndexerView => ({ up: true, health: answer.data, problem: null })),
    Effect.catchAllCause((cause) => {
      const failure = Cause.failureOption(cause)
      const said = Option.isSome(failure) && failure.value instanceof ServiceUnavailable ? `: ${failure.value.message}` : " in time"
      return Effect.succeed<IndexerView>({ up: false, health: null, problem: `the indexer API did not answer${said}` })
    })
  )

/**
 * The combined judgement: ok only when the database answers and the indexer answers ok, and, with
 * read replicas, at least one is in rotation (one out while another serves is listed, not degraded).
 */
const systemHealth = (indexerUrl: string) =>
  Effect.map(
    Effect.all([databaseUp, indexerHealth(indexerUrl), Effect.serviceOption(ReadTargets)], { concurrency: 3 }),
    ([database, indexer, targets]) => {
      // Read targets with no replicas are the generations of the index: nothing to list.
      const replicas = Option.filter(
        Option.map(targets, (t) => t.replicas()),
        (listed) => listed.length > 0
      )
      const problems = [
        ...(database ? [] : ["the database does not answer"]),
        ...(indexer.problem === null ? [] : [indexer.problem]),
        ...(indexer.health?.problems ?? []),
        ...(Option.isSome(replicas) && !replicas.value.some((r) => r.inRotation)
          ? ["no read replica is in rotation: the primary serves the reads"]
          : [])
      ]
      return {
        status: problems.length === 0 && indexer.health?.status === "ok" ? "ok" : "degraded",
        database: database ? "up" : "down",
        indexer: indexer.up ? "up" : "down",
        latestIndexedBlock: indexer.health?.latestIndexedBlock ?? null,
        headBlock: indexer.health?.headBlock ?? null,
        lagBlocks: indexer.health?.lagBlocks ?? null,
        indexerAgeSeconds: indexer.health?.indexerAgeSeconds ?? null,
        rpcAgeSeconds: indexer.health?.rpcAgeSeconds ?? null,
        problems,
        ...(Option.isSome(replicas) ? { readReplicas: replicas.value } : {})
      } as const
    }
  )

const healthAnswer = own(SystemHealth)
const readyAnswer = own(Readiness)
const versionAnswer = own(Version)

export const systemHandlers = (indexerUrl: string) => ({
  health: healthAnswer(() =>
    Effect.flatMap(systemHealth(indexerUrl), (data) =>
      data.status === "ok" ? Effect.succeed(data) : Effect.flatMap(requestMeta, (meta) => new Degraded({ data, meta }))
    )
  ),
  // Ready means what healthy means: an instance whose answers would be stale or failing takes no traffic.
  ready: readyAnswer(() =>
    Effect.flatMap(systemHealth(indexerUrl), ({ status }) =>
      status === "ok"
        ? Effect.succeed({ ready: true })
        : Effect.flatMap(requestMeta, (meta) => new NotReady({ data: { ready: false }, meta }))
    )
  ),
  version: versionAnswer(() => BuildInfo)
})

export type SystemRequirements = SqlClient.SqlClient | HttpClient.HttpClient | BuildInfo
