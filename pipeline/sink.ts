/**
 * The Postgres sink: load the rows a batch touches, and write a
 * folded batch back in ONE transaction together with its undo images and the checkpoint.
 *
 * Invariants:
 * - a batch's derived rows, its undo rows and the checkpoint commit together or not at all, so a
 *   crash leaves the last committed batch intact and a restart resumes right after it;
 * - undo images are written only for unfinalized blocks, and hold each touched row as it was
 *   before the batch (null when it did not exist); `revertTo` restores them;
 * - every write is set-based (`unnest` of column arrays), never a row at a time.
 *
 * Every table goes through its descriptor (`tables.ts`) and the generic code of `rows-sink.ts`:
 * one write path, one undo format and one revert. The first slice's tables differ only in where
 * their rows live in memory (`Working`'s Maps, absent rows not held; see `WORKING` below).
 */
import { SqlClient, type SqlError } from "@effect/sql"
import { Data, Effect } from "effect"
import { emptyProtocol } from "./reduce/markets.js"
import { positionKey } from "./reduce/positions.js"
import type { ProtocolRow, Working } from "./reduce/model.js"
import type { KeyedRows, State } from "./reduce/state.js"
import { emptyLogs, KEYED_NAMES, LOG_NAMES } from "./reduce/state.js"
import { WORKING_NAMES, type Keys, type RowKeys } from "./keys.js"
import type { KeyPart } from "./reduce/rows.js"
import type { RowCache, Touched } from "./row-cache.js"
import {
  appendRows,
  encodeRow,
  loadKeyed,
  revertAppended,
  revertKeyed,
  sameRow,
  selectKeyed,
  writeKeyed,
  writeKeyedRows,
  writeTouchedKeyed,
  type AnyRow,
  type UndoEntry
} from "./rows-sink.js"
import { APPEND_ONLY_TABLES, APPEND_TABLES, KEYED_TABLES, MUTABLE_TABLES, WORKING_LOGS, WORKING_TABLES, type TableDef } from "./tables.js"

export interface Checkpoint {
  readonly chainId: number
  readonly block: number
  readonly hash: string
  readonly digest: string
  readonly head: number | null
}

/** A first-slice table as `Working` holds it: a Map from the reducers' key to the row. */
interface WorkingTable<K> {
  readonly def: TableDef
  /** The key fields' values of an in-memory key, in key order. */
  readonly parts: (key: K) => ReadonlyArray<KeyPart>
  readonly keyOf: (row: AnyRow) => K
}

type WorkingName = keyof Keys

/** The first slice's keyed tables, by their name in `Working`, `Keys` and the row cache. */
const WORKING: { readonly [N in WorkingName]: WorkingTable<Keys[N] extends ReadonlySet<infer K> ? K : never> } = {
  markets: { def: WORKING_TABLES.markets, parts: (id) => [id], keyOf: (row) => row["id"] as bigint },
  positions: {
    def: WORKING_TABLES.positions,
    // positionKey is `${user}:${marketId}`.
    parts: (key) => key.split(":") as [string, string],
    keyOf: (row) => positionKey(row["user"] as string, row["marketId"] as bigint)
  },
  users: { def: WORKING_TABLES.users, parts: (address) => [address], keyOf: (row) => row["address"] as string }
}

/** A first-slice Map as the generic code sees it (rows are plain objects of their fields). */
const anyRows = (map: object) => map as ReadonlyMap<unknown, AnyRow | null>

/** The protocol totals as stored: the one row of protocol_stats. */
const storedProtocol = (p: ProtocolRow): AnyRow => ({ id: 1, ...p })

/** Splits `keys` into the entries `cached` holds (handed to `hit`) and the keys it does not. */
const missesOf = <K, V>(
  keys: Iterable<K>,
  cached: ReadonlyMap<K, V> | undefined,
  hit: (key: K, value: V) => void,
  complete: boolean
): Array<K> => {
  const misses: Array<K> = []
  for (const key of keys) {
    if (cached !== undefined && cached.has(key)) hit(key, cached.get(key)!)
    else if (!complete) misses.push(key)
  }
  return misses
}

