/**
 * The backend's system endpoints (no /api prefix), declared: `/health` checks the database and
 * the indexer, `/ready` says whether this instance can take traffic (exactly when `/health` is ok;
 * 503 otherwise), `/version` names the build (handlers: `handlers.ts`). Answers use the backend
 * envelope (`schema/envelopes.ts`), the two 503s included: same body as the healthy answer.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, HttpServerResponse, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { BackendItem, BackendMeta } from "../../../schema/envelopes.js"

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
  problems: Schema.Array(Schema.String),
  // Only with DATABASE_READ_URL: each read replica as the last poll found it (`http/core/read-targets.ts`).
  readReplicas: Schema.optional(
    Schema.Array(
      Schema.Struct({
        name: Schema.String,
        inRotation: Schema.Boolean,
        indexedBlock: Schema.NullOr(Schema.Int),
        lagBlocks: Schema.NullOr(Schema.Int),
        problem: Schema.NullOr(Schema.String)
      }).annotations({ identifier: "ReadReplicaHealth" })
    )
  )
}).annotations({ identifier: "SystemHealth" })

/** 503 with the same body as a healthy answer, so a probe and a person read one shape. */
export class Degraded extends Schema.TaggedError<Degraded>()("Degraded", { data: SystemHealth, meta: BackendMeta }) {}

/** Wire form of Degraded: the envelope alone, without the error's tag. */
const DegradedWire = Schema.transform(BackendItem(SystemHealth), Degraded, {
  strict: true,
  decode: (body) => ({ ...body, _tag: "Degraded" as const }),
  encode: ({ data, meta }) => ({ data, meta })
}).annotations(HttpApiSchema.annotations({ status: 503 }))

export const Readiness = Schema.Struct({ ready: Schema.Boolean }).annotations({ identifier: "Readiness" })

export class NotReady extends Schema.TaggedError<NotReady>()("NotReady", { data: Readiness, meta: BackendMeta }) {}

const NotReadyWire = Schema.transform(BackendItem(Readiness), NotReady, {
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
      .addSuccess(BackendItem(SystemHealth))
      .addError(DegradedWire)
      .annotate(OpenApi.Summary, "Database and indexer checks; 503 with the same body when degraded")
  )
  .add(
    HttpApiEndpoint.get("ready", "/ready")
      .addSuccess(BackendItem(Readiness))
      .addError(NotReadyWire)
      .annotate(OpenApi.Summary, "Whether this instance takes traffic (exactly when /health is ok); 503 otherwise")
  )
  .add(HttpApiEndpoint.get("version", "/version").addSuccess(BackendItem(Version)).annotate(OpenApi.Summary, "The running build")) {}
