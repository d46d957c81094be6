/**
 * The database the whole service talks to: `DATABASE_URL` when it is set, otherwise the
 * embedded cluster under `DATA_DIR`. Either way the rest of the program sees one `SqlClient`
 * (and `PgClient`, for LISTEN/NOTIFY and streaming) and never knows which.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Option, Redacted, Runtime, Schedule } from "effect"
import * as Path from "node:path"
import { AppConfig, redactUrl } from "../config.js"
import { embeddedPostgres } from "./embedded-postgres.js"

/** Name of the application database inside the embedded cluster. */
export const EMBEDDED_DATABASE = "predix"

/** Where the connection goes, for logs and health answers (password hidden). */
export interface DatabaseTarget {
  readonly kind: "embedded" | "external"
  readonly url: Redacted.Redacted<string>
}

/** Starts the embedded cluster if needed; the cluster lives as long as the enclosing scope. */
export const databaseTarget = Effect.gen(function* () {
  const config = yield* AppConfig
  // The cluster's lines go through this program's logger (its level and format), not the default one.
  const log = Runtime.runFork(yield* Effect.runtime<never>())
  if (Option.isSome(config.databaseUrl)) {
    return { kind: "external", url: config.databaseUrl.value } satisfies DatabaseTarget
  }
  const embedded = yield* embeddedPostgres({
    dir: Path.join(config.dataDir, "postgres"),
    port: config.pgPort,
    database: EMBEDDED_DATABASE,
    onLog: (line) => void log(Effect.logDebug(line).pipe(Effect.annotateLogs("source", "postgres")))
  })
  return { kind: "embedded", url: embedded.url } satisfies DatabaseTarget
})

/** A pooled client for a URL; NUMERIC and INT8 stay strings so no amount passes through a JS number. */
export const pgClientLayer = (url: Redacted.Redacted<string>) =>
  PgClient.layer({ url, applicationName: "predix", maxConnections: 10, idleTimeout: "30 seconds", connectTimeout: "5 seconds" })

/**
 * `pgClientLayer`, built again until the database answers (each failure logged, the pause growing
 * from 100 ms to at most 5 s): for an indexer child, which must outlast an outage, not end on it.
 */
export const patientPgClient = (url: Redacted.Redacted<string>) =>
  pgClientLayer(url).pipe(
    Layer.tapError((error) =>
      Effect.logError("database unavailable; retrying").pipe(Effect.annotateLogs({ phase: "starting", error: error.message }))
    ),
    Layer.retry(Schedule.exponential("100 millis").pipe(Schedule.either(Schedule.spaced("5 seconds"))))
  )

/** `SqlClient` + `PgClient` over the configured or embedded database. */
export const DatabaseLive = Layer.unwrapScoped(
  Effect.gen(function* () {
    const target = yield* databaseTarget
    yield* Effect.logInfo("database").pipe(Effect.annotateLogs({ kind: target.kind, url: redactUrl(Redacted.value(target.url)) }))
    return pgClientLayer(target.url)
  })
)
