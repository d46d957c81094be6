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
 *   Postgres again), so memory does not grow without bound. Position-history rows of a minute
 *   before the latest one held are dropped after every commit: block timestamps only grow, so
 *   no later event reads or writes them (a complete cache stays complete for every key a later
 *   batch can ask for).
 */
import type { Keys } from "./keys.js"
import { emptyProtocol } from "./reduce/markets.js"
import type { MarketRow, PositionRow, ProtocolRow, UserRow } from "./reduce/model.js"
import { emptyLogs, KEYED_NAMES, type KeyedRows, type State } from "./reduce/state.js"

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
export interface Touched {
  readonly markets: ReadonlyMap<bigint, MarketRow | null | undefined>
  readonly positions: ReadonlyMap<string, PositionRow | null | undefined>
  readonly users: ReadonlyMap<string, UserRow | null | undefined>
  readonly keyed: Record<KeyedName, ReadonlyMap<string, unknown>>
}

type KeyedName = keyof KeyedRows

interface Staged {
  readonly keys: Keys
  readonly state: State
  readonly block: number
}

export class RowCache {
  readonly markets = new TrackedMap<bigint, MarketRow | null>()
  readonly positions = new TrackedMap<string, PositionRow | null>()
  readonly users = new TrackedMap<string, UserRow | null>()
  protocol: ProtocolRow | undefined = undefined
  readonly keyed = Object.fromEntries(KEYED_NAMES.map((n) => [n, new TrackedMap<string, unknown>()])) as Record<KeyedName, TrackedMap<string, unknown>>
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
    let n = this.markets.size + this.positions.size + this.users.size
    for (const name of KEYED_NAMES) n += this.keyed[name].size
    return n
  }

  /** The block whose checkpoint the stored one must equal for a batch using these entries. */
  get guard(): number | undefined {
    return this.size === 0 && this.protocol === undefined && !this.complete ? undefined : this.validAt
  }

  /** Every map of rows, the keyed tables' included. */
  private get maps(): ReadonlyArray<TrackedMap<unknown, unknown>> {
    return [this.markets, this.positions, this.users, ...KEYED_NAMES.map((n) => this.keyed[n])] as ReadonlyArray<TrackedMap<unknown, unknown>>
  }

  clear(): void {
    for (const map of this.maps) map.touched = undefined
    this.markets.clear()
    this.positions.clear()
    this.users.clear()
    for (const name of KEYED_NAMES) this.keyed[name].clear()
    this.protocol = undefined
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
    this.protocol ??= emptyProtocol()
    for (const map of this.maps) map.touched = new Map()
    return {
      markets: this.markets as Map<bigint, MarketRow>,
      positions: this.positions as Map<string, PositionRow>,
      users: this.users as Map<string, UserRow>,
      protocol: this.protocol,
      appended: { trades: [], priceSnapshots: [] },
      rows: Object.fromEntries(KEYED_NAMES.map((n) => [n, { strict: false, map: this.keyed[n] }])) as unknown as KeyedRows,
      logs: emptyLogs(),
      pendingFills: new Map(),
      moved: new Set()
    }
  }

  /** Ends the tracking of an in-place fold: what it touched. */
  takeTouched(): Touched {
    const take = <K, V>(map: TrackedMap<K, V>) => {
      const touched = map.touched ?? new Map<K, V | undefined>()
      map.touched = undefined
      return touched
    }
    return {
      markets: take(this.markets),
      positions: take(this.positions),
      users: take(this.users),
      keyed: Object.fromEntries(KEYED_NAMES.map((n) => [n, take(this.keyed[n])])) as unknown as Record<KeyedName, ReadonlyMap<string, unknown>>
    }
  }

  /**
   * The in-place batch ending at `block` committed: its rows are Postgres's now. Runs while the
   * next batch's fold may be tracking, so it reads and deletes untracked; and it never clears
   * (that would drop the next fold's tracking): the caller checks `overLimit` between batches.
   */
  inPlaceCommitted(touched: Touched, block: number): void {
    // A complete cache holds no "absent" marks (a dropped row is null until here).
    const prune = <K, V>(map: TrackedMap<K, V>, keys: ReadonlyMap<K, unknown>) => {
      for (const key of keys.keys()) if (MAP_GET.call(map, key) === null) MAP_DELETE.call(map, key)
    }
    prune(this.markets, touched.markets)
    prune(this.positions, touched.positions)
    prune(this.users, touched.users)
    for (const name of KEYED_NAMES) prune(this.keyed[name], touched.keyed[name])
    this.retireHistory()
    this.validAt = block
  }

  /**
   * Drops the position-history entries of minutes before the latest held (see the invariants).
   * Untracked, like `inPlaceCommitted`: the next fold only touches rows of that minute or later.
   */
  private retireHistory(): void {
    const map = this.keyed.positionHistory
    const minuteOf = (key: string) => Number(key.slice(key.lastIndexOf("|") + 1))
    let latest = -Infinity
    for (const key of map.keys()) latest = Math.max(latest, minuteOf(key))
    for (const key of [...map.keys()]) if (minuteOf(key) < latest) MAP_DELETE.call(map, key)
  }

  /** More entries held than the limit: `clear` at the next point where nothing is folding. */
  get overLimit(): boolean {
    return this.size > this.limit
  }

  /** Records a folded batch (its loaded keys and state after the fold), not yet committed. */
  stage(keys: Keys, state: State, block: number): void {
    this.staged = { keys, state, block }
  }

  /** The staged batch committed: its rows are now what Postgres holds. */
  accept(): void {
    const staged = this.staged
    this.staged = undefined
    if (staged === undefined) return
    const { keys, state } = staged
    // A complete cache holds no "absent" marks: not holding a key already says so.
    const put = <K, V>(into: Map<K, V | null>, key: K, row: V | null | undefined) => {
      if (row !== null && row !== undefined) into.set(key, row)
      else if (this.complete) into.delete(key)
      else into.set(key, null)
    }
    for (const id of keys.markets) put(this.markets, id, state.markets.get(id))
    for (const [id, row] of state.markets) put(this.markets, id, row)
    for (const key of keys.positions) put(this.positions, key, state.positions.get(key))
    for (const [key, row] of state.positions) put(this.positions, key, row)
    for (const address of keys.users) put(this.users, address, state.users.get(address))
    for (const [address, row] of state.users) put(this.users, address, row)
    this.protocol = state.protocol
    for (const name of KEYED_NAMES) {
      const into = this.keyed[name]
      for (const [key, row] of state.rows[name].map as Map<string, unknown>) put(into, key, row)
    }
    this.retireHistory()
    this.validAt = staged.block
    if (this.size > this.limit) this.clear()
  }
}
