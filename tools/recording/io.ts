/**
 * Streaming reader and writer for recordings. Both hold one line at a time, so memory stays
 * flat whatever the recording's size.
 */
import * as fs from "node:fs"
import * as readline from "node:readline"
import * as zlib from "node:zlib"
import { parseRecord, type Record } from "./format.js"

/** Yields the records of a recording in file order. */
export async function* readRecords(path: string): AsyncGenerator<Record> {
  const input = fs.createReadStream(path).pipe(zlib.createGunzip())
  const lines = readline.createInterface({ input, crlfDelay: Infinity })
  let lineNumber = 0
  for await (const line of lines) {
    lineNumber++
    if (line.trim() === "") continue
    yield parseRecord(line, lineNumber)
  }
}

export interface RecordWriter {
  /** Queues a record; resolves once the stream accepts more (backpressure). */
  readonly write: (record: Record) => Promise<void>
  /** Flushes and closes the file (one complete gzip member). */
  readonly close: () => Promise<void>
}

/**
 * Writes records as gzip NDJSON. With `append`, a new gzip member is added after the existing
 * ones, which is how a resumed recording continues.
 */
export const writeRecords = (path: string, options: { readonly append?: boolean; readonly level?: number } = {}): RecordWriter => {
  const file = fs.createWriteStream(path, { flags: options.append ? "a" : "w" })
  const gzip = zlib.createGzip({ level: options.level ?? 6 })
  gzip.pipe(file)
  const failed = new Promise<never>((_, reject) => {
    file.once("error", reject)
    gzip.once("error", reject)
  })
  failed.catch(() => undefined)
  return {
    write: (record) =>
      gzip.write(`${JSON.stringify(record)}\n`)
        ? Promise.resolve()
        : Promise.race([new Promise<void>((resolve) => gzip.once("drain", () => resolve())), failed]),
    close: () =>
      Promise.race([
        new Promise<void>((resolve) => {
          file.once("close", () => resolve())
          gzip.end()
        }),
        failed
      ])
  }
}
