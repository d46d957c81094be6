/**
 * The exchange reducer on hand-made events: derived status, the book per (market, side, price),
 * matched-before-placed, and taker ids that are never orders.
 */
import { describe, expect, it } from "vitest"
import type { DomainEvent } from "../../schema/domain-events.js"
import { levelKey, orderKey, ZERO_ORDER_ID } from "../../pipeline/reduce/orders.js"
import { A, fold, H, rows } from "./fold.js"

const alice = A(1)
const bob = A(2)
const M = (n: number) => H(0xa000 + n)

const placed = (id: string, owner: string, side: 0 | 1 | 2 | 3, price: bigint, amount: bigint): DomainEvent => ({
  _tag: "OrderPlaced",
  orderId: id,
  marketId: 1n,
  owner,
  side,
  price,
  amount,
  builder: null
})
const matched = (maker: string, taker: string, amount: bigint, price: bigint, matchType: 0 | 1 | 2 = 0): DomainEvent => ({
  _tag: "OrderMatched",
  makerOrderId: maker,
  takerOrderId: taker,
  marketId: 1n,
  matchType,
  amount,
  price,
  makerBuilder: null,
  takerBuilder: null
})
const cancelled = (id: string): DomainEvent => ({ _tag: "OrderCancelled", orderId: id })

