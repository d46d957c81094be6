/**
 * The exchange (CLOB): orders with a derived status, match rows (which double as maker fills:
 * each names its maker address), taker fills, fees, and the order book per (market, side, price).
 *
 * Status is derived, the contract has none: cancelled -> CANCELLED; filled >= amount -> FILLED;
 * 0 < filled < amount -> PARTIALLY_FILLED; otherwise OPEN. An order is live while OPEN or
 * PARTIALLY_FILLED.
 *
 * Invariants:
 * - a book level's `amount` is the sum of `amount - filled` over the live orders at its (market,
 *   side, price), and `orders` is their count; a level exists exactly while `orders > 0`;
 * - matched before placed: `placeOrder` logs the new order's OrderMatched rows (as taker) BEFORE
 *   its OrderPlaced, in the same transaction. Fills of an order id not known yet wait in
 *   `pendingFills` and are applied when its OrderPlaced arrives, so the placed order starts with
 *   that much filled and only its remainder reaches the book. One transaction lies within one
 *   block and batches hold whole blocks, so a pending fill never has to outlive its batch;
 * - the zero taker id (taker path, router market orders) is no order: it never gets a row, a
 *   pending fill or a book level. Pending fills of ids never placed are dropped with the batch.
 *
 * Fills move positions (positions.ts): a maker's fill at the match price (rounded down, as the
 * exchange pays); a limit taker's fill, once its OrderPlaced names the owner, at the match price
 * for a COMPLEMENTARY match and at its own limit price for MINT and MERGE (the surplus over $1
 * goes to the fee recipient); a market taker's fills (zero taker id) as one TakerFilled, unless
 * the taker is a protocol contract (the router: its Trade moves the user's position).
 */
import type { DomainEventOf } from "../../schema/domain-events.js"
import type { Located, MatchRow, OrderRow, OrderStatus, ProtocolContracts } from "./model.js"
import { acquire, atPrice, dispose, markTraded } from "./positions.js"
import { dropRow, getRow, putRow, rowKey } from "./rows.js"
import type { State } from "./state.js"

export const ZERO_ORDER_ID = `0x${"0".repeat(64)}`

export const orderKey = (id: string) => rowKey(id)
export const levelKey = (marketId: bigint, side: number, price: bigint) => rowKey(marketId, side, price)

export const statusOf = (o: Pick<OrderRow, "amount" | "filled" | "status">): OrderStatus =>
  o.status === "CANCELLED" ? "CANCELLED" : o.filled >= o.amount ? "FILLED" : o.filled > 0n ? "PARTIALLY_FILLED" : "OPEN"

const isLive = (o: OrderRow) => o.status === "OPEN" || o.status === "PARTIALLY_FILLED"
const remainingOf = (o: OrderRow) => (isLive(o) && o.amount > o.filled ? o.amount - o.filled : 0n)

/** Moves an order's book contribution from what it was (`wasLive`, `wasRemaining`) to what it is. */
const rebook = (s: State, o: OrderRow, wasLive: boolean, wasRemaining: bigint): void => {
  const live = isLive(o)
  const amount = remainingOf(o) - wasRemaining
  const orders = BigInt(Number(live) - Number(wasLive))
  if (amount === 0n && orders === 0n) return
  const key = levelKey(o.marketId, o.side, o.price)
  let level = getRow(s.rows.bookLevels, key, "order_book_level")
  if (level === undefined) {
    level = { marketId: o.marketId, side: o.side, price: o.price, amount: 0n, orders: 0n }
    putRow(s.rows.bookLevels, key, level, "order_book_level")
  }
  level.amount += amount
  level.orders += orders
  if (level.orders === 0n) {
    if (level.amount !== 0n) throw new Error(`book level ${key} has no orders but ${level.amount} open`)
    dropRow(s.rows.bookLevels, key, "order_book_level")
  }
}

const isBuySide = (side: number) => side === 0 || side === 2
const isYesSide = (side: number) => side === 0 || side === 1

/** `owner` bought (BUY side) or sold `shares` of its side's token for `usdc`. */
const fillPosition = (
  s: State,
  protocol: ProtocolContracts,
  owner: string,
  marketId: bigint,
  side: number,
  shares: bigint,
  usdc: bigint
): void => {
  markTraded(s, owner, protocol)
  if (isBuySide(side)) acquire(s, protocol, owner, marketId, isYesSide(side), shares, usdc)
  else dispose(s, protocol, owner, marketId, isYesSide(side), shares, usdc)
}

/** A limit taker's side of a match: the maker's price when complementary, its own limit price otherwise. */
const takerFill = (
  s: State,
  protocol: ProtocolContracts,
  taker: OrderRow | { readonly owner: string; readonly marketId: bigint; readonly side: number; readonly price: bigint },
  m: MatchRow
): void =>
  fillPosition(s, protocol, taker.owner, m.marketId, taker.side, m.amount, atPrice(m.amount, m.matchType === 0 ? m.price : taker.price))

