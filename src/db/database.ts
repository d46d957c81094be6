/**
 * The database the whole service talks to: `DATABASE_URL` when it is set, otherwise the
 * embedded cluster under `DATA_DIR`. Either way the rest of the program sees one `SqlClient`
 * (and `PgClient`, for LISTEN/NOTIFY and streaming) and never knows which.
 */
import type { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Option, Redacted, Runtime, Schedule } from "effect"
import * as Path from "node:path"
import pg from "pg"
import { preparedName } from "../../http/core/prepared.js"
import { AppConfig, redactUrl } from "../config.js"
import { embeddedPostgres } from "./embedded-postgres.js"
import { type PgWork, WireCounters } from "./wire-counters.js"

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

/** The `application_name` of the service's connections (pg_stat_activity shows them under it). */
export const PG_APPLICATION_NAME = "predix"

/**
 * A pg client that sends the texts marked by `http/core/prepared.ts` as named prepared statements
 * (parsed and planned once per connection), every other text as before. @effect/sql-pg runs
 * statements as `query(text, values, callback)`; that is the one form changed.
 */
class PreparingClient extends pg.Client {
  override query(...args: Array<unknown>): never {
    const [text, values, callback] = args
    const name = typeof text === "string" && Array.isArray(values) ? preparedName(text) : undefined
    const call = super.query as (...a: Array<unknown>) => never
    return name === undefined ? call.apply(this, args) : call.call(this, { name, text, values }, callback)
  }
}

/**
 * A pooled client for a URL; NUMERIC and INT8 stay strings so no amount passes through a JS number.
 * With `counters`, every connection of the pool (the LISTEN one included) counts its wire work there.
 * With `searchPath`, every connection of the pool resolves unqualified names there (set at connect,
 * no statement per request): a generation's pool of the blue-green re-index (`generations.ts`).
 */
export const pgClientLayer = (url: Redacted.Redacted<string>, counters?: WireCounters, searchPath?: ReadonlyArray<string>) =>
  PgClient.layerFromPool({
    acquire: Effect.acquireRelease(
      Effect.gen(function* () {
        const pool = new pg.Pool({
          connectionString: Redacted.value(url),
          application_name: PG_APPLICATION_NAME,
          max: 10,
          idleTimeoutMillis: 30_000,
          connectionTimeoutMillis: 5_000,
          Client: PreparingClient,
          ...(searchPath === undefined ? {} : { options: `-c search_path=${searchPath.map((s) => `"${s}"`).join(",")}` }),
          ...(counters === undefined ? {} : { stream: counters.stream })
        })
        pool.on("error", () => {})
        // Fail now, as a SqlError, when the database does not answer (`patientPgClient` retries on it).
        yield* Effect.tryPromise({
          try: () => pool.query("select 1"),
          catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
        }).pipe(
          Effect.timeoutFail({
            duration: "5 seconds",
            onTimeout: () => new SqlError({ cause: new Error("Connection timed out"), message: "PgClient: Connection timed out" })
          }),
          Effect.tapError(() => Effect.promise(() => pool.end()))
        )
        return pool
      }),
      (pool) => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(1_000))
    ),
    applicationName: PG_APPLICATION_NAME
  })

/**
 * `pgClientLayer`, built again until the database answers (each failure logged, the pause growing
 * from 100 ms to at most 5 s): for an indexer child, which must outlast an outage, not end on it.
 */
export const patientPgClient = (url: Redacted.Redacted<string>, counters?: WireCounters) =>
  pgClientLayer(url, counters).pipe(
    Layer.tapError((error) =>
      Effect.logError("database unavailable; retrying").pipe(Effect.annotateLogs({ phase: "starting", error: error.message }))
    ),
    Layer.retry(Schedule.exponential("100 millis").pipe(Schedule.either(Schedule.spaced("5 seconds"))))
  )

/** The log message of a process's Postgres work at its end (`postgresWorkLine` parses it). */
export const POSTGRES_WORK_MESSAGE = "postgres work"

/** The logfmt keys of `PgWork`'s fields, as the line carries them. */
const workKeys: { readonly [K in keyof PgWork]: string } = {
  connections: "connections",
  unparsedConnections: "unparsed_connections",
  statements: "statements",
  rowsWritten: "rows_written",
  rowsInserted: "rows_inserted",
  rowsUpdated: "rows_updated",
  rowsDeleted: "rows_deleted",
  rowsCopied: "rows_copied",
  bytesSent: "bytes_sent",
  bytesReceived: "bytes_received",
  copyBytes: "copy_bytes"
}

/** Parses a `postgres work` log line back into its role and `PgWork` (undefined: another line). */
export const postgresWorkLine = (line: string): { readonly role: string; readonly work: PgWork } | undefined => {
  if (!line.includes(`message="${POSTGRES_WORK_MESSAGE}"`)) return undefined
  const role = /\brole=(\S+)/.exec(line)?.[1]
  if (role === undefined) return undefined
  const work: Record<string, number> = {}
  for (const [field, key] of Object.entries(workKeys)) {
    const value = new RegExp(`\\b${key}=(\\d+)`).exec(line)?.[1]
    if (value === undefined) return undefined
    work[field] = Number(value)
  }
  return { role, work: work as unknown as PgWork }
}

/**
 * `make(counters)`'s pool, counted, and the process's whole wire work logged at info as it ends
 * (`message="postgres work" role=<role> statements=... rows_written=... bytes_sent=...`), after
 * the pool has closed: the figures a work-budget test reads, every connection of the process
 * included. A killed process logs nothing.
 */
export const countedPgClient = <E, R>(
  role: string,
  make: (counters: WireCounters) => Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, E, R>
) =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const counters = new WireCounters()
      // Added before the pool is built, so it runs after the pool's own release (its Terminate messages).
      yield* Effect.addFinalizer(() =>
        Effect.logInfo(POSTGRES_WORK_MESSAGE).pipe(
          Effect.annotateLogs({
            role,
            ...Object.fromEntries(Object.entries(counters.snapshot()).map(([field, value]) => [workKeys[field as keyof PgWork], value]))
          })
        )
      )
      return make(counters)
    })
  )

/** `SqlClient` + `PgClient` over the configured or embedded database. */
export const DatabaseLive = Layer.unwrapScoped(
  Effect.gen(function* () {
    const target = yield* databaseTarget
    yield* Effect.logInfo("database").pipe(Effect.annotateLogs({ kind: target.kind, url: redactUrl(Redacted.value(target.url)) }))
    return pgClientLayer(target.url)
  })
)
