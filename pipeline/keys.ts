/**
 * Which keyed rows a batch's events read or write, for loading before the fold.
 *
 * Invariant: every key a reducer passes to getRow/putRow/dropRow for these events is collected
 * here (the strict row sets of a loaded batch throw otherwise). Order-book levels depend on the
 * side and price of orders that are only known once the orders are loaded, so they are a second
 * step (`bookLevelKeys`) after the first load; so are the positions and users of fills and
 * transfers, whose owner or market only loaded rows name (`ledgerKeysOf`).
 */
import type { DomainEvent } from "../schema/domain-events.js"
import { pauseKey } from "./reduce/admin.js"
import { lpKey, poolKey } from "./reduce/amm.js"
import { candleKey, candleKeysAt } from "./reduce/candles.js"
import { eventGroupKey } from "./reduce/event-groups.js"
import { holderKey, ZERO_ADDRESS } from "./reduce/holders.js"
import { marketKey } from "./reduce/markets.js"
import type { Located } from "./reduce/model.js"
import { approvedOracleKey, feedMarketKey, manualOracleKey, reportKey } from "./reduce/oracles.js"
import { levelKey, orderKey, ZERO_ORDER_ID } from "./reduce/orders.js"
import { positionKey, userKey } from "./reduce/positions.js"
import { PROTOCOL_KEY } from "./reduce/protocol-totals.js"
import { rowKey, type KeyPart } from "./reduce/rows.js"
import { dayOf, traderDayKey, traderMarketKey, traderTotalKey } from "./reduce/trader-activity.js"
import { KEYED_NAMES, type KeyedRows, type State } from "./reduce/state.js"

/** Per keyed table: in-memory key -> the key column values, in the table's key order. */
export type RowKeys = { readonly [K in keyof KeyedRows]: Map<string, ReadonlyArray<KeyPart>> }

export const emptyRowKeys = (): RowKeys => Object.fromEntries(KEYED_NAMES.map((n) => [n, new Map()])) as unknown as RowKeys

const add = (keys: RowKeys, table: keyof KeyedRows, key: string, parts: ReadonlyArray<KeyPart>) => {
  keys[table].set(key, parts)
}

/** A user's position in a market and their stats row. */
const addPosition = (keys: RowKeys, user: string, marketId: bigint) => {
  add(keys, "users", userKey(user), [user])
  add(keys, "positions", positionKey(user, marketId), [user, marketId])
}

