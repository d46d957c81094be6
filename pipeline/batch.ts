/**
 * One batch through every reducer: collect the keys its events touch, load those rows (orders
 * first, then the book levels those orders sit on), fold the events (pure), commit rows + undo +
 * checkpoint in one transaction.
 */
import { Effect } from "effect"
import type { LocatedEvent } from "./decode-batch.js"
import { bookLevelKeys, emptyRowKeys, rowKeysOf, type Keys } from "./keys.js"
import { reduceAll } from "./reduce/all.js"
import { positionKey } from "./reduce/positions.js"
import type { ProtocolContracts } from "./reduce/model.js"
import { historyKey, historyMinute } from "./reduce/positions.js"
import type { RowCache } from "./row-cache.js"
import { commitBatch, loadKeyedInto, loadState, loadWorkingInto, lockCheckpointAt, type Checkpoint } from "./sink.js"
import { poolKey } from "./reduce/amm.js"
import { ZERO_ADDRESS } from "./reduce/holders.js"
import { orderKey } from "./reduce/orders.js"
import { rowKey, type KeyPart } from "./reduce/rows.js"
import type { State } from "./reduce/state.js"

export type { LocatedEvent } from "./decode-batch.js"

/** Keys of the first slice's rows, and of the position-history rows their moves may write. */
export interface LedgerKeys extends Keys {
  readonly history: Map<string, ReadonlyArray<KeyPart>>
}

/** Every row key the events of a batch may read or write. */
export const keysOf = (events: ReadonlyArray<LocatedEvent>): LedgerKeys => {
  const markets = new Set<bigint>()
  const positions = new Set<string>()
  const users = new Set<string>()
  const history = new Map<string, ReadonlyArray<KeyPart>>()
  const add = (user: string, marketId: bigint, timestamp: number) => {
    users.add(user)
    positions.add(positionKey(user, marketId))
    const minute = historyMinute(timestamp)
    history.set(historyKey(user, marketId, minute), [user, marketId, minute])
  }
  for (const { event: e, at } of events) {
    if ("marketId" in e && typeof e.marketId === "bigint") markets.add(e.marketId)
    switch (e._tag) {
      case "Trade":
      case "TakerFilled":
        add(e._tag === "Trade" ? e.trader : e.taker, e.marketId, at.timestamp)
        add(e.recipient, e.marketId, at.timestamp)
        break
      case "OrderPlaced":
        add(e.owner, e.marketId, at.timestamp)
        break
      case "PositionSplit":
      case "PositionMerged":
      case "TokensRedeemed":
      case "MarketRefunded":
        add(e.user, e.marketId, at.timestamp)
        break
    }
  }
  return { markets, positions, users, history }
}

/**
 * The second load's keys: positions and users of fills and transfers, whose owner or market only
 * loaded rows (or earlier events of the batch) name: a maker order's owner, an outcome token's
 * market; and the market of a pool being initialized (its first price).
 */
export const ledgerKeysOf = (events: ReadonlyArray<LocatedEvent>, s: State): LedgerKeys => {
  const markets = new Set<bigint>()
  const pools = new Map<string, bigint>()
  const positions = new Set<string>()
  const users = new Set<string>()
  const history = new Map<string, ReadonlyArray<KeyPart>>()
  const owners = new Map<string, string>()
  const tokens = new Map<string, bigint>()
  let timestamp = 0
  const add = (user: string, marketId: bigint) => {
    users.add(user)
    positions.add(positionKey(user, marketId))
    const minute = historyMinute(timestamp)
    history.set(historyKey(user, marketId, minute), [user, marketId, minute])
  }
  const marketOf = (token: string) => tokens.get(token) ?? s.rows.outcomeTokens.map.get(rowKey(token))?.marketId
  for (const { event: e, at } of events) {
    timestamp = at.timestamp
    switch (e._tag) {
      case "MarketCreated":
        tokens.set(e.yesToken, e.marketId)
        tokens.set(e.noToken, e.marketId)
        break
      case "OrderPlaced":
        owners.set(e.orderId, e.owner)
        break
      case "Hook_PoolRegistered":
        pools.set(e.poolId, e.marketId)
        break
      case "Initialize": {
        const marketId = pools.get(e.id) ?? s.rows.pools.map.get(poolKey(e.id))?.marketId
        if (marketId !== undefined) markets.add(marketId)
        break
      }
      case "OrderMatched":
        for (const id of [e.makerOrderId, e.takerOrderId]) {
          const owner = owners.get(id) ?? s.rows.orders.map.get(orderKey(id))?.owner
          if (owner !== undefined) add(owner, e.marketId)
        }
        break
      case "Transfer": {
        const marketId = marketOf(at.address)
        if (marketId === undefined) break
        if (e.from !== ZERO_ADDRESS) add(e.from, marketId)
        if (e.to !== ZERO_ADDRESS) add(e.to, marketId)
        break
      }
      case "DustRefunded": {
        const marketId = marketOf(e.token)
        if (marketId !== undefined) add(e.recipient, marketId)
        break
      }
    }
  }
  return { markets, positions, users, history }
}

/** Where `applyBatch` adds the milliseconds of its phases (the indexer's stats). */
export interface BatchTimings {
  loadMs: number
  reduceMs: number
  writeMs: number
}

/**
 * Folds and commits one batch. With a `cache`, rows it holds are not loaded again and the folded
 * rows are staged in it; the caller accepts them once the enclosing transaction has committed
 * and clears the cache otherwise (see row-cache.ts).
 */
export const applyBatch = (
  events: ReadonlyArray<LocatedEvent>,
  checkpoint: Checkpoint,
  protocol: ProtocolContracts,
  undoBlock: number | undefined,
  cache?: RowCache,
  timings: BatchTimings = { loadMs: 0, reduceMs: 0, writeMs: 0 }
) =>
  Effect.gen(function* () {
    let t = performance.now()
    const keys = keysOf(events)
    const guard = cache?.guard
    if (guard !== undefined) yield* lockCheckpointAt(checkpoint.chainId, guard)
    const loaded = yield* loadState(keys, rowKeysOf(events), cache)
    yield* loadKeyedInto(loaded.rows, bookLevelKeys(events, loaded), cache)
    const ledger = ledgerKeysOf(events, loaded)
    yield* loadWorkingInto(loaded, ledger, cache, false)
    yield* loadKeyedInto(loaded.rows, { ...emptyRowKeys(), positionHistory: new Map([...keys.history, ...ledger.history]) }, cache)
    timings.loadMs += performance.now() - t
    t = performance.now()
    const before = structuredClone(loaded)
    for (const { event, at } of events) reduceAll(loaded, event, at, protocol)
    timings.reduceMs += performance.now() - t
    t = performance.now()
    cache?.stage(
      {
        markets: new Set([...keys.markets, ...ledger.markets]),
        positions: new Set([...keys.positions, ...ledger.positions]),
        users: new Set([...keys.users, ...ledger.users])
      },
      loaded,
      checkpoint.block
    )
    yield* commitBatch(before, loaded, checkpoint, undoBlock)
    timings.writeMs += performance.now() - t
  })
