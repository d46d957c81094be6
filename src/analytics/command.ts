/**
 * The `export` job behind the command line: find the database (`source.ts`), write the snapshot
 * (`export.ts`) with progress on a terminal, and log one summary line with stable keys.
 */
import { Effect, Option } from "effect"
import * as Path from "node:path"
import { redactUrl } from "../config.js"
import { exportSnapshot } from "./export.js"
import { progressOn } from "./progress.js"
import { exportSource } from "./source.js"

export interface ExportArgs {
  readonly out: string
  readonly parquet: Option.Option<string>
  readonly includeUnfinalized: boolean
  readonly full: boolean
}

const cpuSeconds = (usage: NodeJS.CpuUsage) => Number(((usage.user + usage.system) / 1e6).toFixed(2))

export const exportJob = (args: ExportArgs) =>
  Effect.scoped(
    Effect.gen(function* () {
      const source = yield* exportSource
      yield* Effect.logInfo("exporting").pipe(
        Effect.annotateLogs({ source: source.kind, url: redactUrl(source.url), out: Path.resolve(args.out), tip: args.includeUnfinalized })
      )
      const cpuStarted = process.cpuUsage()
      const result = yield* exportSnapshot(source.url, {
        out: args.out,
        parquetDir: Option.getOrUndefined(args.parquet),
        includeUnfinalized: args.includeUnfinalized,
        full: args.full,
        progress: progressOn()
      })
      if (result.fullBecause !== undefined)
        yield* Effect.logWarning("full export instead of a refresh").pipe(Effect.annotateLogs({ reason: result.fullBecause }))
      yield* Effect.logInfo("export written").pipe(
        Effect.annotateLogs({
          out: Path.resolve(args.out),
          mode: result.mode,
          generation: result.point.generation,
          chain_id: result.point.chainId,
          block: result.point.block,
          hash: result.point.hash,
          finalized: !result.point.includesUnfinalized,
          tables: result.tables.length,
          rows: result.tables.reduce((sum, t) => sum + t.rows, 0),
          rows_written: result.rowsWritten,
          seconds: Number(result.seconds.toFixed(2)),
          rows_per_s: Math.round(result.rowsWritten / Math.max(result.seconds, 0.001)),
          peak_rss_mib: Math.round(process.resourceUsage().maxRSS / 1024),
          // CPU of this process (all its threads, DuckDB's included) during the export: with
          // `seconds`, tells its own work from waiting on Postgres or the machine.
          cpu_s: cpuSeconds(process.cpuUsage(cpuStarted)),
          parquet_files: result.parquet.length
        })
      )
    })
  )
