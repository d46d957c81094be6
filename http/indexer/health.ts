/**
 * `GET /api/health`: how far the indexer has got. Every value is read from the checkpoint the
 * pipeline commits; before any block is indexed they are null, never invented.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ServiceUnavailable } from "../../schema/errors.js"

export const Health = Schema.Struct({
  status: Schema.Literal("ok").annotations({ description: "the indexer answers and its database is reachable" }),
  chainId: Schema.Int.annotations({ description: "chain the indexer follows" }),
  latestIndexedBlock: Schema.NullOr(Schema.Int).annotations({
    description: "last block whose events are committed; null before the first batch"
  }),
  headBlock: Schema.NullOr(Schema.Int).annotations({ description: "newest chain head seen; null until the head is known" }),
  lagBlocks: Schema.NullOr(Schema.Int).annotations({
    description: "headBlock - latestIndexedBlock; null while either is unknown"
  })
}).annotations({ identifier: "Health" })
export type Health = typeof Health.Type

export const HealthResponse = Schema.Struct({ data: Health, meta: Schema.Null }).annotations({ identifier: "HealthResponse" })

export class HealthGroup extends HttpApiGroup.make("health").add(
  // No query schema: probes may add cache-busting parameters, and the backend's typed client
  // calls it without arguments.
  HttpApiEndpoint.get("health", "/api/health")
    .addSuccess(HealthResponse)
    .addError(ServiceUnavailable.wire)
    .annotate(OpenApi.Summary, "How far the indexer has got: latestIndexedBlock, headBlock, lagBlocks")
) {}
