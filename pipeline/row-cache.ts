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
import type { Keys } from "./sink.js"
import type { MarketRow, PositionRow, ProtocolRow, UserRow } from "./reduce/markets.js"
import { KEYED_NAMES, type KeyedRows, type State } from "./reduce/state.js"

type KeyedName = keyof KeyedRows

interface Staged {
  readonly keys: Keys
  readonly state: State
  readonly block: number
}

export class RowCache {
  readonly markets = new Map<bigint, MarketRow | null>()
  readonly positions = new Map<string, PositionRow | null>()
  readonly users = new Map<string, UserRow | null>()
  protocol: ProtocolRow | undefined = undefined
  readonly keyed = Object.fromEntries(KEYED_NAMES.map((n) => [n, new Map<string, unknown>()])) as Record<KeyedName, Map<string, unknown>>
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

  clear(): void {
    this.markets.clear()
    this.positions.clear()
    this.users.clear()
    for (const name of KEYED_NAMES) this.keyed[name].clear()
    this.protocol = undefined
    this.validAt = undefined
    this.staged = undefined
    this.complete = false
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
    this.validAt = staged.block
    if (this.size > this.limit) this.clear()
  }
}
