/**
 * The committed rows of the mutable tables, kept in memory across batches, so that a batch loads
 * from Postgres only the rows no earlier batch of this process has read or written. In a backfill
 * most rows a batch touches (markets, hot holders, open orders, candles) were touched by the batch
 * before; loading them again cost more than writing them.
 *
 * Invariants:
 * - an entry is the row as Postgres holds it after the last commit of this process (null: known
 *   absent). Entries are the very objects the reducers mutate, so they are trusted only once the
 *   batch that mutated them has committed: `stage` records a folded batch, `accept` takes it in
 *   after its transaction committed, `clear` drops everything after anything else (a failed or
 *   interrupted batch, a revert).
 * - valid only while this process is the only writer: `validAt` is the checkpoint block the
 *   entries belong to, and a batch that uses them first locks the checkpoint row and checks it is
 *   still there (`lockCheckpointAt`); another writer moving the checkpoint fails the batch rather
 *   than letting stale rows overwrite its work.
 * - complete (`startEmpty`, when indexing begins on empty tables): every row of the mutable tables
 *   was written by this process, so a key the cache does not hold is absent and nothing is
 *   loaded at all. Any `clear` ends completeness.
 * - bounded: when more than `limit` entries are held, all are dropped (the next batch loads from
 *   Postgres again), so memory does not grow without bound.
 */
import { emptyProtocol, PROTOCOL_KEY } from "./reduce/protocol-totals.js"
import { emptyLogs, KEYED_NAMES, type KeyedRows, type State } from "./reduce/state.js"

/** Every table of keyed rows (`KeyedRows`). */
export type TableName = keyof KeyedRows

const TABLE_NAMES: ReadonlyArray<TableName> = KEYED_NAMES

/**
 * A Map that, while `touched` is set, records for every key used (read, tested, written or
 * deleted) its value before that first use: undefined when absent. Reducers change rows in
 * place, so a key read is a key possibly changed.
 */
export class TrackedMap<K, V> extends Map<K, V> {
  touched: Map<K, V | undefined> | undefined = undefined

  // Map's own methods called directly: `super.get` measured slower, and this runs several
  // times per event. Values are never undefined (rows, or null for known absent), so a get
  // answers `has` too.
  override get(key: K): V | undefined {
    const value = MAP_GET.call(this, key) as V | undefined
    const touched = this.touched
    if (touched !== undefined && !MAP_HAS.call(touched, key)) MAP_SET.call(touched, key, value)
    return value
  }

  override has(key: K): boolean {
    return this.touched === undefined ? MAP_HAS.call(this, key) : this.get(key) !== undefined
  }

  override set(key: K, value: V): this {
    const touched = this.touched
    if (touched !== undefined && !MAP_HAS.call(touched, key)) MAP_SET.call(touched, key, MAP_GET.call(this, key))
    MAP_SET.call(this, key, value)
    return this
  }

  override delete(key: K): boolean {
    const touched = this.touched
    if (touched !== undefined && !MAP_HAS.call(touched, key)) MAP_SET.call(touched, key, MAP_GET.call(this, key))
    return MAP_DELETE.call(this, key)
  }
}

const MAP_GET = Map.prototype.get
const MAP_HAS = Map.prototype.has
const MAP_SET = Map.prototype.set
const MAP_DELETE = Map.prototype.delete

/** What an in-place fold touched, per table: key -> the row before the batch (undefined: absent). */
export type Touched = { readonly [N in TableName]: ReadonlyMap<unknown, unknown> }

interface Staged {
  readonly state: State
  readonly block: number
}

export class RowCache {
  /** Per table: key (as the batch's state keys it) -> row, or null for known absent. */
  readonly tables = Object.fromEntries(TABLE_NAMES.map((n) => [n, new TrackedMap<unknown, unknown>()])) as {
    readonly [N in TableName]: TrackedMap<unknown, unknown>
  }
  /** The checkpoint block the entries belong to; undefined while nothing is held. */
  validAt: number | undefined = undefined
  /** Every row of the mutable tables is held: a key not held is absent. */
  complete = false
  private staged: Staged | undefined = undefined