/** The first load: every key computable from the events alone (and the protocol totals, always). */
export const rowKeysOf = (events: ReadonlyArray<{ readonly event: DomainEvent; readonly at: Located }>): RowKeys => {
  const keys = emptyRowKeys()
  add(keys, "protocol", PROTOCOL_KEY, [1])
  const candles = (marketId: bigint, timestamp: number) => {
    for (const [id, tf, bucket] of candleKeysAt(marketId, timestamp)) add(keys, "candles", candleKey(id, tf, bucket), [id, tf, bucket])
  }
  const trader = (address: string, timestamp: number) => {
    add(keys, "traderTotals", traderTotalKey(address), [address])
    add(keys, "traderDays", traderDayKey(address, dayOf(timestamp)), [address, dayOf(timestamp)])
  }
  for (const { event: e, at } of events) {
    if ("marketId" in e && typeof e.marketId === "bigint") add(keys, "markets", marketKey(e.marketId), [e.marketId])
    switch (e._tag) {
      case "Trade":
      case "TakerFilled":
        addPosition(keys, e._tag === "Trade" ? e.trader : e.taker, e.marketId)
        addPosition(keys, e.recipient, e.marketId)
        break
      case "OrderPlaced":
        addPosition(keys, e.owner, e.marketId)
        break
      case "PositionSplit":
      case "PositionMerged":
      case "TokensRedeemed":
      case "MarketRefunded":
        addPosition(keys, e.user, e.marketId)
        break
    }
    switch (e._tag) {
      case "MarketCreated":
        add(keys, "outcomeTokens", rowKey(e.yesToken), [e.yesToken])
        add(keys, "outcomeTokens", rowKey(e.noToken), [e.noToken])
        break
      case "Transfer":
        add(keys, "outcomeTokens", rowKey(at.address), [at.address])
        for (const holder of [e.from, e.to]) {
          if (holder !== ZERO_ADDRESS) add(keys, "holders", holderKey(at.address, holder), [at.address, holder])
        }
        break
      case "DustRefunded":
        add(keys, "outcomeTokens", rowKey(e.token), [e.token])
        break
      case "Trade":
        candles(e.marketId, at.timestamp)
        trader(e.trader, at.timestamp)
        for (const address of [e.trader, e.recipient])
          add(keys, "traderMarkets", traderMarketKey(address, e.marketId), [address, e.marketId])
        break
      case "Hook_MarketTraded":
        candles(e.marketId, at.timestamp)
        break
      case "OrderPlaced":
      case "OrderCancelled":
        add(keys, "orders", orderKey(e.orderId), [e.orderId])
        break
      case "OrderMatched":
        for (const id of [e.makerOrderId, e.takerOrderId]) if (id !== ZERO_ORDER_ID) add(keys, "orders", orderKey(id), [id])
        break
      case "EventCreated":
      case "EventResolved":
      case "EventRefundModeEnabled":
        add(keys, "eventGroups", eventGroupKey(e.eventId), [e.eventId])
        break
      case "OracleApproved":
      case "OracleRevoked":
        add(keys, "approvedOracles", approvedOracleKey(e.oracle), [e.oracle])
        break
      case "OutcomeReported":
      case "OutcomeRevoked":
      case "ReportReopened":
        add(keys, "manualOracles", manualOracleKey(at.address), [at.address])
        add(keys, "reports", reportKey(at.address, "market", e.marketId), [at.address, "market", e.marketId])
        break
      case "EventOutcomeReported":
      case "EventOutcomeRevoked":
      case "EventReportReopened":
        add(keys, "manualOracles", manualOracleKey(at.address), [at.address])
        add(keys, "reports", reportKey(at.address, "event", e.eventId), [at.address, "event", e.eventId])
        break
      case "ChallengeDelayUpdated":
        add(keys, "manualOracles", manualOracleKey(at.address), [at.address])
        break
      case "MarketRegistered":
      case "PriceFeedMarketResolved":
      case "MarketUnregistered":
        add(keys, "feedMarkets", feedMarketKey(at.address, e.marketId), [at.address, e.marketId])
        break
      case "GlobalPaused":
      case "GlobalUnpaused":
        add(keys, "pauseStates", pauseKey("global"), ["global"])
        break
      case "Hook_PauseStatusChanged":
        add(keys, "pauseStates", pauseKey("hook"), ["hook"])
        break
      case "ExchangePaused":
      case "ExchangeUnpaused":
        add(keys, "pauseStates", pauseKey("exchange"), ["exchange"])
        break
      case "ModulePaused":
      case "ModuleUnpaused":
        add(keys, "pauseStates", pauseKey(e.moduleId), [e.moduleId])
        break
      case "Hook_PoolRegistered":
        add(keys, "pools", poolKey(e.poolId), [e.poolId])
        break
      case "Initialize":
      case "Swap":
        add(keys, "pools", poolKey(e.id), [e.id])
        break
      case "ModifyLiquidity":
        add(keys, "pools", poolKey(e.id), [e.id])
        if (e.liquidityDelta > 0n) trader(e.sender, at.timestamp)
        add(keys, "lpPositions", lpKey(e.id, e.sender, e.tickLower, e.tickUpper, e.salt), [
          e.id,
          e.sender,
          e.tickLower,
          e.tickUpper,
          e.salt
        ])
        break
    }
  }
  return keys
}

/** The second load: the book level of every order loaded or placed in this batch. */
export const bookLevelKeys = (events: ReadonlyArray<{ readonly event: DomainEvent }>, s: State): RowKeys => {
  const keys = emptyRowKeys()
  const level = (marketId: bigint, side: number, price: bigint) =>
    add(keys, "bookLevels", levelKey(marketId, side, price), [marketId, side, price])
  for (const o of s.rows.orders.map.values()) if (o !== null) level(o.marketId, o.side, o.price)
  for (const { event: e } of events) if (e._tag === "OrderPlaced") level(e.marketId, e.side, e.price)
  return keys
}

/**
 * The second load's keys: positions and users of fills and transfers, whose owner or market only
 * loaded rows (or earlier events of the batch) name: a maker order's owner, an outcome token's
 * market; and the market of a pool being initialized (its first price).
 */
export const ledgerKeysOf = (events: ReadonlyArray<{ readonly event: DomainEvent; readonly at: Located }>, s: State): RowKeys => {
  const keys = emptyRowKeys()
  const pools = new Map<string, bigint>()
  const owners = new Map<string, string>()
  const tokens = new Map<string, bigint>()
  const marketOf = (token: string) => tokens.get(token) ?? s.rows.outcomeTokens.map.get(rowKey(token))?.marketId
  for (const { event: e, at } of events) {
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
        if (marketId !== undefined) add(keys, "markets", marketKey(marketId), [marketId])
        break
      }
      case "OrderMatched":
        for (const id of [e.makerOrderId, e.takerOrderId]) {
          const owner = owners.get(id) ?? s.rows.orders.map.get(orderKey(id))?.owner
          if (owner !== undefined) addPosition(keys, owner, e.marketId)
        }
        break
      case "Transfer": {
        const marketId = marketOf(at.address)
        if (marketId === undefined) break
        if (e.from !== ZERO_ADDRESS) addPosition(keys, e.from, marketId)
        if (e.to !== ZERO_ADDRESS) addPosition(keys, e.to, marketId)
        break
      }
      case "DustRefunded": {
        const marketId = marketOf(e.token)
        if (marketId !== undefined) addPosition(keys, e.recipient, marketId)
        break
      }
    }
  }
  return keys
}
