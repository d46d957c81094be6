/**
 * Adaptive eth_getLogs range sizing, as a pure state machine.
 *
 * - Success doubles the size (fast ramp-up), up to `max`, a ceiling the provider stated, and
 *   just under the smallest size that recently failed.
 * - A range error shrinks: to the provider's suggested range when that is smaller than what was
 *   asked, else to its stated block cap when smaller, else to half.
 * - A failure at one block cannot shrink further: `shrink` then answers undefined and the caller
 *   stops instead of retrying the same failing range forever.
 * - A failure size is forgotten (its bound doubled) after `forgetAfter` consecutive successes,
 *   since log density changes along the chain.
 */
import type { RangeTooLarge } from "./errors.js"

export interface RangePolicy {
  readonly initial: number
  readonly max: number
  readonly forgetAfter: number
}

export const defaultRangePolicy: RangePolicy = { initial: 2_000, max: 100_000, forgetAfter: 16 }

export interface RangeState {
  readonly size: number
  /** A cap the provider stated; never exceeded. */
  readonly statedCap: number | undefined
  /** Smallest size that failed recently; growth stays below it. */
  readonly failedAt: number | undefined
  readonly successes: number
}

export const initialRange = (policy: RangePolicy = defaultRangePolicy): RangeState => ({
  size: Math.max(1, Math.min(policy.initial, policy.max)),
  statedCap: undefined,
  failedAt: undefined,
  successes: 0
})

export const grow = (state: RangeState, policy: RangePolicy = defaultRangePolicy): RangeState => {
  const successes = state.successes + 1
  const failedAt = state.failedAt !== undefined && successes % policy.forgetAfter === 0 ? state.failedAt * 2 : state.failedAt
  const bound = Math.min(policy.max, state.statedCap ?? Number.POSITIVE_INFINITY, failedAt === undefined ? Number.POSITIVE_INFINITY : failedAt - 1)
  return { ...state, successes, failedAt, size: Math.max(1, Math.min(state.size * 2, bound)) }
}

/** The next size after `attempted` blocks failed with `error`; undefined when one block already failed. */
export const shrink = (state: RangeState, attempted: number, error: RangeTooLarge): RangeState | undefined => {
  if (attempted <= 1) return undefined
  const suggested = error.suggested === undefined ? undefined : error.suggested.to - error.suggested.from + 1
  let size: number
  if (suggested !== undefined && suggested >= 1 && suggested < attempted) size = suggested
  else if (error.maxBlocks !== undefined && error.maxBlocks < attempted) size = error.maxBlocks
  else size = Math.floor(attempted / 2)
  return {
    size: Math.max(1, size),
    statedCap: error.maxBlocks !== undefined ? Math.min(error.maxBlocks, state.statedCap ?? error.maxBlocks) : state.statedCap,
    failedAt: Math.min(attempted, state.failedAt ?? attempted),
    successes: 0
  }
}
