/**
 * The CSV COPY of a query, written as it arrives to a file for DuckDB's CSV reader.
 *
 * Invariants:
 * - memory is one buffer of `BUFFER_BYTES`: payloads are copied into it (the driver reuses their
 *   memory) and the buffer is written out synchronously whenever the next payload would not fit.
 *   A synchronous write keeps the socket unread meanwhile, so a slow disk holds Postgres back
 *   through TCP flow control instead of queueing rows here;
 * - the file holds exactly the bytes Postgres sent, in order; it is complete only when the
 *   returned promise resolves (the caller removes it in any case).
 */
import * as fs from "node:fs"
import type { SnapshotConnection } from "./snapshot.js"

const BUFFER_BYTES = 1 << 20

/** How often (in CopyData messages, one per row as Postgres sends them) progress is reported. */
const REPORT_EVERY = 4096

/**
 * Writes the CSV of `select` to `path` (created or truncated). `onRows` gets a running count of
 * the CopyData messages received, which Postgres sends one per row: a progress figure, not the
 * table's row count (DuckDB counts the rows it loads).
 */
export const copyToFile = async (pg: SnapshotConnection, select: string, path: string, onRows: (rows: number) => void) => {
  const fd = fs.openSync(path, "w")
  try {
    const buffer = Buffer.allocUnsafe(BUFFER_BYTES)
    let used = 0
    let messages = 0
    const write = (bytes: Buffer, length: number) => {
      for (let at = 0; at < length;) at += fs.writeSync(fd, bytes, at, length - at)
    }
    const flush = () => {
      write(buffer, used)
      used = 0
    }
    await pg.copyOut(select, (payload) => {
      if (used + payload.length > BUFFER_BYTES) flush()
      if (payload.length > BUFFER_BYTES) write(payload, payload.length)
      else {
        payload.copy(buffer, used)
        used += payload.length
      }
      if (++messages % REPORT_EVERY === 0) onRows(messages)
    })
    flush()
    onRows(messages)
  } finally {
    fs.closeSync(fd)
  }
}
