/**
 * Folding hand-made events through every reducer, in memory, for the reducer tests.
 */
import type { DomainEvent } from "../../schema/domain-events.js"
import { reduceAll } from "../../pipeline/reduce/all.js"
import type { Located } from "../../pipeline/reduce/model.js"
import { emptyState, type State } from "../../pipeline/reduce/state.js"

export const A = (n: number) => `0x${n.toString(16).padStart(40, "0")}`
export const H = (n: number) => `0x${n.toString(16).padStart(64, "0")}`

/** An event with where it sits; `tx` groups events into one transaction (same block, same hash). */
export interface Step {
  readonly event: DomainEvent
  readonly block?: number
  readonly timestamp?: number
  readonly address?: string
  readonly tx?: number
}

export const ROUTER = A(0xf00d)
export const POOL_MANAGER = A(0xb001)
export const EXCHANGE = A(0xe0)
/** The protocol contracts of the reducer tests: router, exchange, pool manager. */
export const protocol = {
  has: (a: string) => a === ROUTER || a === EXCHANGE || a === POOL_MANAGER,
  isVenue: (a: string) => a === ROUTER || a === EXCHANGE
}

/** Folds the steps in order; a step without a block gets the next block (one log each). */
export const fold = (steps: ReadonlyArray<Step | DomainEvent>, state: State = emptyState()): State => {
  let block = 100
  let logIndex = 0
  for (const step of steps) {
    const s: Step = "_tag" in step ? { event: step } : step
    const nextBlock = s.block ?? block + 1
    logIndex = nextBlock === block ? logIndex + 1 : 0
    block = nextBlock
    const at: Located = {
      block,
      timestamp: s.timestamp ?? 1_700_000_000 + block,
      txHash: H(s.tx ?? block),
      logIndex,
      address: s.address ?? A(0xd1a)
    }
    reduceAll(state, s.event, at, protocol)
  }
  return state
}

export const rows = <R>(set: { readonly map: Map<string, R | null> }): Array<R> => [...set.map.values()].filter((r): r is R => r !== null)
