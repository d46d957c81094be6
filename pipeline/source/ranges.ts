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
 * - An answer with more than `targetLogs` logs sizes the next range down to about `targetLogs`
 *   at the density just seen, and one with more than half of it stops growth: answers stay near
 *   a size providers accept (many cap at 10,000 logs) and batches stay small enough for the
 *   fetching of one to overlap the writing of another.
 */
import type { RangeTooLarge } from "./errors.js"

export interface RangePolicy {
  readonly initial: number
  readonly max: number
  readonly forgetAfter: number
  readonly targetLogs: number
}

export const defaultRangePolicy: RangePolicy = { initial: 2_000, max: 100_000, forgetAfter: 16, targetLogs: 5_000 }

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

/** The next size after a range of `attempted` blocks (default: the current size) answered `logs` logs. */
export const grow = (state: RangeState, policy: RangePolicy = defaultRangePolicy, logs = 0, attempted = state.size): RangeState => {
  const successes = state.successes + 1
  const failedAt = state.failedAt !== undefined && successes % policy.forgetAfter === 0 ? state.failedAt * 2 : state.failedAt
  const bound = Math.min(
    policy.max,
    state.statedCap ?? Number.POSITIVE_INFINITY,
    failedAt === undefined ? Number.POSITIVE_INFINITY : failedAt - 1
  )
  const wanted =
    logs > policy.targetLogs
      ? Math.floor((Math.max(attempted, 1) * policy.targetLogs) / logs)
      : logs > policy.targetLogs / 2
        ? state.size
        : state.size * 2
  return { ...state, successes, failedAt, size: Math.max(1, Math.min(wanted, bound)) }
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
