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
}

/**
 * A COPY FROM STDIN as a node-postgres submittable: sends `payload` once the server asks for it.
 * Settles on ReadyForQuery, or at once on an error: node-postgres drops a query from its
 * bookkeeping when the server reports an error, so that query never hears ReadyForQuery.
 */
const copyFrom = (client: pg.Client, statement: string, payload: Buffer) =>
  new Promise<void>((resolve, reject) => {
    const submittable = {
      submit: (connection: { query: (text: string) => void }) => connection.query(statement),
      handleCopyInResponse: (connection: CopyConnection) => {
        connection.sendCopyFromChunk(payload)
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
  copyInText(table, columns, rows.length === 0 ? "" : copyText(rows))

/**
 * Inserts rows already in COPY's text format (`copyText`'s lines, or the sink's compiled
 * encoders of `rows-sink.ts`) into `table` with one COPY, in the current transaction; nothing
 * for "".
 */
export const copyInText = (table: string, columns: ReadonlyArray<string>, text: string) =>
  Effect.gen(function* () {
    if (text.length === 0) return
    const transaction = yield* Effect.serviceOption(SqlClient.TransactionConnection)
    // @effect/sql-pg's transaction connection holds its reserved node-postgres client as `pg`.
    const client = Option.isSome(transaction) ? ((transaction.value[0] as unknown as { pg?: pg.Client }).pg ?? undefined) : undefined
    if (client === undefined) return yield* Effect.die(new Error(`COPY into ${table} outside a transaction`))
    const payload = Buffer.from(text, "utf8")
    yield* Effect.tryPromise({
      try: () => copyFrom(client, `copy ${table} (${columns.join(", ")}) from stdin`, payload),
      catch: (cause) =>
        new SqlError.SqlError({ cause, message: `COPY into ${table} failed: ${String((cause as Error)?.message ?? cause)}` })
    })
  })

/**
 * Inserts rows given as a binary COPY payload (signature, header, tuples and trailer: the caller
 * builds it) into `table`, in the current transaction: for bytea, which COPY's text form would
 * send as hex.
 */
export const copyInBinary = (table: string, columns: ReadonlyArray<string>, payload: Buffer) =>
  Effect.gen(function* () {
    const transaction = yield* Effect.serviceOption(SqlClient.TransactionConnection)
    const client = Option.isSome(transaction) ? ((transaction.value[0] as unknown as { pg?: pg.Client }).pg ?? undefined) : undefined
    if (client === undefined) return yield* Effect.die(new Error(`COPY into ${table} outside a transaction`))
    yield* Effect.tryPromise({
      try: () => copyFrom(client, `copy ${table} (${columns.join(", ")}) from stdin (format binary)`, payload),
      catch: (cause) =>
        new SqlError.SqlError({ cause, message: `COPY into ${table} failed: ${String((cause as Error)?.message ?? cause)}` })
    })
  })
