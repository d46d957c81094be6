/**
 * Head reconciliation: what a newly seen head means for the chain we have indexed.
 *
 * The pipeline keeps the headers of every unfinalized indexed block (the window). A new head is
 * one of:
 *
 * - Duplicate: we already hold exactly this block; nothing to do.
 * - Behind:    an older block we hold with the same hash (a lagging replica answered); nothing
 *              to do.
 * - Next:      extends our tip (number = tip + 1, parentHash = tip hash); index it.
 * - Gap:       more than one block ahead; fetch tip+1 .. number-1 by number and reconcile each
 *              in order, then this one.
 * - Reorg:     its ancestry differs from ours at or below its number; walk back by parentHash to
 *              the newest block we hold with the same hash (the common ancestor), undo
 *              everything above it, then index the new branch.
 *
 * Invariants: the window is contiguous, each entry's parentHash is its predecessor's hash, and
 * it never reaches below the finalized block (a reorg that would need to is `ReorgTooDeep`).
 * Pure: no I/O; the caller fetches what a decision asks for (`findAncestor` through the lookup it is given).
 */
import { Data, Effect } from "effect"

export interface Header {
  readonly number: number
  readonly hash: string
  readonly parentHash: string
  readonly timestamp: number
}

export type Decision =
  | { readonly _tag: "Duplicate" }
  | { readonly _tag: "Behind" }
  | { readonly _tag: "Next" }
  | { readonly _tag: "Gap"; readonly from: number; readonly to: number }
  | { readonly _tag: "Reorg" }

/**
 * The hash of the base of an empty index: the block before deployBlock, which the pipeline never
 * reads. Any block attaches to it.
 */
export const UNKNOWN_PARENT = ""

const attaches = (parentHash: string, held: Header) => held.hash === UNKNOWN_PARENT || held.hash === parentHash

export class ReorgTooDeep extends Data.TaggedError("ReorgTooDeep")<{
  readonly depth: number
  readonly window: number
  readonly message: string
}> {}

/** The unfinalized indexed headers, oldest first, above the finalized block. */
export class Window {
  constructor(
    /** Highest finalized (irreversible) indexed block. */
    readonly finalized: Header,
    readonly headers: ReadonlyArray<Header> = []
  ) {}

  get tip(): Header {
    return this.headers[this.headers.length - 1] ?? this.finalized
  }

  /** The header we hold at `number`, finalized one included. */
  at(number: number): Header | undefined {
    if (number === this.finalized.number) return this.finalized
    const index = number - this.finalized.number - 1
    return index >= 0 ? this.headers[index] : undefined
  }

  has(header: { readonly number: number; readonly hash: string }): boolean {
    return this.at(header.number)?.hash === header.hash
  }

  /** The window with `header` appended; it must be `Next`. */
  push(header: Header): Window {
    if (header.number !== this.tip.number + 1 || !attaches(header.parentHash, this.tip)) {
      throw new Error(`block ${header.number} does not extend the tip ${this.tip.number}`)
    }
    return new Window(this.finalized, [...this.headers, header])
  }

  /** The window cut back to `ancestor` (which it must hold). */
  rewindTo(ancestor: number): Window {
    if (ancestor < this.finalized.number) throw new Error(`cannot rewind below finalized block ${this.finalized.number}`)
    return new Window(this.finalized, this.headers.slice(0, ancestor - this.finalized.number))
  }

  /** Moves the finalized mark up to `number` (no further than the tip), dropping what is now final. */
  finalize(number: number): Window {
    const target = Math.min(number, this.tip.number)
    if (target <= this.finalized.number) return this
    const index = target - this.finalized.number - 1
    return new Window(this.headers[index]!, this.headers.slice(index + 1))
  }
}

export const reconcile = (window: Window, head: Header): Decision => {
  const tip = window.tip
  if (head.number <= tip.number) {
    const held = window.at(head.number)
    if (held?.hash === head.hash) return head.number === tip.number ? { _tag: "Duplicate" } : { _tag: "Behind" }
    return { _tag: "Reorg" }
  }
  if (head.number === tip.number + 1) return attaches(head.parentHash, tip) ? { _tag: "Next" } : { _tag: "Reorg" }
  return { _tag: "Gap", from: tip.number + 1, to: head.number - 1 }
}

/**
 * Finds the common ancestor of the branch ending at `head`: walks back through `parentOf` (a
 * lookup by hash, usually the node) until a block we hold. Fails with ReorgTooDeep when the walk
 * passes the finalized block, and with whatever `parentOf` fails with.
 */
export const findAncestor = <E, R>(
  window: Window,
  head: Header,
  parentOf: (header: Header) => Effect.Effect<Header, E, R>
): Effect.Effect<{ readonly ancestor: Header; readonly branch: ReadonlyArray<Header> }, E | ReorgTooDeep, R> =>
  Effect.gen(function* () {
    const branch: Array<Header> = [head]
    let cursor = head
    for (;;) {
      if (cursor.number - 1 < window.finalized.number) {
        return yield* new ReorgTooDeep({
          depth: window.tip.number - cursor.number + 1,
          window: window.headers.length,
          message: `reorg deeper than the unfinalized window: it replaces block ${cursor.number} and below, but only blocks above finalized block ${window.finalized.number} can be undone (${window.headers.length} in the window)`
        })
      }
      const held = window.at(cursor.number - 1)
      if (held !== undefined && attaches(cursor.parentHash, held)) return { ancestor: held, branch: branch.reverse() }
      cursor = yield* parentOf(cursor)
      branch.push(cursor)
    }
  })