export const onOrderPlaced = (s: State, e: DomainEventOf<"OrderPlaced">, at: Located, protocol: ProtocolContracts): void => {
  const key = orderKey(e.orderId)
  if (getRow(s.rows.orders, key, "exchange_order") !== undefined) throw new Error(`order ${e.orderId} placed twice`)
  const pending = s.pendingFills.get(e.orderId)
  s.pendingFills.delete(e.orderId)
  const o: OrderRow = {
    id: e.orderId,
    marketId: e.marketId,
    owner: e.owner,
    side: e.side,
    price: e.price,
    amount: e.amount,
    filled: pending?.filled ?? 0n,
    status: "OPEN",
    builder: e.builder,
    placedAt: at.timestamp,
    placedBlock: at.block,
    placedTx: at.txHash,
    updatedAt: at.timestamp,
    filledAt: null,
    cancelledAt: null,
    cancelledTx: null
  }
  o.status = statusOf(o)
  if (o.status === "FILLED") o.filledAt = at.timestamp
  putRow(s.rows.orders, key, o, "exchange_order")
  rebook(s, o, false, 0n)
  for (const index of pending?.matches ?? []) {
    const m = s.logs.matches[index]!
    m.taker = e.owner
    takerFill(s, protocol, o, m)
  }
}

/** One side of a match: the order's fill grows, or waits for its OrderPlaced. */
const fill = (s: State, orderId: string, amount: bigint, at: Located, matchIndex: number, asTaker: boolean): void => {
  if (orderId === ZERO_ORDER_ID) return
  const o = getRow(s.rows.orders, orderKey(orderId), "exchange_order")
  if (o === undefined) {
    let pending = s.pendingFills.get(orderId)
    if (pending === undefined) s.pendingFills.set(orderId, (pending = { filled: 0n, matches: [], lastAt: at.timestamp }))
    pending.filled += amount
    pending.lastAt = at.timestamp
    if (asTaker) pending.matches.push(matchIndex)
    return
  }
  const wasLive = isLive(o)
  const wasRemaining = remainingOf(o)
  o.filled += amount
  o.status = statusOf(o)
  o.updatedAt = at.timestamp
  if (o.status === "FILLED" && o.filledAt === null) o.filledAt = at.timestamp
  rebook(s, o, wasLive, wasRemaining)
}

export const onOrderMatched = (s: State, e: DomainEventOf<"OrderMatched">, at: Located, protocol: ProtocolContracts): void => {
  const maker = getRow(s.rows.orders, orderKey(e.makerOrderId), "exchange_order")
  const taker = e.takerOrderId === ZERO_ORDER_ID ? undefined : getRow(s.rows.orders, orderKey(e.takerOrderId), "exchange_order")
  const index = s.logs.matches.length
  s.logs.matches.push({
    ...at,
    marketId: e.marketId,
    makerOrderId: e.makerOrderId,
    takerOrderId: e.takerOrderId,
    maker: maker?.owner ?? null,
    makerSide: maker?.side ?? null,
    taker: taker?.owner ?? null,
    matchType: e.matchType,
    amount: e.amount,
    price: e.price,
    makerBuilder: e.makerBuilder,
    takerBuilder: e.takerBuilder
  })
  fill(s, e.makerOrderId, e.amount, at, index, false)
  fill(s, e.takerOrderId, e.amount, at, index, true)
  const match = s.logs.matches[index]!
  if (maker !== undefined) fillPosition(s, protocol, maker.owner, e.marketId, maker.side, e.amount, atPrice(e.amount, e.price))
  if (taker !== undefined) takerFill(s, protocol, taker, match)
}

export const onOrderCancelled = (s: State, e: DomainEventOf<"OrderCancelled">, at: Located): void => {
  const o = getRow(s.rows.orders, orderKey(e.orderId), "exchange_order")
  if (o === undefined || o.status === "CANCELLED") return
  const wasLive = isLive(o)
  const wasRemaining = remainingOf(o)
  o.status = "CANCELLED"
  o.cancelledAt = at.timestamp
  o.cancelledTx = at.txHash
  o.updatedAt = at.timestamp
  rebook(s, o, wasLive, wasRemaining)
}

/**
 * A market order's fills as one: a BUY's shares (totalFilled) go to the recipient for totalCost
 * USDC; a SELL's shares (totalCost) leave the taker for totalFilled USDC. The router's own market
 * orders are its Trade's CLOB leg and move no position here.
 */
export const onTakerFilled = (s: State, e: DomainEventOf<"TakerFilled">, at: Located, protocol: ProtocolContracts): void => {
  s.logs.takerFills.push({
    ...at,
    marketId: e.marketId,
    taker: e.taker,
    recipient: e.recipient,
    takerSide: e.takerSide,
    totalFilled: e.totalFilled,
    totalCost: e.totalCost,
    matchCount: e.matchCount
  })
  if (protocol.has(e.taker)) return
  markTraded(s, e.recipient, protocol)
  if (isBuySide(e.takerSide)) fillPosition(s, protocol, e.recipient, e.marketId, e.takerSide, e.totalFilled, e.totalCost)
  else fillPosition(s, protocol, e.taker, e.marketId, e.takerSide, e.totalCost, e.totalFilled)
}

export const onFeeCollected = (s: State, e: DomainEventOf<"FeeCollected">, at: Located): void => {
  s.logs.fees.push({ ...at, marketId: e.marketId, amount: e.amount })
}
