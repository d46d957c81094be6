/**
 * The one answer cache of the HTTP APIs (the indexer's and the backend's): answers kept per
 * indexed head, under a canonical key the caller gives, in a store bounded in bytes.
 *
 * Indexed data changes only when the pipeline commits a block (or reverts to an ancestor), and
 * every commit moves the head the caller reads (`http/indexer/freshness.ts`). So an answer
 * computed while the head was H may be served again, byte for byte, while H stands.
 *
 * Invariants:
 * - heads are told apart by block AND hash (a reorg keeps the number, not the hash); the first
 *   lookup under another head drops every entry bound to a head, and, when that head does not
 *   move forward (the same or a lower number: a reorg), every entry, so nothing computed on an
 *   abandoned branch is ever served as current;
 * - an entry stored without a tier is bound to its head and lives as long as it; a tier
 *   (`TierRule`) gives an entry a lifetime, and either binds it to its head too (hot) or lets it
 *   outlive forward heads for that time (warm: data that may be a minute old);
 * - an entry's head is the one the caller read BEFORE computing it, and a value computed under a
 *   head that has moved on meanwhile is not stored, so no entry claims a newer block than it reflects;
 * - keys are canonical (decoded parameters, defaults applied: the caller's job), never a
 *   request's spelling; spellings may be remembered as aliases of a key in a share of the bytes of
 *   their own (`aliasBytes`), so a flood of spellings can only evict aliases;
 * - memory is bounded in bytes (`byte-capped-map.ts`): keys at two bytes a character, values by
 *   `valueBytes`, a fixed overhead each, at most `maxBytes` in all (aliases included), a value
 *   over `maxEntryBytes` not kept, the oldest entry going first;
 * - one computation per key and head at a time (`through`, "single flight"): a miss while
 *   another fiber computes the same key under the same head waits for that value instead of
 *   computing it again, so an entry expiring under load costs one computation, not one per
 *   request arriving meanwhile; when that computation fails, is interrupted, or gives a value not
 *   to be kept, each waiter computes its own.
 */
import { Deferred, Effect } from "effect"
import { ByteCappedMap, ENTRY_OVERHEAD, stringBytes } from "./byte-capped-map.js"

/** A head as the cache tells heads apart (the shape of `freshness.ts`'s `IndexedHead`). */
export interface Head {
  readonly block: number
  readonly hash: string
  /** The generation of the index the head is of (blue-green re-index); a switch clears every entry. */
  readonly generation?: string
}

/** How long an entry of a tier lives, and whether it also goes with its head. */
export interface TierRule {
  readonly ttlMs: number
  readonly perHead: boolean
}

export interface HeadCacheOptions<V, T extends string> {
  /** Bytes held at most, answers and aliases together. */
  readonly maxBytes: number
  /** A value costing more than this (by `valueBytes`) is not kept. */
  readonly maxEntryBytes: number
  /** What a value costs besides its key and the fixed overhead. */
  readonly valueBytes: (value: V) => number
  /** The tiers an entry may be stored in (none: every entry lives as long as its head). */
  readonly tiers?: Readonly<Record<T, TierRule>>
  /** The share of `maxBytes` kept for aliases (spelling to key); 0 or absent: no aliases. */
  readonly aliasBytes?: number
  /** The clock tiers are timed by. */
  readonly now?: () => number
}

/** What `through` answers: a stored (or shared) value, or the result this fiber computed. */
export type Through<V, A> = { readonly _tag: "Hit"; readonly value: V } | { readonly _tag: "Miss"; readonly result: A }

/** Spellings longer than this get no alias: decoding them again costs less than keeping them. */
export const MAX_ALIAS_LENGTH = 1_024

interface Entry<V> {
  readonly value: V
  /** When the entry stops being served (Infinity: while its head stands). */
  readonly expires: number
  /** Whether the entry goes when the head moves forward. */
  readonly perHead: boolean
}

const tagOf = (head: Head) => `${head.block}:${head.hash}${head.generation === undefined ? "" : `@${head.generation}`}`

export class HeadCache<V, T extends string = never> {
  private head: string | undefined = undefined
  private headBlock = -1
  private headGeneration: string | undefined = undefined
  private readonly entries: ByteCappedMap<Entry<V>>
  private readonly aliases: ByteCappedMap<string> | null
  private readonly valueBytes: (value: V) => number
  private readonly tiers: Readonly<Record<T, TierRule>> | undefined
  private readonly now: () => number
  /** Whether some tier lets entries outlive forward heads (else a new head simply empties the store). */
  private readonly outlivesHeads: boolean
  /**
   * Computations under way, by head and key: each resolves with the value to share, or with
   * undefined when there is none (failed, interrupted, not to be kept).
   */
  private readonly inFlight = new Map<string, Deferred.Deferred<V | undefined>>()
  readonly maxBytes: number
  readonly maxEntryBytes: number

  constructor(options: HeadCacheOptions<V, T>) {
    const aliasBytes = options.aliasBytes ?? 0
    this.maxBytes = options.maxBytes
    this.maxEntryBytes = options.maxEntryBytes
    this.valueBytes = options.valueBytes
    this.tiers = options.tiers
    this.now = options.now ?? Date.now
    this.outlivesHeads = Object.values<TierRule>(options.tiers ?? ({} as Record<T, TierRule>)).some((rule) => !rule.perHead)
    this.entries = new ByteCappedMap(
      options.maxBytes - aliasBytes,
      (key, entry) => stringBytes(key) + this.valueBytes(entry.value) + ENTRY_OVERHEAD
    )
    this.aliases =
      aliasBytes > 0 ? new ByteCappedMap(aliasBytes, (spelling, key) => stringBytes(spelling) + stringBytes(key) + ENTRY_OVERHEAD) : null
  }

