/**
 * The Postgres sink: load the rows a batch touches, and commit a folded batch in ONE
 * transaction together with its undo images, the checkpoint and the NOTIFY (`commit`, the one
 * commit both writers use).
 *
 * Invariants:
 * - a batch's derived rows, its undo rows, the checkpoint and the NOTIFY commit together or not
 *   at all, so a crash leaves the last committed batch intact and a restart resumes right after
 *   it, and listeners hear of exactly the commits that happened;
 * - undo images are written only for unfinalized blocks, and hold each touched row as it was
 *   before the batch (null when it did not exist); `revertTo` restores them;
 * - every write is set-based (`unnest` of column arrays, COPY), never a row at a time.
 *
 * Every table goes through its descriptor (`tables.ts`) and the generic code of `rows-sink.ts`:
 * one in-memory model (`Rows`), one write path, one undo format and one revert. The protocol
 * totals row differs only in being written by every batch (see `writeProtocol`).
 */
import { SqlClient, type SqlError } from "@effect/sql"
import { Data, Effect } from "effect"
import { emptyProtocol, PROTOCOL_KEY } from "./reduce/protocol-totals.js"
import type { ProtocolRow } from "./reduce/model.js"
import type { KeyedRows, State } from "./reduce/state.js"
import { emptyKeyedRows, emptyLogs, KEYED_NAMES, LOG_NAMES } from "./reduce/state.js"
import type { RowKeys } from "./keys.js"
import type { KeyPart } from "./reduce/rows.js"
import type { RowCache, Touched } from "./row-cache.js"
import { CopyText } from "./copy-in.js"
import { notifyIndexed } from "./progress-sql.js"
import {
  appendRows,
  encodeRow,
  loadKeyed,
  revertAppended,
  revertKeyed,
  sameRow,
  writeKeyed,
  writeKeyedRows,
  writeTouchedKeyed,
  type AnyRow,
  type UndoEntry
} from "./rows-sink.js"
import { APPEND_ONLY_TABLES, APPEND_TABLES, KEYED_TABLES, MUTABLE_TABLES } from "./tables.js"

export interface Checkpoint {
  readonly chainId: number
  readonly block: number
  readonly hash: string
  readonly digest: string
  readonly head: number | null
}

/** A table's rows as the generic code sees them (rows are plain objects of their fields). */
const anyRows = (map: object) => map as ReadonlyMap<unknown, AnyRow | null>

/**
 * Loads the keyed rows of `keys` into `rows` (a key already held is kept: nothing has been
 * folded yet), from `cache` where it holds them; absent rows are held as null.
 */
export const loadKeyedInto = (rows: KeyedRows, keys: RowKeys, cache?: RowCache) =>
  Effect.forEach(
    KEYED_NAMES,
    (name) => {
      const into = rows[name].map as Map<string, unknown>
      const cached = cache?.tables[name]
      const misses = new Map<string, ReadonlyArray<KeyPart>>()
      for (const [key, parts] of keys[name]) {
        if (into.has(key)) continue
        if (cached?.has(key) === true) into.set(key, cached.get(key))
        else if (cache?.complete === true) into.set(key, null)
        else misses.set(key, parts)
      }
      return loadKeyed(KEYED_TABLES[name], misses, true).pipe(
        Effect.map((loaded) => {
          for (const [key, row] of loaded.map) into.set(key, row)
        })
      )
    },
    { discard: true }
  )

/**
 * The rows of `keys` as a strict state. The protocol totals row is always among `keys`
 * (`rowKeysOf`); when nothing was indexed yet it is held as zeros, so its undo image is the
 * zeros row, never absent.
 */
export const loadState = (keys: RowKeys, cache?: RowCache) =>
  Effect.gen(function* () {
    const rows = emptyKeyedRows(true)
    yield* loadKeyedInto(rows, keys, cache)
    if ((rows.protocol.map.get(PROTOCOL_KEY) ?? null) === null) rows.protocol.map.set(PROTOCOL_KEY, emptyProtocol())
    const state: State = { rows, logs: emptyLogs(), pendingFills: new Map(), moved: new Map() }
    return state
  })

const protocolIn = (state: State): ProtocolRow => state.rows.protocol.map.get(PROTOCOL_KEY) ?? emptyProtocol()

/**
 * The protocol row: written by every batch (so it exists once anything was indexed), imaged for
 * undo when it changed.
 */