  constructor(readonly limit = 2_000_000) {}

  /** The mutable tables are empty and only this process writes them from now on. */
  startEmpty(): void {
    this.clear()
    this.complete = true
  }

  get size(): number {
    let n = 0
    for (const name of TABLE_NAMES) n += this.tables[name].size
    return n
  }

  /** The block whose checkpoint the stored one must equal for a batch using these entries. */
  get guard(): number | undefined {
    return this.size === 0 && !this.complete ? undefined : this.validAt
  }

  clear(): void {
    for (const name of TABLE_NAMES) {
      this.tables[name].touched = undefined
      this.tables[name].clear()
    }
    this.validAt = undefined
    this.staged = undefined
    this.complete = false
  }

  /**
   * The state an in-place fold works on: the cache's own maps, tracked (only for a complete
   * cache, where a key not held is absent, so nothing needs loading). The rows it holds change
   * under the fold, so until `inPlaceCommitted` they are the batch's, not Postgres's: a failed
   * batch must `clear`.
   */
  foldInPlace(): State {
    if (!this.complete) throw new Error("an in-place fold needs a complete cache")
    // Every state holds the protocol totals row (protocol-totals.ts); written by every batch.
    if (!this.tables.protocol.has(PROTOCOL_KEY)) this.tables.protocol.set(PROTOCOL_KEY, emptyProtocol())
    for (const name of TABLE_NAMES) this.tables[name].touched = new Map()
    return {
      rows: Object.fromEntries(KEYED_NAMES.map((n) => [n, { strict: false, map: this.tables[n] }])) as unknown as KeyedRows,
      logs: emptyLogs(),
      pendingFills: new Map(),
      moved: new Map()
    }
  }

  /** Ends the tracking of an in-place fold: what it touched. */
  takeTouched(): Touched {
    const touched = {} as Record<TableName, ReadonlyMap<unknown, unknown>>
    for (const name of TABLE_NAMES) {
      touched[name] = this.tables[name].touched ?? new Map()
      this.tables[name].touched = undefined
    }
    return touched
  }

  /**
   * The in-place batch ending at `block` committed: its rows are Postgres's now. `gone` holds
   * (at least) the keys whose rows it deleted: each still null is dropped (a later fold may have
   * put a row there since). Runs while the next batch's fold may be tracking, so it reads and
   * deletes untracked; and it never clears (that would drop the next fold's tracking): the
   * caller checks `overLimit` between batches.
   */
  inPlaceCommitted(gone: Touched, block: number): void {
    // A complete cache holds no "absent" marks (a dropped row is null until here).
    for (const name of TABLE_NAMES) {
      const map = this.tables[name]
      for (const key of gone[name].keys()) if (MAP_GET.call(map, key) === null) MAP_DELETE.call(map, key)
    }
    this.validAt = block
  }

  /** More entries held than the limit: `clear` at the next point where nothing is folding. */
  get overLimit(): boolean {
    return this.size > this.limit
  }

  /** Records a folded batch (its state after the fold: every key loaded, null when absent), not yet committed. */
  stage(state: State, block: number): void {
    this.staged = { state, block }
  }

  /** The staged batch committed: its rows are now what Postgres holds. */
  accept(): void {
    const staged = this.staged
    this.staged = undefined
    if (staged === undefined) return
    const { state } = staged
    // A complete cache holds no "absent" marks: not holding a key already says so.
    const put = (into: Map<unknown, unknown>, key: unknown, row: unknown) => {
      if (row !== null && row !== undefined) into.set(key, row)
      else if (this.complete) into.delete(key)
      else into.set(key, null)
    }
    for (const name of KEYED_NAMES) {
      for (const [key, row] of state.rows[name].map as Map<string, unknown>) put(this.tables[name], key, row)
    }
    this.validAt = staged.block
    if (this.size > this.limit) this.clear()
  }
}
