/**
 * One consistent view of the index: a single Postgres connection holding a REPEATABLE READ,
 * READ ONLY transaction for the whole export, so every table, the checkpoint and the undo log
 * are read as of the same instant while the pipeline keeps committing. The export never writes
 * to the source database and takes no locks beyond the ones every reader takes.
 *
 * Rows are streamed with `COPY (query) TO STDOUT (FORMAT binary)` inside that transaction. Each
 * CopyData payload is handed to the consumer synchronously, as the driver parses it off the
 * socket, and the consumer decodes it into DuckDB before returning. So nothing queues in this
 * process: while the consumer is busy the socket is not read, the kernel's buffers fill and TCP
 * flow control holds Postgres back. Memory stays flat whatever the table's size.
 */
import { Effect } from "effect"
import pg from "pg"
import { SnapshotSourceError } from "./errors.js"

export interface SnapshotConnection {
  /** Rows of a small query, every value as Postgres's text (no number parsing on the way). */
  readonly query: <R extends object>(text: string) => Promise<ReadonlyArray<R>>
  /**
   * Streams `select` as binary COPY: `onPayload` gets each CopyData payload, valid only until it
   * returns. A throw from it fails the copy (and closes the connection, which is then unusable).
   */
  readonly copyOut: (select: string, onPayload: (payload: Buffer) => void) => Promise<void>
}

/** Every value as the text Postgres sends (null stays null). */
const rawText = { getTypeParser: () => (value: string) => value } as unknown as pg.CustomTypesConfig

export const APPLICATION_NAME = "predix-export"

const redacted = (url: string) => url.replace(/(\/\/[^:/@]+:)[^@]*@/, "$1***@")

/**
 * Connects and opens the snapshot transaction; the connection is closed (the read-only
 * transaction rolled back) when the scope closes.
 */
export const openSnapshot = (url: string) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const client = new pg.Client({ connectionString: url, application_name: APPLICATION_NAME, types: rawText })
        client.on("error", () => undefined)
        await client.connect()
        try {
          await client.query("begin isolation level repeatable read read only")
          // Mutable tables read through the undo log are sorted by key; let that sort run in memory.
          await client.query("set local work_mem = '64MB'")
          // The first statement fixes the snapshot; nothing before it has read data.
          await client.query("select 1")
        } catch (error) {
          await client.end().catch(() => undefined)
          throw error
        }
        return client
      },
      catch: (cause) =>
        new SnapshotSourceError({ message: `cannot open a snapshot of ${redacted(url)}: ${String((cause as Error)?.message ?? cause)}`, cause })
    }),
    (client) => Effect.promise(() => client.query("rollback").then(() => undefined, () => undefined).finally(() => client.end().catch(() => undefined)))
  ).pipe(Effect.map(connectionOf))

interface Connection {
  readonly query: (text: string) => void
  readonly stream: { destroy: (error?: Error) => void }
}

/**
 * A COPY TO STDOUT as a node-postgres submittable: the driver routes the query's protocol
 * messages to these handlers, in order, and moves to its next query after ReadyForQuery.
 */
const copyOut = (client: pg.Client, select: string, onPayload: (payload: Buffer) => void) =>
  new Promise<void>((resolve, reject) => {
    let failure: unknown
    let settled = false
    let connection: Connection | undefined
    const settle = (error: unknown) => {
      if (settled) return
      settled = true
      client.removeListener("end", onEnd)
      if (error === undefined) resolve()
      else reject(error)
    }
    const onEnd = () => settle(failure ?? new Error("the connection closed during COPY"))
    const submittable = {
      submit: (c: Connection) => {
        connection = c
        c.query(`copy (${select}) to stdout with (format binary)`)
      },
      handleCopyData: (message: { chunk: Buffer }) => {
        if (failure !== undefined) return
        try {
          onPayload(message.chunk)
        } catch (error) {
          failure = error
          // Nothing downstream wants the rest of this table: stop reading instead of draining it.
          connection?.stream.destroy()
          settle(error)
        }
      },
      handleError: (error: unknown) => {
        failure ??= error
      },
      handleReadyForQuery: () => settle(failure),
      handleCommandComplete: () => undefined,
      handleRowDescription: () => undefined,
      handleDataRow: () => undefined,
      handleEmptyQuery: () => undefined,
      handlePortalSuspended: () => undefined,
      handleCopyInResponse: () => undefined
    }
    client.on("end", onEnd)
    client.query(submittable as unknown as pg.Submittable)
  })

const connectionOf = (client: pg.Client): SnapshotConnection => ({
  query: async <R extends object>(text: string) => (await client.query<R & pg.QueryResultRow>(text)).rows as ReadonlyArray<R>,
  copyOut: (select, onPayload) => copyOut(client, select, onPayload)
})
