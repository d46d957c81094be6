/**
 * Reaching the indexer API from beside it: where this process's indexer answers
 * (`IndexerEndpoint`) and the contract of the one endpoint the backend calls over HTTP,
 * `GET /api/health` (its breaker's probe and its own `/health`). The indexer's definition adds
 * the same group (`http/indexer/definition.ts`), so server and client share one declaration and
 * the backend needs no other indexer module.
 *
 * `GET /api/health`: how far the indexer has got and whether that can be trusted to be current
 * (`http/indexer/health-watch.ts` judges). Indexed values come from the checkpoint the pipeline
 * commits, the head from the node itself; before they are known they are null, never invented.
 * 200 with `status` ok or degraded while the database answers (the index is still served, with
 * its age stated), 503 `ServiceUnavailable` when it does not.
 */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Context, Schema } from "effect"
import { InvalidParameter, NotFound, ServiceUnavailable } from "../../schema/errors.js"

export const Health = Schema.Struct({
  status: Schema.Literal("ok", "degraded").annotations({
    description:
      "ok: the database answers and the index is current; degraded: the index trails the head by more than HEALTH_MAX_LAG_BLOCKS, or the indexer or the node has been silent longer than HEALTH_MAX_STALE_SECONDS (see problems)"
  }),
  chainId: Schema.Int.annotations({ description: "chain the indexer follows" }),
  latestIndexedBlock: Schema.NullOr(Schema.Int).annotations({
    description: "last block whose events are committed; null before the first batch"
  }),
  headBlock: Schema.NullOr(Schema.Int).annotations({
    description:
      "newest chain head known: the node's own answer (read every second) or the indexer's record, whichever is newer; null until one is known"
  }),
  lagBlocks: Schema.NullOr(Schema.Int).annotations({
    description: "headBlock - latestIndexedBlock; null while either is unknown"
  }),
  indexedAgeSeconds: Schema.optionalWith(Schema.NullOr(Schema.Number), { default: () => null }).annotations({
    description: "seconds since the last indexed block was committed; null before the first"
  }),
  indexerAgeSeconds: Schema.optionalWith(Schema.NullOr(Schema.Number), { default: () => null }).annotations({
    description: "seconds since the indexer last reported progress (after every poll of the tip); null before its first report"
  }),
  rpcAgeSeconds: Schema.optionalWith(Schema.NullOr(Schema.Number), { default: () => null }).annotations({
    description: "seconds since the node last answered this API's eth_blockNumber; null before its first answer or when no node is known"
  }),
  problems: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }).annotations({
    description: "why the status is degraded, one sentence each; empty when ok"
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
    .annotate(
      OpenApi.Summary,
      "How far the indexer has got and whether it is current: latestIndexedBlock, headBlock, lagBlocks, ages, status"
    )
) {}

/**
 * The indexer API as far as a client of its health sees it: the health group and the errors the
 * whole indexer API declares (`http/indexer/definition.ts`), so a typed client decodes every
 * answer of `/api/health` as one made from the full definition would.
 */
export class IndexerHealthApi extends HttpApi.make("indexer")
  .add(HealthGroup)
  .addError(InvalidParameter.wire)
  .addError(NotFound.wire)
  .addError(ServiceUnavailable.wire) {}

/** Where this process's indexer API answers, once its server is listening. */
export class IndexerEndpoint extends Context.Tag("predix/IndexerEndpoint")<IndexerEndpoint, { readonly url: string }>() {}