describe("exchange orders", () => {
  it("an order partially filled, then cancelled: filled stays, status CANCELLED, its level leaves the book", () => {
    const s = fold([placed(M(1), alice, 1, 600_000n, 10_000_000n), matched(M(1), ZERO_ORDER_ID, 4_000_000n, 600_000n)])
    expect(s.rows.orders.map.get(orderKey(M(1)))).toMatchObject({ filled: 4_000_000n, status: "PARTIALLY_FILLED", cancelledAt: null })
    expect(s.rows.bookLevels.map.get(levelKey(1n, 1, 600_000n))).toEqual({
      marketId: 1n,
      side: 1,
      price: 600_000n,
      amount: 6_000_000n,
      orders: 1n
    })
    fold([{ event: cancelled(M(1)), block: 200, timestamp: 1_700_000_500 }], s)
    expect(s.rows.orders.map.get(orderKey(M(1)))).toMatchObject({
      filled: 4_000_000n,
      status: "CANCELLED",
      cancelledAt: 1_700_000_500,
      updatedAt: 1_700_000_500
    })
    expect(rows(s.rows.bookLevels)).toEqual([])
    // The match row names the maker; the zero taker id is no order.
    expect(s.logs.matches).toHaveLength(1)
    expect(s.logs.matches[0]).toMatchObject({ maker: alice, makerSide: 1, taker: null, amount: 4_000_000n, price: 600_000n, matchType: 0 })
    expect(s.pendingFills.size).toBe(0)
  })

  it("matched before placed: the taker's fills logged before its OrderPlaced reduce what it places on the book", () => {
    const s = fold([
      placed(M(1), alice, 1, 550_000n, 3_000_000n), // resting ask: 3 YES at 0.55
      // One transaction: bob's bid matches alice's ask first, then is placed for 5 YES at 0.60.
      { event: matched(M(1), M(2), 3_000_000n, 550_000n), block: 101, tx: 7 },
      { event: placed(M(2), bob, 0, 600_000n, 5_000_000n), block: 101, tx: 7 }
    ])
    expect(s.rows.orders.map.get(orderKey(M(1)))).toMatchObject({ filled: 3_000_000n, status: "FILLED", filledAt: 1_700_000_101 })
    expect(s.rows.orders.map.get(orderKey(M(2)))).toMatchObject({
      owner: bob,
      amount: 5_000_000n,
      filled: 3_000_000n,
      status: "PARTIALLY_FILLED"
    })
    expect(rows(s.rows.bookLevels)).toEqual([{ marketId: 1n, side: 0, price: 600_000n, amount: 2_000_000n, orders: 1n }])
    expect(s.logs.matches[0]).toMatchObject({ maker: alice, taker: bob, takerOrderId: M(2) })
    expect(s.pendingFills.size).toBe(0)
  })

  it("a taker filled in full before it is placed never reaches the book", () => {
    const s = fold([
      placed(M(1), alice, 1, 550_000n, 8_000_000n),
      { event: matched(M(1), M(2), 2_000_000n, 550_000n), block: 101, tx: 7 },
      { event: placed(M(2), bob, 0, 600_000n, 2_000_000n), block: 101, tx: 7 }
    ])
    expect(s.rows.orders.map.get(orderKey(M(2)))).toMatchObject({ filled: 2_000_000n, status: "FILLED", filledAt: 1_700_000_101 })
    expect(rows(s.rows.bookLevels)).toEqual([{ marketId: 1n, side: 1, price: 550_000n, amount: 6_000_000n, orders: 1n }])
  })

  it("taker ids never placed (router market orders, the zero id) create no order and no book level", () => {
    const s = fold([
      placed(M(1), alice, 1, 550_000n, 8_000_000n),
      matched(M(1), ZERO_ORDER_ID, 1_000_000n, 550_000n),
      matched(M(1), M(9), 1_000_000n, 550_000n),
      {
        _tag: "TakerFilled",
        marketId: 1n,
        taker: A(0xf00d),
        recipient: A(0xf00d),
        takerSide: 0,
        totalFilled: 2_000_000n,
        totalCost: 1_100_000n,
        matchCount: 2n
      }
    ])
    expect(rows(s.rows.orders).map((o) => o.id)).toEqual([M(1)])
    expect(rows(s.rows.bookLevels)).toEqual([{ marketId: 1n, side: 1, price: 550_000n, amount: 6_000_000n, orders: 1n }])
    expect([...s.pendingFills.keys()]).toEqual([M(9)]) // waits in memory only; the sink never writes it
    expect(s.logs.takerFills).toHaveLength(1)
    expect(s.logs.takerFills[0]).toMatchObject({ totalFilled: 2_000_000n, totalCost: 1_100_000n, matchCount: 2n })
  })

  it("levels aggregate the open remainders of every live order at one price, and FeeCollected is logged", () => {
    const s = fold([
      placed(M(1), alice, 0, 400_000n, 5_000_000n),
      placed(M(2), bob, 0, 400_000n, 7_000_000n),
      placed(M(3), bob, 2, 400_000n, 1_000_000n),
      matched(M(2), ZERO_ORDER_ID, 7_000_000n, 400_000n),
      matched(M(1), M(3), 1_000_000n, 400_000n, 1),
      { _tag: "FeeCollected", marketId: 1n, amount: 123n }
    ])
    expect(s.rows.orders.map.get(orderKey(M(2)))).toMatchObject({ status: "FILLED" })
    expect(s.rows.orders.map.get(orderKey(M(3)))).toMatchObject({ status: "FILLED" })
    expect(rows(s.rows.bookLevels)).toEqual([{ marketId: 1n, side: 0, price: 400_000n, amount: 4_000_000n, orders: 1n }])
    expect(s.logs.matches[1]).toMatchObject({ maker: alice, taker: bob, matchType: 1 })
    expect(s.logs.fees).toEqual([expect.objectContaining({ marketId: 1n, amount: 123n })])
  })

  it("a cancel of an unknown or already cancelled order changes nothing", () => {
    const s = fold([placed(M(1), alice, 1, 550_000n, 8_000_000n), cancelled(M(1)), cancelled(M(1)), cancelled(M(5))])
    expect(rows(s.rows.orders)).toEqual([expect.objectContaining({ id: M(1), status: "CANCELLED", cancelledAt: 1_700_000_102 })])
    expect(rows(s.rows.bookLevels)).toEqual([])
  })
})