  /** Moves the cache to `head`: entries bound to another head go; on a reorg every entry. */
  private at(head: Head): void {
    const tag = tagOf(head)
    if (tag === this.head) return
    // Another generation's tables may hold other rows at any block: nothing of the old one stays.
    if (head.block > this.headBlock && this.outlivesHeads && head.generation === this.headGeneration)
      this.entries.deleteWhere((entry) => entry.perHead)
    else this.entries.clear()
    this.aliases?.clear()
    this.head = tag
    this.headBlock = head.block
    this.headGeneration = head.generation
  }

  /** Whether `head` is the head the entries belong to (without moving the cache). */
  private stands(head: Head): boolean {
    return tagOf(head) === this.head
  }

  /** The value held for `key` under `head`, if any and not expired. */
  get(head: Head, key: string): V | undefined {
    this.at(head)
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    // An untiered entry never expires: no clock read on the indexer's hit path.
    if (entry.expires !== Infinity && entry.expires <= this.now()) {
      this.entries.delete(key)
      return undefined
    }
    return entry.value
  }

  /** Keeps `value`, computed under `head`, in `tier` (absent: while the head stands), unless the head has moved since. */
  set(head: Head, key: string, value: V, tier?: T): void {
    if (this.valueBytes(value) > this.maxEntryBytes || !this.stands(head)) return
    const rule = tier === undefined || this.tiers === undefined ? undefined : this.tiers[tier]
    this.entries.set(key, {
      value,
      expires: rule === undefined ? Infinity : this.now() + rule.ttlMs,
      perHead: rule === undefined || rule.perHead
    })
  }

  /** The key `spelling` was last found to have under `head` (none without alias bytes). */
  aliasOf(head: Head, spelling: string): string | undefined {
    this.at(head)
    return this.aliases?.get(spelling)
  }

  /** Remembers that `spelling` means `key` under `head`, unless the head has moved or the spelling is too long. */
  setAlias(head: Head, spelling: string, key: string): void {
    if (this.aliases === null || spelling.length > MAX_ALIAS_LENGTH || !this.stands(head)) return
    this.aliases.set(spelling, key)
  }

  /**
   * `key`'s value under `head` through the cache, one computation at a time: a held value is a
   * Hit; so is the value another fiber's computation of the same key under the same head gives
   * while this one waits for it. Otherwise `compute` runs (a Miss with its result) and the value
   * `keep` draws from the result, if any, is stored in `tier` and shared with the waiters.
   * With `lookup` false nothing held or shared is served (the value is still computed once per
   * leader and stored).
   */
  through<A, E, R>(
    head: Head,
    key: string,
    compute: Effect.Effect<A, E, R>,
    keep: (result: A) => V | undefined,
    options: { readonly tier?: T; readonly lookup?: boolean } = {}
  ): Effect.Effect<Through<V, A>, E, R> {
    return Effect.suspend(() => {
      const flight = `${tagOf(head)} ${key}`
      const computeOwn = Effect.suspend(() => {
        const leads = !this.inFlight.has(flight)
        if (!leads) return this.computeAndStore(head, key, compute, keep, options.tier, undefined, flight)
        return Effect.flatMap(Deferred.make<V | undefined>(), (mine) => {
          this.inFlight.set(flight, mine)
          return this.computeAndStore(head, key, compute, keep, options.tier, mine, flight)
        })
      })
      if (options.lookup === false) return computeOwn
      const held = this.get(head, key)
      if (held !== undefined) return Effect.succeed<Through<V, A>>({ _tag: "Hit", value: held })
      // Another fiber is computing this value under this head: share it (single flight).
      const leader = this.inFlight.get(flight)
      if (leader === undefined) return computeOwn
      return Effect.flatMap(Deferred.await(leader), (shared) =>
        shared === undefined ? computeOwn : Effect.succeed<Through<V, A>>({ _tag: "Hit", value: shared })
      )
    })
  }

  private computeAndStore<A, E, R>(
    head: Head,
    key: string,
    compute: Effect.Effect<A, E, R>,
    keep: (result: A) => V | undefined,
    tier: T | undefined,
    mine: Deferred.Deferred<V | undefined> | undefined,
    flight: string
  ): Effect.Effect<Through<V, A>, E, R> {
    return compute.pipe(
      Effect.map((result) => ({ result, value: keep(result) })),
      Effect.onExit((exit) =>
        Effect.sync(() => {
          if (mine === undefined) return
          this.inFlight.delete(flight)
          Deferred.unsafeDone(mine, Effect.succeed(exit._tag === "Success" ? exit.value.value : undefined))
        })
      ),
      Effect.map(({ result, value }): Through<V, A> => {
        if (value !== undefined) this.set(head, key, value, tier)
        return { _tag: "Miss", result }
      })
    )
  }

  /** The head (`block:hash`) the entries were last looked up under, for observation. */
  get heldHead(): string | undefined {
    return this.head
  }

  /** Computations under way, for observation. */
  get computing(): number {
    return this.inFlight.size
  }

  /** Values held (aliases not counted). */
  get size(): number {
    return this.entries.size
  }

  /** Bytes held, values and aliases, as counted against `maxBytes`. */
  get bytes(): number {
    return this.entries.bytes + (this.aliases?.bytes ?? 0)
  }
}