/**
 * Reads the rows of `keys` into a fresh working set (absent rows stay absent): from `cache` where
 * it holds them, from Postgres otherwise.
 */
export const loadWorking = (keys: Keys, cache?: RowCache) =>
  loadWorkingInto(
    { markets: new Map(), positions: new Map(), users: new Map(), protocol: emptyProtocol(), appended: { trades: [], priceSnapshots: [] } },
    keys,
    cache,
    true
  )

/**
 * Reads the rows of `keys` into `w` (absent rows stay absent), and the protocol row when
 * `protocol`: a second load for keys only the first one's rows reveal (see batch.ts).
 */
export const loadWorkingInto = (w: Working, keys: Keys, cache: RowCache | undefined, protocol: boolean) =>
  Effect.gen(function* () {
    const complete = cache?.complete === true
    for (const name of WORKING_NAMES) {
      const table = WORKING[name] as WorkingTable<unknown>
      const into = w[name] as unknown as Map<unknown, AnyRow>
      const cached = cache?.tables[name] as ReadonlyMap<unknown, AnyRow | null> | undefined
      const misses = missesOf(keys[name] as ReadonlySet<unknown>, cached, (key, row) => row !== null && into.set(key, row), complete)
      if (misses.length > 0) for (const row of yield* selectKeyed(table.def, misses.map(table.parts))) into.set(table.keyOf(row), row)
    }
    if (!protocol) return w
    if (cache?.protocol !== undefined) w.protocol = cache.protocol
    else if (!complete) {
      const [row] = yield* selectKeyed(WORKING_TABLES.protocol, [[1]])
      if (row !== undefined) {
        const { id: _, ...totals } = row
        w.protocol = totals as unknown as ProtocolRow
      }
    }
    return w
  })

/**
 * Loads the keyed rows of `keys` into `rows` (strict sets: a key not loaded cannot be used), from
 * `cache` where it holds them.
 */
export const loadKeyedInto = (rows: KeyedRows, keys: RowKeys, cache?: RowCache) =>
  Effect.forEach(
    KEYED_NAMES,
    (name) => {
      const into = rows[name].map as Map<string, unknown>
      const cached = cache?.tables[name]
      const misses = new Map<string, ReadonlyArray<KeyPart>>()
      for (const [key, parts] of keys[name]) {
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

/** The first slice's rows of `keys` plus every keyed row of `rowKeys`, as a strict state. */
export const loadState = (keys: Keys, rowKeys: RowKeys, cache?: RowCache) =>
  Effect.gen(function* () {
    const working = yield* loadWorking(keys, cache)
    const rows = Object.fromEntries(KEYED_NAMES.map((n) => [n, { strict: true, map: new Map() }])) as unknown as KeyedRows
    yield* loadKeyedInto(rows, rowKeys, cache)
    const state: State = { ...working, rows, logs: emptyLogs(), pendingFills: new Map(), moved: new Map() }
    return state
  })

/**
 * The protocol row: written by every batch (so it exists once anything was indexed), imaged for
 * undo when it changed.
 */
const writeProtocol = (before: ProtocolRow, after: ProtocolRow, withUndo: boolean) => {
  const def = WORKING_TABLES.protocol
  const [was, now] = [storedProtocol(before), storedProtocol(after)]
  return sameRow(def, was, now)
    ? Effect.as(writeKeyedRows(def, { inserts: [], upserts: [encodeRow(def, now)], deletes: [] }), [])
    : writeKeyed(def, new Map([[1, was]]), new Map([[1, now]]), withUndo)
}

/** The first slice's appended rows and every reducer's logs. */
const appendAll = (state: State) =>
  Effect.gen(function* () {
    yield* appendRows(WORKING_LOGS.trades, state.appended.trades as unknown as ReadonlyArray<AnyRow>)
    yield* appendRows(WORKING_LOGS.priceSnapshots, state.appended.priceSnapshots as unknown as ReadonlyArray<AnyRow>)
    for (const name of LOG_NAMES) yield* appendRows(APPEND_TABLES[name], state.logs[name] as unknown as ReadonlyArray<AnyRow>)
  })

/**
 * Commits one folded batch: rows, appended rows, undo images (when `undoBlock` is set: the batch
 * is one unfinalized block) and the checkpoint, in one transaction.
 */
export const commitBatch = (before: State, after: State, checkpoint: Checkpoint, undoBlock: number | undefined) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(writeBatch(before, after, checkpoint, undoBlock)))

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

const writeBatch = (before: State, after: State, checkpoint: Checkpoint, undoBlock: number | undefined) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const withUndo = undoBlock !== undefined
    const images: Array<UndoEntry> = []
    for (const name of WORKING_NAMES) {
      images.push(...(yield* writeKeyed(WORKING[name].def, anyRows(before[name]), anyRows(after[name]), withUndo)))
    }
    images.push(...(yield* writeProtocol(before.protocol, after.protocol, withUndo)))
    for (const name of KEYED_NAMES) {
      images.push(...(yield* writeKeyed(KEYED_TABLES[name], anyRows(before.rows[name].map), anyRows(after.rows[name].map), withUndo)))
    }
    yield* appendAll(after)
    if (withUndo) {
      yield* sql.unsafe(`insert into undo_log select $1, * from unnest($2::text[], $3::text[], $4::jsonb[]) on conflict do nothing`, [
        undoBlock,
        images.map((i) => i.table),
        images.map((i) => i.key),
        images.map((i) => i.image)
      ])
    }
    yield* writeCheckpoint(checkpoint)
  })

