/**
 * One consistent view of the index: REPEATABLE READ, READ ONLY transactions that share one
 * snapshot for the whole export, so every table, the checkpoint and the undo log are read as of
 * the same instant while the pipeline keeps committing. The export never writes to the source
 * database and takes no locks beyond the ones every reader takes.
 *
 * Rows are streamed with `COPY (query) TO STDOUT (FORMAT csv)` inside that transaction. Each
 * CopyData payload is handed to the consumer synchronously, as the driver parses it off the
 * socket, and the consumer stores it (`csv-file.ts` writes it to a file) before returning. So
 * nothing queues in this process: while the consumer is busy the socket is not read, the
 * kernel's buffers fill and TCP flow control holds Postgres back. Memory stays flat whatever the
 * table's size.
 */
import { Effect } from "effect"
import pg from "pg"
import { SnapshotSourceError } from "./errors.js"

export interface SnapshotConnection {
  /** Rows of a small query, every value as Postgres's text (no number parsing on the way). */
  readonly query: <R extends object>(text: string) => Promise<ReadonlyArray<R>>
  /**
   * Streams `select` as CSV COPY (Postgres's defaults: comma, `"` quotes doubled, NULL as an
   * empty unquoted field, an empty text as `""`, one row per line ending in a newline):
   * `onPayload` gets each CopyData payload, valid only until it returns. A throw from it fails
   * the copy (and closes the connection, which is then unusable).
   */
  readonly copyOut: (select: string, onPayload: (payload: Buffer) => void) => Promise<void>
  /** Closes the connection now: a COPY in progress fails at once. (For an export being abandoned.) */
  readonly cancel: () => void
}

/** Every value as the text Postgres sends (null stays null). */
const rawText = { getTypeParser: () => (value: string) => value } as unknown as pg.CustomTypesConfig

export const APPLICATION_NAME = "predix-export"

const redacted = (url: string) => url.replace(/(\/\/[^:/@]+:)[^@]*@/, "$1***@")

const sourceError = (url: string) => (cause: unknown) =>
  new SnapshotSourceError({ message: `cannot open a snapshot of ${redacted(url)}: ${String((cause as Error)?.message ?? cause)}`, cause })

/**
 * A connection in a REPEATABLE READ, READ ONLY transaction whose first statements are
 * `setup`; closed (the transaction rolled back) with the scope.
 */
const transaction = (url: string, setup: (client: pg.Client) => Promise<void>) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const client = new pg.Client({ connectionString: url, application_name: APPLICATION_NAME, types: rawText })
        client.on("error", () => undefined)
        await client.connect()
        try {
          await client.query("begin isolation level repeatable read read only")
          await setup(client)
          // Mutable tables read through the undo log are sorted by key; let that sort run in memory.
          await client.query("set local work_mem = '64MB'")
        } catch (error) {
          await client.end().catch(() => undefined)
          throw error
        }
        return client
      },
      catch: sourceError(url)
    }),
    (client) =>
      Effect.promise(() =>
        client
          .query("rollback")
          .then(
            () => undefined,
            () => undefined
          )
          .finally(() => client.end().catch(() => undefined))
      )
  )

/**
 * Opens `lanes` connections that all see ONE snapshot: the first exports its snapshot
 * (`pg_export_snapshot`, which also fixes it) and the others adopt it with SET TRANSACTION
 * SNAPSHOT before reading anything, as pg_dump does for a parallel dump. The exporting
 * transaction stays open while the others read (the snapshot lives as long as it does).
 */
export const openSnapshot = (url: string, lanes = 1) =>
  Effect.gen(function* () {
    let id = ""
    const lead = yield* transaction(url, async (client) => {
      id = String((await client.query<{ id: string }>("select pg_export_snapshot() as id")).rows[0]!.id)
    })
    const others = yield* Effect.forEach(Array.from({ length: Math.max(0, lanes - 1) }), () =>
      transaction(url, async (client) => {
        await client.query(`set transaction snapshot '${id.replace(/'/g, "''")}'`)
      })
    )
    return [lead, ...others].map(connectionOf)
  })

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
        c.query(`copy (${select}) to stdout with (format csv)`)
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
      // The driver hands an ErrorResponse to the active query and then forgets it: the
      // ReadyForQuery that follows is not routed here, so an error settles the copy at once.
      handleError: (error: unknown) => {
        failure ??= error
        settle(failure)
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
  copyOut: (select, onPayload) => copyOut(client, select, onPayload),
  cancel: () => void client.end().catch(() => undefined)
})
