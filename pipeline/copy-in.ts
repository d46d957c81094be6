/**
 * Bulk inserts with `COPY table (columns) FROM STDIN` (text format) on the connection of the
 * transaction in progress, for rows known not to exist yet: appended rows, and keyed rows whose
 * image before the batch is "absent". COPY skips what an `INSERT ... SELECT FROM unnest(...)`
 * costs on both sides: the driver escaping every element into array literals, and Postgres
 * parsing those arrays and running the unnest and the conflict check.
 *
 * Invariant: runs only inside a transaction (the batch's), so the rows commit or vanish with it.
 */
import { SqlClient, SqlError } from "@effect/sql"
import { Effect, Option } from "effect"
import type pg from "pg"
import type { DbValue } from "./tables.js"

const NEEDS_ESCAPE = /[\\\t\n\r]/
const ESCAPES: Record<string, string> = { "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r" }

export const escapeText = (s: string) => (NEEDS_ESCAPE.test(s) ? s.replace(/[\\\t\n\r]/g, (c) => ESCAPES[c]!) : s)

/** One value in COPY's text format: `\N` for null, JSON for jsonb values, escaped text otherwise. */
export const copyField = (v: DbValue): string => {
  if (v === null) return "\\N"
  switch (typeof v) {
    case "string":
      return escapeText(v)
    case "number":
      return String(v)
    case "boolean":
      return v ? "t" : "f"
    default:
      return escapeText(JSON.stringify(v))
  }
}

/** Rows (values in column order) as COPY text: one line per row, tab-separated. */
export const copyText = (rows: ReadonlyArray<ReadonlyArray<DbValue>>): string => {
  let text = ""
  for (const row of rows) {
    let line = copyField(row[0]!)
    for (let i = 1; i < row.length; i++) line += `\t${copyField(row[i]!)}`
    text += `${line}\n`
  }
  return text
}

interface CopyConnection {
  sendCopyFromChunk(chunk: Buffer): void
  endCopyFrom(): void
  readonly stream: { readonly writable: boolean; write(frame: Buffer): boolean }
}

/** What a COPY sends: a payload (node-postgres frames it, copying it), or one CopyData message framed already. */
type CopyPayload = { readonly payload: Buffer } | { readonly frame: Buffer }

/**
 * A COPY FROM STDIN as a node-postgres submittable: sends the payload once the server asks for
 * it. Settles on ReadyForQuery, or at once on an error: node-postgres drops a query from its
 * bookkeeping when the server reports an error, so that query never hears ReadyForQuery.
 */
const copyFrom = (client: pg.Client, statement: string, data: CopyPayload) =>
  new Promise<void>((resolve, reject) => {
    const submittable = {
      submit: (connection: { query: (text: string) => void }) => connection.query(statement),
      handleCopyInResponse: (connection: CopyConnection) => {
        // As node-postgres sends its own messages: not into a stream that can no longer be written
        // (the connection's error then fails the query).
        if ("frame" in data) {
          if (connection.stream.writable) connection.stream.write(data.frame)
        } else connection.sendCopyFromChunk(data.payload)
        connection.endCopyFrom()
      },
      handleError: (error: unknown) => reject(error),
      handleReadyForQuery: () => resolve(),
      handleCommandComplete: () => undefined,
      handleRowDescription: () => undefined,
      handleDataRow: () => undefined,
      handleEmptyQuery: () => undefined,
      handlePortalSuspended: () => undefined,
      handleCopyData: () => undefined
    }
    client.query(submittable as unknown as pg.Submittable)
  })

/** Inserts `rows` into `table` (`columns` in the rows' order) with one COPY, in the current transaction. */
export const copyIn = (table: string, columns: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<DbValue>>) =>
  Effect.suspend(() => {
    const text = new CopyText()
    if (rows.length > 0) text.add(copyText(rows))
    return copyInText(table, columns, text)
  })

/** Buffers of COPY text whose COPY has completed, for the next ones (see CopyText). */
const freeBuffers: Array<Buffer> = []
const POOLED_BUFFERS = 64
const SMALLEST_BUFFER = 64 * 1024
/** A CopyData message: its type byte, then its length (itself included) as a 32-bit integer. */
const COPY_DATA = 0x64
const HEADER = 5
/** Lines are joined into a string of about this many characters before it is written into the buffer. */
const WRITE_EVERY = 16 * 1024

const acquireBuffer = (bytes: number): Buffer => {
  let best = -1
  for (let i = 0; i < freeBuffers.length; i++) {
    const size = freeBuffers[i]!.length
    if (size >= bytes && (best < 0 || size < freeBuffers[best]!.length)) best = i
  }
  if (best >= 0) return freeBuffers.splice(best, 1)[0]!
  let size = SMALLEST_BUFFER
  while (size < bytes) size *= 2
  return Buffer.allocUnsafeSlow(size)
}

