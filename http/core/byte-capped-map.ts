/**
 * The bounded store behind the one answer cache (`head-cache.ts`, its entries and its aliases):
 * an insertion-ordered map holding at most `maxBytes` by `cost`, the oldest
 * entries going first when a new one needs room.
 *
 * Invariants: `bytes` is the sum of the costs of the entries held and never exceeds `maxBytes`;
 * an entry costing more than `maxBytes` is not kept at all.
 */

/** What a Map entry costs besides its key and value (the entry, the string headers): an upper bound. */
export const ENTRY_OVERHEAD = 128

/** Bytes a JavaScript string takes at most (two a UTF-16 code unit). */
export const stringBytes = (text: string): number => text.length * 2

export class ByteCappedMap<V> {
  private readonly entries = new Map<string, { readonly value: V; readonly cost: number }>()
  private total = 0

  constructor(
    readonly maxBytes: number,
    private readonly costOf: (key: string, value: V) => number
  ) {}

  get(key: string): V | undefined {
    return this.entries.get(key)?.value
  }

  set(key: string, value: V): void {
    const cost = this.costOf(key, value)
    if (cost > this.maxBytes) return
    this.delete(key)
    for (const [oldest, entry] of this.entries) {
      if (this.total + cost <= this.maxBytes) break
      this.entries.delete(oldest)
      this.total -= entry.cost
    }
    this.entries.set(key, { value, cost })
    this.total += cost
  }

  delete(key: string): void {
    const held = this.entries.get(key)
    if (held === undefined) return
    this.entries.delete(key)
    this.total -= held.cost
  }

  /** Drops every entry whose value `drop` says goes (one pass over the entries). */
  deleteWhere(drop: (value: V) => boolean): void {
    for (const [key, entry] of this.entries) {
      if (!drop(entry.value)) continue
      this.entries.delete(key)
      this.total -= entry.cost
    }
  }

  clear(): void {
    this.entries.clear()
    this.total = 0
  }

  get size(): number {
    return this.entries.size
  }

  get bytes(): number {
    return this.total
  }
}
