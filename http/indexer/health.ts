/**
 * `GET /api/health`: how far the indexer has got. Every value is read from the checkpoint the
 * pipeline commits; before any block is indexed they are null, never invented.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
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

const toInt = (value: string | number | null | undefined): number | null =>
  value === null || value === undefined ? null : Number(value)

/** Reads the checkpoint of `chainId`; fails only when the database does not answer. */
export const readHealth = (chainId: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ block_number: string; head_block: string | null }>`
      select block_number, head_block from indexer_checkpoint where chain_id = ${chainId}`
    const latestIndexedBlock = toInt(rows[0]?.block_number)
    const headBlock = toInt(rows[0]?.head_block)
    const lagBlocks = latestIndexedBlock !== null && headBlock !== null ? Math.max(0, headBlock - latestIndexedBlock) : null
    return { status: "ok", chainId, latestIndexedBlock, headBlock, lagBlocks } satisfies Health
  }).pipe(
    // Disconnected: a query stuck in an uninterruptible connect must not hold the answer back.
    Effect.disconnect,
    Effect.timeout("5 seconds"),
    Effect.mapError((error) => new ServiceUnavailable({ message: `database unavailable: ${error.message}` }))
  )