const releaseBuffer = (buffer: Buffer) => {
  freeBuffers.push(buffer)
  if (freeBuffers.length > POOLED_BUFFERS) {
    let smallest = 0
    for (let i = 1; i < freeBuffers.length; i++) if (freeBuffers[i]!.length < freeBuffers[smallest]!.length) smallest = i
    freeBuffers.splice(smallest, 1)
  }
}

/**
 * COPY text written into a pooled Buffer outside the JS heap as it is built, a few thousand
 * characters at a time. A batch's text (tens of MB) used to be one string, alive from the plan
 * to the end of its COPY while the next batch folds: every young-generation collection on the
 * way copied it and then promoted it, a third of all the indexing thread promoted (allocation
 * sampling, 2026-11-29). Buffers go back to the pool once their COPY has completed, so the
 * process's external memory stays level instead of growing batch by batch (which makes V8
 * run full collections).
 */
export class CopyText {
  private buffer: Buffer | undefined = undefined
  /** Bytes used in `buffer`, the message header included. */
  private bytes = HEADER
  private pending = ""

  /** Appends `lines` (COPY text: tab-separated fields, each line ending in a newline). */
  add(lines: string): void {
    this.pending += lines
    if (this.pending.length >= WRITE_EVERY) this.write()
  }

  get empty(): boolean {
    return this.bytes === HEADER && this.pending.length === 0
  }

  private write() {
    const text = this.pending
    this.pending = ""
    // At most three bytes per UTF-16 unit (a surrogate pair is two units for four bytes).
    const need = this.bytes + text.length * 3
    if (this.buffer === undefined || this.buffer.length < need) {
      const bigger = acquireBuffer(need)
      if (this.buffer !== undefined) {
        this.buffer.copy(bigger, 0, 0, this.bytes)
        releaseBuffer(this.buffer)
      }
      this.buffer = bigger
    }
    this.bytes += this.buffer.write(text, this.bytes, "utf8")
  }

  /**
   * Sends the text as one CopyData message, framed in place (the buffer's first bytes were kept
   * for the header), with `send`; the buffer goes back to the pool once `send` has succeeded
   * (the server has read all of it). After a failure it is dropped instead: the socket may still
   * hold it for writing.
   */
  send<E, R>(send: (frame: Buffer) => Effect.Effect<void, E, R>): Effect.Effect<void, E, R> {
    return Effect.suspend(() => {
      if (this.pending.length > 0) this.write()
      const buffer = this.buffer
      this.buffer = undefined
      if (buffer === undefined) return Effect.void
      buffer[0] = COPY_DATA
      buffer.writeInt32BE(this.bytes - 1, 1)
      return Effect.tap(send(buffer.subarray(0, this.bytes)), () => releaseBuffer(buffer))
    })
  }
}

/**
 * Runs `statement` (a COPY FROM STDIN into `table`) with `data`, on the node-postgres client of
 * the transaction in progress; a failure is a typed SqlError, a COPY outside a transaction a defect.
 */
const copyInTransaction = (table: string, statement: string, data: CopyPayload) =>
  Effect.gen(function* () {
    const transaction = yield* Effect.serviceOption(SqlClient.TransactionConnection)
    // @effect/sql-pg's transaction connection holds its reserved node-postgres client as `pg`.
    const client = Option.isSome(transaction) ? ((transaction.value[0] as unknown as { pg?: pg.Client }).pg ?? undefined) : undefined
    if (client === undefined) return yield* Effect.die(new Error(`COPY into ${table} outside a transaction`))
    yield* Effect.tryPromise({
      try: () => copyFrom(client, statement, data),
      catch: (cause) =>
        new SqlError.SqlError({ cause, message: `COPY into ${table} failed: ${String((cause as Error)?.message ?? cause)}` })
    })
  })

/**
 * Inserts rows already in COPY's text format (`copyText`'s lines, or the sink's compiled
 * encoders of `rows-sink.ts`) into `table` with one COPY, in the current transaction; nothing
 * for an empty text.
 */
export const copyInText = (table: string, columns: ReadonlyArray<string>, text: CopyText) =>
  Effect.suspend(() =>
    text.empty ? Effect.void : text.send((frame) => copyInTransaction(table, `copy ${table} (${columns.join(", ")}) from stdin`, { frame }))
  )

/**
 * Inserts rows given as a binary COPY payload (signature, header, tuples and trailer: the caller
 * builds it) into `table`, in the current transaction: for bytea, which COPY's text form would
 * send as hex.
 */
export const copyInBinary = (table: string, columns: ReadonlyArray<string>, payload: Buffer) =>
  copyInTransaction(table, `copy ${table} (${columns.join(", ")}) from stdin (format binary)`, { payload })
