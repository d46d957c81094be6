/**
 * The backend's system endpoints (no /api prefix): `/health` checks the database and the
 * indexer, `/ready` says whether this instance can take traffic, `/version` names the build.
 * Answers use the backend envelope `{data, meta: {timestamp, version}}`.
 */
import { HttpApiClient, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, HttpClient, HttpServerRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { IndexerApi } from "../indexer/api.js"
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
  latestIndexedBlock: Schema.NullOr(Schema.Int)
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

export const Version = Schema.Struct({ version: Schema.String, commit: Schema.String }).annotations({ identifier: "Version" })

export class SystemGroup extends HttpApiGroup.make("system")
  .add(HttpApiEndpoint.get("health", "/health").addSuccess(envelope(SystemHealth)).addError(DegradedWire))
  .add(HttpApiEndpoint.get("ready", "/ready").addSuccess(envelope(Readiness)).addError(NotReadyWire))
  .add(HttpApiEndpoint.get("version", "/version").addSuccess(envelope(Version))) {}

const databaseUp = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`select 1`).pipe(
  Effect.disconnect,
  Effect.timeout("2 seconds"),
  Effect.as(true),
  Effect.orElseSucceed(() => false)
)

/** Asks the indexer through its typed client; any failure or slow answer counts as down. */
const indexerHealth = (indexerUrl: string) =>
  HttpApiClient.make(IndexerApi, { baseUrl: indexerUrl }).pipe(
    Effect.flatMap((client) => client.health.health()),
    Effect.disconnect,
    Effect.timeout("2 seconds"),
    Effect.map((answer) => ({ up: true, latestIndexedBlock: answer.data.latestIndexedBlock })),
    Effect.orElseSucceed(() => ({ up: false, latestIndexedBlock: null }))
  )

export const systemHandlers = (indexerUrl: string) => ({
  health: Effect.gen(function* () {
    const [database, indexer] = yield* Effect.all([databaseUp, indexerHealth(indexerUrl)], { concurrency: 2 })
    const m = yield* meta
    const data = {
      status: database && indexer.up ? "ok" : "degraded",
      database: database ? "up" : "down",
      indexer: indexer.up ? "up" : "down",
      latestIndexedBlock: indexer.latestIndexedBlock
    } as const
    return data.status === "ok" ? { data, meta: m } : yield* new Degraded({ data, meta: m })
  }),
  ready: Effect.gen(function* () {
    const m = yield* meta
    return (yield* databaseUp) ? { data: { ready: true }, meta: m } : yield* new NotReady({ data: { ready: false }, meta: m })
  }),
  version: Effect.zipWith(BuildInfo, meta, (info, m) => ({ data: info, meta: m }))
})

export type SystemRequirements = SqlClient.SqlClient | HttpClient.HttpClient | BuildInfo