const writeProtocol = (before: State, after: State, withUndo: boolean) => {
  const def = KEYED_TABLES.protocol
  const [was, now] = [protocolIn(before), protocolIn(after)] as unknown as [AnyRow, AnyRow]
  return sameRow(def, was, now)
    ? Effect.as(writeKeyedRows(def, { inserts: new CopyText(), upserts: [encodeRow(def, now)], deletes: [] }), [])
    : writeKeyed(def, new Map([[PROTOCOL_KEY, was]]), new Map([[PROTOCOL_KEY, now]]), withUndo)
}

/** Every appended row of the batch, table by table. */
const appendAll = (state: State) =>
  Effect.forEach(LOG_NAMES, (name) => appendRows(APPEND_TABLES[name], state.logs[name] as unknown as ReadonlyArray<AnyRow>), {
    discard: true
  })

/**
 * The writes of a batch folded on a copy (`before` the state as loaded, `after` folded): every
 * row that changed and every appended row; returns the undo images (none unless `withUndo`).
 */
export const writeRows = (before: State, after: State, withUndo: boolean) =>
  Effect.gen(function* () {
    const images: Array<UndoEntry> = []
    for (const name of KEYED_NAMES) {
      images.push(
        ...(name === "protocol"
          ? yield* writeProtocol(before, after, withUndo)
          : yield* writeKeyed(KEYED_TABLES[name], anyRows(before.rows[name].map), anyRows(after.rows[name].map), withUndo))
      )
    }
    yield* appendAll(after)
    return images
  })

/**
 * The writes of a batch folded in place into a complete row cache (`RowCache.foldInPlace`): the
 * rows it touched and its appended rows. A backfill batch: no undo images.
 * Rows are encoded here, when this is called, not when the returned effect runs: they are the
 * cache's own objects, which the next batch's fold changes while these statements run.
 * `gone`: per table, the touched keys whose rows the batch deleted (what `inPlaceCommitted`
 * needs to look at, instead of every touched key again).
 */
export const planInPlace = (state: State, touched: Touched) => {
  const protocol = KEYED_TABLES.protocol
  const gone = {} as Record<keyof Touched, Map<unknown, undefined>>
  // Appended rows and logs are the batch's own, never changed after they are appended.
  const steps: ReadonlyArray<Effect.Effect<unknown, SqlError.SqlError, SqlClient.SqlClient>> = [
    ...KEYED_NAMES.map((name) => {
      gone[name] = new Map()
      return name === "protocol"
        ? writeKeyedRows(protocol, {
            inserts: new CopyText(),
            upserts: [encodeRow(protocol, protocolIn(state) as unknown as AnyRow)],
            deletes: []
          })
        : writeTouchedKeyed(KEYED_TABLES[name], touched[name], state.rows[name].map, gone[name])
    }),
    appendAll(state)
  ]
  // The markets are not worked out here: a backfill batch announces "any market" (see Written).
  const writes = Effect.as(
    Effect.forEach(steps, (step) => step, { discard: true }),
    { images: [], markets: undefined } as Written
  )
  return { writes, gone: gone as Touched }
}

/** What a commit's rows step wrote. */
export interface Written {
  /** The undo images (none unless the block is unfinalized). */
  readonly images: ReadonlyArray<UndoEntry>
  /** The markets whose rows it changed (`changed-markets.ts`), announced with the commit; undefined when not known. */
  readonly markets: ReadonlySet<bigint> | undefined
}

/** One commit: a batch's rows and where it leaves the index. */
export interface Commit<E, R> {
  /** Where the index stands after it: written with the rows and announced after them. */
  readonly checkpoint: Checkpoint
  /**
   * The checkpoint block the rows held in memory belong to (the row cache's guard): locked, and
   * the commit fails with CheckpointMoved unless the stored checkpoint is still there.
   */
  readonly guard: number | undefined
  /** The block whose undo images are written: set only for an unfinalized block (the tip). */
  readonly undoBlock: number | undefined
  /** The rows: loads, folds and writes them (inside the transaction), returning their undo images and markets. */
  readonly rows: (withUndo: boolean) => Effect.Effect<Written, E, R>
  /** More of the same transaction, before the NOTIFY: the tip holds its block in the window. */
  readonly also?: Effect.Effect<unknown, SqlError.SqlError, SqlClient.SqlClient> | undefined
}

