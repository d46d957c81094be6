/**
 * Which database an export reads, in this order:
 * 1. `DATABASE_URL` when it is set;
 * 2. the embedded Postgres of a running `npm start` on the same DATA_DIR, found through the
 *    `connection.json` it writes next to its cluster (its server's pid must be alive). The export
 *    is one more client of that server; the service keeps running;
 * 3. otherwise the embedded cluster under DATA_DIR, started for the export's duration (while
 *    it runs, a `npm start` on the same DATA_DIR refuses to start; it is stopped afterwards).
 */
import { Effect, Option, Redacted } from "effect"
import * as fs from "node:fs/promises"
import * as Path from "node:path"
import { AppConfig } from "../config.js"
import { databaseTarget } from "../db/database.js"
import { SnapshotSourceError } from "./errors.js"

export interface ExportSource {
  readonly url: string
  readonly kind: "DATABASE_URL" | "running embedded Postgres" | "embedded Postgres started for the export"
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const readJson = (path: string) =>
  Effect.promise(() =>
    fs.readFile(path, "utf8").then(
      (text) => JSON.parse(text) as { url?: unknown; pid?: unknown },
      () => undefined
    )
  )

const exists = (path: string) =>
  Effect.promise(() =>
    fs.access(path).then(
      () => true,
      () => false
    )
  )

export const exportSource = Effect.gen(function* () {
  const config = yield* AppConfig
  if (Option.isSome(config.databaseUrl))
    return { url: Redacted.value(config.databaseUrl.value), kind: "DATABASE_URL" } satisfies ExportSource
  const dir = Path.join(config.dataDir, "postgres")
  const connection = yield* readJson(Path.join(dir, "connection.json"))
  if (typeof connection?.url === "string" && typeof connection.pid === "number" && isAlive(connection.pid)) {
    return { url: connection.url, kind: "running embedded Postgres" } satisfies ExportSource
  }
  if (!(yield* exists(Path.join(dir, "cluster", "PG_VERSION")))) {
    return yield* new SnapshotSourceError({
      message: `no database to export: DATABASE_URL is unset and ${dir} holds no embedded cluster (run npm start first, or set DATABASE_URL or DATA_DIR)`
    })
  }
  const target = yield* databaseTarget.pipe(
    Effect.mapError(
      (error) => new SnapshotSourceError({ message: `cannot start the embedded Postgres in ${dir}: ${error.message}`, cause: error })
    )
  )
  return { url: Redacted.value(target.url), kind: "embedded Postgres started for the export" } satisfies ExportSource
})
