/**
 * `GET /metrics` on the indexer port, in the Prometheus text format (version 0.0.4).
 *
 * The indexer runs in a process of its own (`start --only indexer`) and any number of API
 * processes may serve one database, so the indexer publishes its metrics in Postgres
 * (`indexer_metrics`, replaced after every poll of the tip and every few seconds of a backfill)
 * and every API process serves the latest publication, followed by what the API reads itself
 * at the scrape: the checkpoint (so the lag is current even when the indexer has stopped) and
 * the publication's age (so a stopped indexer shows).
 */
import { HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { lagOf, readCheckpoint } from "../../schema/io/indexer-checkpoint.js"

export const METRICS_PATH = "/metrics"

const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

const gauge = (name: string, help: string, value: number | null) =>
  value === null ? [] : [`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, `${name} ${value}`]

/** The scrape's body: the indexer's last publication, then the API's own readings. */
export const metricsBody = (chainId: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [published] = yield* sql<{ body: string; age: string }>`
      select body, extract(epoch from now() - updated_at)::text as age from indexer_metrics where chain_id = ${chainId}`
    const checkpoint = yield* readCheckpoint(chainId)
    const own = [
      ...gauge("predix_checkpoint_block", "Last block whose changes are committed, as the database holds it", checkpoint?.block ?? null),
      ...gauge("predix_checkpoint_head_block", "Newest chain head the indexer has recorded", checkpoint?.head ?? null),
      ...gauge("predix_checkpoint_lag_blocks", "Blocks between the newest head recorded and the last committed", lagOf(checkpoint)),
      ...gauge(
        "predix_indexer_metrics_age_seconds",
        "Seconds since the indexer process last published its metrics",
        published === undefined ? null : Number(published.age)
      )
    ]
    return (published?.body ?? "") + own.join("\n") + (own.length > 0 ? "\n" : "")
  })

/** The answer to a scrape; a 503 when the database does not answer. */
export const metricsAnswer = (chainId: number) =>
  metricsBody(chainId).pipe(
    Effect.disconnect,
    Effect.timeout("5 seconds"),
    Effect.map((body) => HttpServerResponse.text(body, { contentType: CONTENT_TYPE })),
    Effect.catchAll((error) =>
      Effect.succeed(HttpServerResponse.text(`# database unavailable: ${error.message}\n`, { status: 503, contentType: CONTENT_TYPE }))
    )
  )