/**
 * The one commit of both writers, in one transaction: lock the checkpoint (when rows held in
 * memory are used), the rows, their undo images when the block is unfinalized, the checkpoint,
 * `also`, and the NOTIFY (delivered by Postgres exactly when the transaction commits).
 */
export const commit = <E, R>(c: Commit<E, R>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(
      Effect.gen(function* () {
        const { checkpoint, undoBlock } = c
        if (c.guard !== undefined) yield* lockCheckpointAt(checkpoint.chainId, c.guard)
        const { images, markets } = yield* c.rows(undoBlock !== undefined)
        if (undoBlock !== undefined) {
          yield* sql.unsafe(`insert into undo_log select $1, * from unnest($2::text[], $3::text[], $4::jsonb[]) on conflict do nothing`, [
            undoBlock,
            images.map((i) => i.table),
            images.map((i) => i.key),
            images.map((i) => i.image)
          ])
        }
        yield* writeCheckpoint(checkpoint)
        if (c.also !== undefined) yield* c.also
        yield* notifyIndexed(checkpoint.chainId, checkpoint.block, checkpoint.hash, false, markets)
      })
    )
  )

/**
 * Another process moved the checkpoint since this one last committed: rows this process holds in
 * memory may be stale, so the batch is not written.
 */
export class CheckpointMoved extends Data.TaggedError("CheckpointMoved")<{ readonly message: string }> {}

/**
 * Locks the checkpoint row for the rest of the transaction and fails with CheckpointMoved unless
 * it is still at `block`: rows kept in memory since that block are then exactly what Postgres
 * holds, and no other writer can move it before this transaction ends.
 */
export const lockCheckpointAt = (chainId: number, block: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql.unsafe<{ block_number: string }>(`select block_number from indexer_checkpoint where chain_id = $1 for update`, [
      chainId
    ])
    if (rows[0] === undefined || Number(rows[0].block_number) !== block) {
      return yield* new CheckpointMoved({
        message: `the checkpoint of chain ${chainId} is no longer at block ${block}: another indexer is writing to this database`
      })
    }
  })

/** Moves the checkpoint; the row takes a fresh commit position (the column's default, `nextval`: migration 0024). */
const writeCheckpoint = (checkpoint: Checkpoint) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(
      `insert into indexer_checkpoint (chain_id, block_number, block_hash, digest, head_block, updated_at) values ($1, $2, $3, $4, $5, now())
       on conflict (chain_id) do update set block_number = excluded.block_number, block_hash = excluded.block_hash, digest = excluded.digest,
         head_block = excluded.head_block, commit_seq = excluded.commit_seq, updated_at = now()`,
      [checkpoint.chainId, checkpoint.block, checkpoint.hash, checkpoint.digest, checkpoint.head]
    )
  )

/** True when every table the reducers keep rows of is empty (nothing indexed into this database yet). */
export const mutableTablesEmpty = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe<{ empty: boolean }>(`select ${MUTABLE_TABLES.map((t) => `not exists (select 1 from ${t.sql})`).join(" and ")} as empty`)
).pipe(Effect.map((rows) => rows[0]?.empty === true))

/** Drops undo rows at or below the finalized block: they can never be needed again. */
export const pruneUndo = (finalized: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`delete from undo_log where block_number <= $1`, [finalized]))

/**
 * Undoes every block above `ancestor` in one transaction: each mutable row goes back to its
 * image from the first undone block that changed it (deleted when it did not exist then),
 * appended rows above the ancestor are deleted, and the checkpoint moves to the ancestor with a
 * fresh commit position (the state differs from the one the ancestor's block had before).
 */
export const revertTo = (ancestor: { readonly chainId: number; readonly block: number; readonly hash: string; readonly digest: string }) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(
      Effect.gen(function* () {
        for (const def of MUTABLE_TABLES) yield* revertKeyed(def, ancestor.block)
        for (const def of APPEND_ONLY_TABLES) yield* revertAppended(def, ancestor.block)
        yield* sql.unsafe(`delete from undo_log where block_number > $1`, [ancestor.block])
        yield* sql.unsafe(
          `update indexer_checkpoint set block_number = $2, block_hash = $3, digest = $4, commit_seq = nextval('indexer_commit_seq'), updated_at = now()
           where chain_id = $1`,
          [ancestor.chainId, ancestor.block, ancestor.hash, ancestor.digest]
        )
      })
    )
  )
