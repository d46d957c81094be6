/**
 * One batch through every reducer: collect the keys its events touch, load those rows (orders
 * first, then the book levels those orders sit on), fold the events (pure), commit rows + undo +
 * checkpoint in one transaction.
 */
import { Effect } from "effect"
import type { LocatedEvent } from "./decode-batch.js"
import { bookLevelKeys, rowKeysOf } from "./keys.js"
import { reduceAll } from "./reduce/all.js"
import { positionKey, type ProtocolContracts } from "./reduce/markets.js"
import type { RowCache } from "./row-cache.js"
import { commitBatch, loadKeyedInto, loadState, lockCheckpointAt, type Checkpoint, type Keys } from "./sink.js"

export type { LocatedEvent } from "./decode-batch.js"

/** Every row key the events of a batch may read or write. */
export const keysOf = (events: ReadonlyArray<LocatedEvent>): Keys => {
  const markets = new Set<bigint>()
  const positions = new Set<string>()
  const users = new Set<string>()
  for (const { event: e } of events) {
    if ("marketId" in e && typeof e.marketId === "bigint") markets.add(e.marketId)
    switch (e._tag) {
      case "Trade":
        users.add(e.trader)
        users.add(e.recipient)
        positions.add(positionKey(e.recipient, e.marketId))
        break
      case "PositionSplit":
      case "PositionMerged":
      case "TokensRedeemed":
      case "MarketRefunded":
        users.add(e.user)
        positions.add(positionKey(e.user, e.marketId))
        break
    }
  }
  return { markets, positions, users }
}

/** Milliseconds spent in each phase of `applyBatch` since the process started (for benchmarks). */
export const batchTimings = { load: 0, reduce: 0, write: 0 }

/**
 * Folds and commits one batch. With a `cache`, rows it holds are not loaded again and the folded
 * rows are staged in it; the caller accepts them once the enclosing transaction has committed
 * and clears the cache otherwise (see row-cache.ts).
 */
export const applyBatch = (events: ReadonlyArray<LocatedEvent>, checkpoint: Checkpoint, protocol: ProtocolContracts, undoBlock: number | undefined, cache?: RowCache) =>
  Effect.gen(function* () {
    let t = performance.now()
    const keys = keysOf(events)
    const guard = cache?.guard
    if (guard !== undefined) yield* lockCheckpointAt(checkpoint.chainId, guard)
    const loaded = yield* loadState(keys, rowKeysOf(events), cache)
    yield* loadKeyedInto(loaded.rows, bookLevelKeys(events, loaded), cache)
    batchTimings.load += performance.now() - t
    t = performance.now()
    const before = structuredClone(loaded)
    for (const { event, at } of events) reduceAll(loaded, event, at, protocol)
    batchTimings.reduce += performance.now() - t
    t = performance.now()
    cache?.stage(keys, loaded, checkpoint.block)
    yield* commitBatch(before, loaded, checkpoint, undoBlock)
    batchTimings.write += performance.now() - t
  })