const writeCheckpoint = (checkpoint: Checkpoint) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(
      `insert into indexer_checkpoint (chain_id, block_number, block_hash, digest, head_block, updated_at) values ($1, $2, $3, $4, $5, now())
       on conflict (chain_id) do update set block_number = excluded.block_number, block_hash = excluded.block_hash, digest = excluded.digest,
         head_block = excluded.head_block, updated_at = now()`,
      [checkpoint.chainId, checkpoint.block, checkpoint.hash, checkpoint.digest, checkpoint.head]
    )
  )

/**
 * The writes of a batch folded in place into a complete row cache (`RowCache.foldInPlace`): the
 * rows it touched, its appended rows and the checkpoint. A backfill batch: no undo images.
 * Rows are encoded here, when this is called, not when the returned effect runs: they are the
 * cache's own objects, which the next batch's fold changes while these statements run.
 */
export const planInPlace = (state: State, touched: Touched, checkpoint: Checkpoint) => {
  const protocol = WORKING_TABLES.protocol
  // Appended rows and logs are the batch's own, never changed after they are appended.
  const steps: ReadonlyArray<Effect.Effect<unknown, SqlError.SqlError, SqlClient.SqlClient>> = [
    ...WORKING_NAMES.map((name) => writeTouchedKeyed(WORKING[name].def, anyRows(touched[name]), anyRows(state[name]))),
    writeKeyedRows(protocol, { inserts: [], upserts: [encodeRow(protocol, storedProtocol(state.protocol))], deletes: [] }),
    ...KEYED_NAMES.map((name) => writeTouchedKeyed(KEYED_TABLES[name], touched[name], state.rows[name].map)),
    appendAll(state),
    writeCheckpoint(checkpoint)
  ]
  return Effect.forEach(steps, (step) => step, { discard: true })
}

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
 * appended rows above the ancestor are deleted, and the checkpoint moves to the ancestor.
 */
export const revertTo = (ancestor: { readonly chainId: number; readonly block: number; readonly hash: string; readonly digest: string }) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(
      Effect.gen(function* () {
        for (const def of MUTABLE_TABLES) yield* revertKeyed(def, ancestor.block)
        for (const def of APPEND_ONLY_TABLES) yield* revertAppended(def, ancestor.block)
        yield* sql.unsafe(`delete from undo_log where block_number > $1`, [ancestor.block])
        yield* sql.unsafe(
          `update indexer_checkpoint set block_number = $2, block_hash = $3, digest = $4, updated_at = now() where chain_id = $1`,
          [ancestor.chainId, ancestor.block, ancestor.hash, ancestor.digest]
        )
      })
    )
  )
