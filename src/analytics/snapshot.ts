/**
 * One consistent view of the index: REPEATABLE READ, READ ONLY transactions that share one
 * snapshot for the whole export, so every table, the checkpoint and the undo log are read as of
 * the same instant while the pipeline keeps committing. The export never writes to the source
 * database and takes no locks beyond the ones every reader takes, and one advisory lock.
 *
 * The snapshot is of ONE generation of the index (blue-green re-index, `src/db/generations.ts`):
 * the one the pointer names as active in that very snapshot. Its connections use its search path
 * (`generationSearchPath`, as `openGenerationPool`'s do) and every statement names its schema.
 * An export running across a switch stays on the generation it started with, to the end: the
 * drop lock, held shared from before the snapshot (`generation.ts`), makes the retired
 * generation's drop (or TRUNCATE, for public: not MVCC-safe, a snapshot taken before it would see
 * the tables empty) wait until the export ends.
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
import { activeGeneration, holdGeneration, useGeneration } from "./generation.js"

export interface SnapshotConnection {
  /** The schema of the generation of the index this snapshot reads (`public`, `index_<n>`). */
  readonly generation: string
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

const connect = async (url: string) => {
  const client = new pg.Client({ connectionString: url, application_name: APPLICATION_NAME, types: rawText })
  client.on("error", () => undefined)
  await client.connect()
  return client
}

const close = (client: pg.Client) =>
  client
    .query("rollback")
    .then(
      () => undefined,
      () => undefined
    )
    .finally(() => client.end().catch(() => undefined))

/**
 * `lanes` connections in REPEATABLE READ, READ ONLY transactions that all see ONE snapshot of
 * one generation: the first holds the drop lock (`holdGeneration`), exports its snapshot
 * (`pg_export_snapshot`, which also fixes it) and reads the pointer in it; the others adopt the
 * snapshot with SET TRANSACTION SNAPSHOT before reading anything, as pg_dump does for a parallel
 * dump. The exporting transaction stays open while the others read (the snapshot lives as long
 * as it does).
 */
const openTransactions = async (url: string, lanes: number) => {
  const clients: Array<pg.Client> = []
  try {
    const lead = await connect(url)
    clients.push(lead)
    await holdGeneration(lead)
    await lead.query("begin isolation level repeatable read read only")
    const id = String((await lead.query<{ id: string }>("select pg_export_snapshot() as id")).rows[0]!.id)
    const generation = await activeGeneration(lead)
    while (clients.length < lanes) {
      const client = await connect(url)
      clients.push(client)
      await client.query("begin isolation level repeatable read read only")
      await client.query(`set transaction snapshot '${id.replace(/'/g, "''")}'`)
    }
    for (const client of clients) {
      await useGeneration(client, generation)
      // Mutable tables read through the undo log are sorted by key; let that sort run in memory.
      await client.query("set local work_mem = '64MB'")
    }
    return { clients, generation }
  } catch (error) {
    await Promise.all(clients.map(close))
    throw error
  }
}

/**
 * Opens the snapshot's connections (see `openTransactions`); closed (the transactions rolled
 * back) with the scope. Each connection carries the generation it reads.
 */
export const openSnapshot = (url: string, lanes = 1) =>
  Effect.acquireRelease(
    Effect.tryPromise({ try: () => openTransactions(url, Math.max(1, lanes)), catch: sourceError(url) }),
    ({ clients }) => Effect.promise(() => Promise.all(clients.map(close)))
  ).pipe(Effect.map(({ clients, generation }) => clients.map((client) => connectionOf(client, generation))))

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

const connectionOf = (client: pg.Client, generation: string): SnapshotConnection => ({
  generation,
  query: async <R extends object>(text: string) => (await client.query<R & pg.QueryResultRow>(text)).rows as ReadonlyArray<R>,
  copyOut: (select, onPayload) => copyOut(client, select, onPayload),
  cancel: () => void client.end().catch(() => undefined)
})
