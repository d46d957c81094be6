/**
 * One Parquet file per table (and per manifest table), written by DuckDB itself from the
 * snapshot file, so the Parquet files hold exactly the snapshot's rows, types and order.
 *
 * Each file is written under a temporary name in the target directory and renamed over the old
 * one, so a reader never sees a half-written file. (The set of files is replaced one by one; the
 * `manifest.parquet` written last tells which block they stand at.)
 */
import * as fs from "node:fs/promises"
import * as Path from "node:path"
import type { DuckFile } from "./duckdb-writer.js"
import { quoteIdent } from "./columns.js"

export const PARQUET_MEMORY_LIMIT = "256MB"

const literal = (text: string) => `'${text.replace(/'/g, "''")}'`

/** Writes `<dir>/<table>.parquet` for each of `tables` (in order); returns the paths written. */
export const writeParquet = async (file: DuckFile, dir: string, tables: ReadonlyArray<string>, tag: string) => {
  await fs.mkdir(dir, { recursive: true })
  // The Parquet writer holds a whole row group of every column before writing it: give it a
  // larger (still fixed) pool than appending needs, or it spills and slows down tenfold.
  await file.connection.run(`set memory_limit = '${PARQUET_MEMORY_LIMIT}'`)
  const written: Array<{ readonly temp: string; readonly final: string }> = []
  try {
    for (const table of tables) {
      const final = Path.join(dir, `${table}.parquet`)
      const temp = Path.join(dir, `.${table}.parquet.${tag}`)
      written.push({ temp, final })
      await file.connection.run(`copy ${quoteIdent(table)} to ${literal(temp)} (format parquet, compression zstd)`)
    }
    for (const { temp, final } of written) await fs.rename(temp, final)
    return written.map((w) => w.final)
  } catch (error) {
    await Promise.all(written.map((w) => fs.rm(w.temp, { force: true })))
    throw error
  }
}
