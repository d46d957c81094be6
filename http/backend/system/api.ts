/**
 * The backend's system endpoints (no /api prefix): `/health` checks the database and the
 * indexer (its API answers, and its own health judges the index current: `health-watch.ts`),
 * `/ready` says whether this instance can take traffic (exactly when `/health` is ok; 503
 * otherwise), `/version` names the build. Both answer within about 2 s whatever hangs.
 * Answers use the backend envelope `{data, meta: {timestamp, version}}`.
 */
import {
  HttpApiClient,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpApiSchema,
  HttpClient,
  HttpServerRequest,
  HttpServerResponse,
  OpenApi
} from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Cause, Effect, Option, Schema } from "effect"
import { ServiceUnavailable } from "../../../schema/errors.js"
import { type Health, IndexerHealthApi } from "../../core/indexer-health.js"
import { BuildInfo } from "./build-info.js"

/** The API version the backend reports in every envelope (the spec's `meta.version`). */
export const API_VERSION = "v2"

const Meta = Schema.Struct({ timestamp: Schema.Int, version: Schema.String, reqId: Schema.optional(Schema.String) })

/** The envelope's meta, with the request id the middleware settled on (`middleware.ts`). */
export const meta = Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
  const reqId = request.headers["x-request-id"]
  return { timestamp: Math.floor(Date.now() / 1000), version: API_VERSION, ...(reqId === undefined ? {} : { reqId }) }
})

const Check = Schema.Literal("up", "down")

export const SystemHealth = Schema.Struct({
  status: Schema.Literal("ok", "degraded"),
  database: Check,
  indexer: Check,
  latestIndexedBlock: Schema.NullOr(Schema.Int),
  // What the indexer's /api/health judged (`http/indexer/health-watch.ts`); null when it did not answer.
  headBlock: Schema.NullOr(Schema.Int),
  lagBlocks: Schema.NullOr(Schema.Int),
  indexerAgeSeconds: Schema.NullOr(Schema.Number),
  rpcAgeSeconds: Schema.NullOr(Schema.Number),
  problems: Schema.Array(Schema.String)
}).annotations({ identifier: "SystemHealth" })

const envelope = <S extends Schema.Schema.Any>(data: S) => Schema.Struct({ data, meta: Meta })

/** 503 with the same body as a healthy answer, so a probe and a person read one shape. */
export class Degraded extends Schema.TaggedError<Degraded>()("Degraded", { data: SystemHealth, meta: Meta }) {}

/** Wire form of Degraded: the envelope alone, without the error's tag. */
const DegradedWire = Schema.transform(envelope(SystemHealth), Degraded, {
  strict: true,
  decode: (body) => ({ ...body, _tag: "Degraded" as const }),
  encode: ({ data, meta }) => ({ data, meta })
}).annotations(HttpApiSchema.annotations({ status: 503 }))

export const Readiness = Schema.Struct({ ready: Schema.Boolean }).annotations({ identifier: "Readiness" })

export class NotReady extends Schema.TaggedError<NotReady>()("NotReady", { data: Readiness, meta: Meta }) {}

const NotReadyWire = Schema.transform(envelope(Readiness), NotReady, {
  strict: true,
  decode: (body) => ({ ...body, _tag: "NotReady" as const }),
  encode: ({ data, meta }) => ({ data, meta })
}).annotations(HttpApiSchema.annotations({ status: 503 }))

/**
 * The answer to a failure of a system endpoint, or undefined for any other failure: the backend's
 * middleware (`middleware.ts`) renders every failure itself, and these two are answers, not
 * errors (a 503 with the same envelope as the healthy answer; never a 500, never logged as an error).
 */
export const systemFailureResponse = (failure: unknown): HttpServerResponse.HttpServerResponse | undefined =>
  failure instanceof Degraded || failure instanceof NotReady
    ? HttpServerResponse.unsafeJson({ data: failure.data, meta: failure.meta }, { status: 503 })
    : undefined

export const Version = Schema.Struct({ version: Schema.String, commit: Schema.String }).annotations({ identifier: "Version" })

export class SystemGroup extends HttpApiGroup.make("system")
  .add(
    HttpApiEndpoint.get("health", "/health")
      .addSuccess(envelope(SystemHealth))
      .addError(DegradedWire)
      .annotate(OpenApi.Summary, "Database and indexer checks; 503 with the same body when degraded")
  )
  .add(
    HttpApiEndpoint.get("ready", "/ready")
      .addSuccess(envelope(Readiness))
      .addError(NotReadyWire)
      .annotate(OpenApi.Summary, "Whether this instance takes traffic (exactly when /health is ok); 503 otherwise")
  )
  .add(HttpApiEndpoint.get("version", "/version").addSuccess(envelope(Version)).annotate(OpenApi.Summary, "The running build")) {}

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

/** The combined judgement: ok only when the database answers and the indexer answers ok. */
const systemHealth = (indexerUrl: string) =>
  Effect.map(Effect.all([databaseUp, indexerHealth(indexerUrl)], { concurrency: 2 }), ([database, indexer]) => {
    const problems = [
      ...(database ? [] : ["the database does not answer"]),
      ...(indexer.problem === null ? [] : [indexer.problem]),
      ...(indexer.health?.problems ?? [])
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
      problems
    } as const
  })

export const systemHandlers = (indexerUrl: string) => ({
  health: Effect.gen(function* () {
    const data = yield* systemHealth(indexerUrl)
    const m = yield* meta
    return data.status === "ok" ? { data, meta: m } : yield* new Degraded({ data, meta: m })
  }),
  // Ready means what healthy means: an instance whose answers would be stale or failing takes no traffic.
  ready: Effect.gen(function* () {
    const { status } = yield* systemHealth(indexerUrl)
    const m = yield* meta
    return status === "ok" ? { data: { ready: true }, meta: m } : yield* new NotReady({ data: { ready: false }, meta: m })
  }),
  version: Effect.zipWith(BuildInfo, meta, (info, m) => ({ data: info, meta: m }))
})

export type SystemRequirements = SqlClient.SqlClient | HttpClient.HttpClient | BuildInfo
