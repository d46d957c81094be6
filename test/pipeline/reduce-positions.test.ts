/**
 * The position and P&L rule table (docs/positions.md), one test per row, and a
 * property over generated event sequences: for every user, realized + unrealized P&L equals
 * USDC received + mark value of the shares held - USDC paid, and no protocol contract ever has a
 * position or a user row.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { DomainEvent } from "../../schema/domain-events.js"
import { marketRow } from "../../pipeline/reduce/markets.js"
import { positionKey } from "../../pipeline/reduce/positions.js"
import { protocolOf } from "../../pipeline/reduce/protocol-totals.js"
import type { PositionRow } from "../../pipeline/reduce/model.js"
import { ZERO_ORDER_ID } from "../../pipeline/reduce/orders.js"
import type { State } from "../../pipeline/reduce/state.js"
import { A, EXCHANGE, fold, H, POOL_MANAGER, ROUTER, type Step } from "./fold.js"

const USDC = 1_000_000n
const alice = A(1)
const bob = A(2)
const carol = A(3)
const YES = A(10)
const NO = A(11)
const ZERO = A(0)
const PROTOCOL = [ROUTER, EXCHANGE, POOL_MANAGER, YES, NO]

const created: DomainEvent = {
  _tag: "MarketCreated",
  marketId: 1n,
  creator: carol,
  oracle: A(9),
  yesToken: YES,
  noToken: NO,
  endTime: 2_000_000_000n,
  question: "Q?"
}
const trade = (who: string, tradeType: 0 | 1 | 2 | 3, amountIn: bigint, amountOut: bigint, recipient = who): DomainEvent => ({
  _tag: "Trade",
  marketId: 1n,
  trader: who,
  recipient,
  tradeType,
  amountIn,
  amountOut,
  clobFilled: 0n,
  ammFilled: amountOut,
  builder: null
})
const split = (user: string, amount: bigint): DomainEvent => ({ _tag: "PositionSplit", marketId: 1n, user, amount })
const placed = (id: number, owner: string, side: number, price: bigint, amount: bigint): DomainEvent => ({
  _tag: "OrderPlaced",
  orderId: H(id),
  marketId: 1n,
  owner,
  side: side as 0 | 1 | 2 | 3,
  price,
  amount,
  builder: null
})
const matched = (maker: number, taker: number | null, matchType: number, amount: bigint, price: bigint): DomainEvent => ({
  _tag: "OrderMatched",
  makerOrderId: H(maker),
  takerOrderId: taker === null ? ZERO_ORDER_ID : H(taker),
  marketId: 1n,
  matchType: matchType as 0 | 1 | 2,
  amount,
  price,
  makerBuilder: null,
  takerBuilder: null
})
const transfer = (token: string, from: string, to: string, value: bigint): Step => ({
  event: { _tag: "Transfer", from, to, value },
  address: token
})
/** Outcome tokens minted to everyone first, so holder balances never run short (mints move no position). */
const minted: ReadonlyArray<Step> = [alice, bob, carol, POOL_MANAGER, EXCHANGE, ROUTER].flatMap((who) => [
  transfer(YES, ZERO, who, 10n ** 15n),
  transfer(NO, ZERO, who, 10n ** 15n)
])

const run = (steps: ReadonlyArray<Step | DomainEvent>): State => fold([created, ...minted, ...steps])
const pos = (s: State, user: string): PositionRow | undefined => s.rows.positions.map.get(positionKey(user, 1n)) ?? undefined

describe("position and P&L rules, one per event", () => {
  it("router buy: the recipient's shares grow at amountIn", () => {
    const s = run([trade(alice, 0, 30n * USDC, 50n * USDC), trade(alice, 2, 10n * USDC, 20n * USDC, bob)])
    expect(pos(s, alice)).toMatchObject({ yesBalance: 50n * USDC, yesCost: 30n * USDC, realizedPnl: 0n })
    expect(pos(s, bob)).toMatchObject({ noBalance: 20n * USDC, noCost: 10n * USDC })
  })

  it("router sell: the trader's shares leave at their average cost, proceeds minus it realized", () => {
    const s = run([trade(alice, 0, 30n * USDC, 50n * USDC), trade(alice, 1, 20n * USDC, 16n * USDC)])
    expect(pos(s, alice)).toMatchObject({ yesBalance: 30n * USDC, yesCost: 18n * USDC, realizedPnl: 4n * USDC })
    expect(s.rows.users.map.get(alice)!.realizedPnl).toBe(4n * USDC)
  })

  it("maker BUY fill: shares in at the match price", () => {
    const s = run([placed(1, bob, 0, 400_000n, 10n * USDC), matched(1, null, 0, 6n * USDC, 400_000n)])
    expect(pos(s, bob)).toMatchObject({ yesBalance: 6n * USDC, yesCost: 2_400_000n })
  })

  it("maker SELL fill: the SELL_NO 30 @ 0.33 of the audit realizes its 9.9 USDC of proceeds", () => {
    const s = run([
      trade(bob, 2, 58_500_000n, 117n * USDC), // 117 NO at 0.50
      placed(1, bob, 3, 330_000n, 30n * USDC),
      matched(1, null, 0, 30n * USDC, 330_000n)
    ])
    // 30 of 117 NO leave at cost 15; proceeds 9.9
    expect(pos(s, bob)).toMatchObject({ noBalance: 87n * USDC, noCost: 43_500_000n, realizedPnl: 9_900_000n - 15n * USDC })
  })

  it("limit taker, COMPLEMENTARY: matched before placed, at the maker's price, on the taker's side", () => {
    const s = run([
      split(bob, 10n * USDC),
      placed(1, bob, 1, 600_000n, 10n * USDC),
      { event: matched(1, 2, 0, 10n * USDC, 600_000n), tx: 7, block: 200 },
      { event: placed(2, alice, 0, 700_000n, 10n * USDC), tx: 7, block: 200 }
    ])
    expect(pos(s, alice)).toMatchObject({ yesBalance: 10n * USDC, yesCost: 6n * USDC })
    // bob split at 0.5: YES cost 5, sold for 6
    expect(pos(s, bob)).toMatchObject({ yesBalance: 0n, yesCost: 0n, noBalance: 10n * USDC, realizedPnl: 1n * USDC })
  })

  it("MINT match: the maker buys its side at its price, the taker the other side at its own limit", () => {
    const s = run([
      placed(1, bob, 2, 450_000n, 10n * USDC),
      { event: matched(1, 2, 1, 10n * USDC, 450_000n), tx: 7, block: 200 },
      { event: placed(2, alice, 0, 600_000n, 10n * USDC), tx: 7, block: 200 }
    ])
    expect(pos(s, bob)).toMatchObject({ noBalance: 10n * USDC, noCost: 4_500_000n })
    expect(pos(s, alice)).toMatchObject({ yesBalance: 10n * USDC, yesCost: 6n * USDC })
  })

  it("MERGE match: both sellers realize, the maker at its price, the taker at its own limit", () => {
    const s = run([
      trade(bob, 2, 5n * USDC, 10n * USDC),
      trade(alice, 0, 5n * USDC, 10n * USDC),
      placed(1, bob, 3, 400_000n, 10n * USDC),
      { event: matched(1, 2, 2, 10n * USDC, 400_000n), tx: 7, block: 200 },
      { event: placed(2, alice, 1, 550_000n, 10n * USDC), tx: 7, block: 200 }
    ])
    expect(pos(s, bob)).toMatchObject({ noBalance: 0n, realizedPnl: -1n * USDC })
    expect(pos(s, alice)).toMatchObject({ yesBalance: 0n, realizedPnl: 500_000n })
  })

  it("market order on the exchange directly: a BUY's shares to the recipient, a SELL's out of the taker", () => {
    const filled = (takerSide: number, totalFilled: bigint, totalCost: bigint): DomainEvent => ({
      _tag: "TakerFilled",
      marketId: 1n,
      taker: alice,
      recipient: alice,
      takerSide: takerSide as 0 | 1 | 2 | 3,
      totalFilled,
      totalCost,
      matchCount: 1n
    })
    const s = run([filled(0, 10n * USDC, 4n * USDC), filled(1, 3n * USDC, 5n * USDC)])
    // bought 10 YES for 4, sold 5 of them for 3: cost 2 leaves, realized +1
    expect(pos(s, alice)).toMatchObject({ yesBalance: 5n * USDC, yesCost: 2n * USDC, realizedPnl: 1n * USDC })
  })

  it("the router's own market order is its Trade's CLOB leg: no position for the router, none twice for the user", () => {
    const s = run([
      placed(1, bob, 1, 500_000n, 10n * USDC),
      { event: matched(1, null, 0, 10n * USDC, 500_000n), tx: 7, block: 200 },
      {
        event: {
          _tag: "TakerFilled",
          marketId: 1n,
          taker: ROUTER,
          recipient: ROUTER,
          takerSide: 0,
          totalFilled: 10n * USDC,
          totalCost: 5n * USDC,
          matchCount: 1n
        },
        tx: 7,
        block: 200
      },
      {
        event: { ...(trade(alice, 0, 5n * USDC, 10n * USDC) as DomainEvent & { _tag: "Trade" }), clobFilled: 10n * USDC, ammFilled: 0n },
        tx: 7,
        block: 200
      }
    ])
    expect(pos(s, alice)).toMatchObject({ yesBalance: 10n * USDC, yesCost: 5n * USDC })
    expect(pos(s, ROUTER)).toBeUndefined()
  })

  it("split: both sides in, the USDC shared at the market's YES price (0.5 before any price)", () => {
    const s = run([
      split(alice, 10n * USDC),
      {
        _tag: "Hook_MarketTraded",
        marketId: 1n,
        trader: carol,
        isBuy: true,
        usdcVolume: 1n,
        yesVolume: 1n,
        yesPrice: 700_000n,
        noPrice: 300_000n
      },
      split(bob, 10n * USDC)
    ])
    expect(pos(s, alice)).toMatchObject({ yesBalance: 10n * USDC, noBalance: 10n * USDC, yesCost: 5n * USDC, noCost: 5n * USDC })
    expect(pos(s, bob)).toMatchObject({ yesCost: 7n * USDC, noCost: 3n * USDC })
  })

  it("merge: a pair out of each side for 1 USDC, proceeds minus both average costs realized", () => {
    const s = run([
      trade(alice, 0, 3n * USDC, 10n * USDC),
      trade(alice, 2, 6n * USDC, 10n * USDC),
      { _tag: "PositionMerged", marketId: 1n, user: alice, amount: 5n * USDC }
    ])
    expect(pos(s, alice)).toMatchObject({
      yesBalance: 5n * USDC,
      noBalance: 5n * USDC,
      yesCost: 1_500_000n,
      noCost: 3n * USDC,
      realizedPnl: 500_000n
    })
  })

  it("redeem: both sides burned, the payout (after fee) minus their cost realized", () => {
    const s = run([
      trade(alice, 0, 4n * USDC, 10n * USDC),
      trade(alice, 2, 3n * USDC, 5n * USDC),
      { _tag: "MarketResolved", marketId: 1n, outcome: false, resolver: A(9) },
      {
        _tag: "TokensRedeemed",
        marketId: 1n,
        user: alice,
        winningBurned: 5n * USDC,
        losingBurned: 10n * USDC,
        fee: 50_000n,
        payout: 4_950_000n
      }
    ])
    expect(pos(s, alice)).toMatchObject({ yesBalance: 0n, noBalance: 0n, yesCost: 0n, noCost: 0n, realizedPnl: 4_950_000n - 7n * USDC })
    expect(marketRow(s, 1n)!.yesPrice).toBe(0n)
  })

  it("refund: the burned shares out, the payout minus their cost realized", () => {
    const s = run([
      split(alice, 10n * USDC),
      { _tag: "RefundModeEnabled", marketId: 1n, enabler: carol },
      { _tag: "MarketRefunded", marketId: 1n, user: alice, yesBurned: 4n * USDC, noBurned: 4n * USDC, payout: 4n * USDC }
    ])
    expect(pos(s, alice)).toMatchObject({
      yesBalance: 6n * USDC,
      noBalance: 6n * USDC,
      yesCost: 3n * USDC,
      noCost: 3n * USDC,
      realizedPnl: 0n
    })
  })

  it("transfer between users: out of the sender pro rata (its cost realized as a loss), in at cost 0", () => {
    const s = run([trade(alice, 0, 6n * USDC, 10n * USDC), transfer(YES, alice, bob, 4n * USDC)])
    expect(pos(s, alice)).toMatchObject({ yesBalance: 6n * USDC, yesCost: 3_600_000n, realizedPnl: -2_400_000n })
    expect(pos(s, bob)).toMatchObject({ yesBalance: 4n * USDC, yesCost: 0n, realizedPnl: 0n })
  })

  it("liquidity and other contracts: shares to the pool manager leave like a transfer, shares back arrive at cost 0", () => {
    const s = run([split(alice, 10n * USDC), transfer(YES, alice, POOL_MANAGER, 10n * USDC), transfer(YES, POOL_MANAGER, alice, 4n * USDC)])
    expect(pos(s, alice)).toMatchObject({
      yesBalance: 4n * USDC,
      yesCost: 0n,
      noBalance: 10n * USDC,
      noCost: 5n * USDC,
      realizedPnl: -5n * USDC
    })
  })

  it("router dust refund of an outcome token: in at cost 0; escrow to the exchange and back is no movement", () => {
    const s = run([
      trade(alice, 0, 6n * USDC, 10n * USDC),
      { _tag: "DustRefunded", recipient: alice, token: YES, amount: 7n },
      { _tag: "DustRefunded", recipient: alice, token: A(0x5), amount: 9n },
      transfer(YES, alice, EXCHANGE, 5n * USDC),
      transfer(YES, EXCHANGE, alice, 5n * USDC),
      transfer(YES, alice, ROUTER, 1n * USDC)
    ])
    expect(pos(s, alice)).toMatchObject({ yesBalance: 10n * USDC + 7n, yesCost: 6n * USDC })
  })

  it("protocol contracts never get a position or user row; totalUsers counts who traded", () => {
    const s = run([
      trade(alice, 0, 6n * USDC, 10n * USDC, ROUTER),
      trade(alice, 0, 6n * USDC, 10n * USDC, POOL_MANAGER),
      split(EXCHANGE, 10n * USDC),
      split(carol, 10n * USDC),
      transfer(YES, carol, bob, 1n * USDC),
      placed(1, bob, 1, 500_000n, 1n * USDC),
      matched(1, null, 0, 1n * USDC, 500_000n)
    ])
    for (const contract of PROTOCOL) {
      expect(pos(s, contract)).toBeUndefined()
      expect(s.rows.users.map.has(contract)).toBe(false)
    }
    // alice (trader) and bob (maker); carol only split and transferred
    expect(protocolOf(s).totalUsers).toBe(2n)
    expect(s.rows.users.map.get(carol)?.traded).toBe(false)
  })
})

/** A user's USDC and shares as the events say, kept independently of the ledger. */
interface Book {
  paid: bigint
  received: bigint
  yes: bigint
  no: bigint
}

const USERS = [alice, bob, carol]

type Intent =
  | {
      readonly kind: "buy" | "sell"
      readonly user: number
      readonly yes: boolean
      readonly shares: bigint
      readonly price: bigint
      readonly to: number
    }
  | { readonly kind: "split" | "merge"; readonly user: number; readonly shares: bigint }
  | { readonly kind: "transfer" | "pool"; readonly user: number; readonly yes: boolean; readonly shares: bigint; readonly to: number }
  | { readonly kind: "maker"; readonly user: number; readonly side: number; readonly shares: bigint; readonly price: bigint }
  | {
      readonly kind: "cross"
      readonly user: number
      readonly to: number
      readonly matchType: number
      readonly yes: boolean
      readonly shares: bigint
      readonly price: bigint
      readonly limit: bigint
    }

const amount = fc.bigInt({ min: 1n, max: 50n * USDC })
const price = fc.bigInt({ min: 1n, max: 99n }).map((p) => p * 10_000n)
const who = fc.integer({ min: 0, max: 2 })
const intent: fc.Arbitrary<Intent> = fc.oneof(
  fc.record({
    kind: fc.constantFrom("buy" as const, "sell" as const),
    user: who,
    yes: fc.boolean(),
    shares: amount,
    price: fc.bigInt({ min: 1n, max: 1_400_000n }),
    to: fc.integer({ min: 0, max: 3 })
  }),
  fc.record({ kind: fc.constantFrom("split" as const, "merge" as const), user: who, shares: amount }),
  fc.record({ kind: fc.constantFrom("transfer" as const, "pool" as const), user: who, yes: fc.boolean(), shares: amount, to: who }),
  fc.record({ kind: fc.constant("maker" as const), user: who, side: fc.integer({ min: 0, max: 3 }), shares: amount, price }),
  fc.record({
    kind: fc.constant("cross" as const),
    user: who,
    to: who,
    matchType: fc.integer({ min: 0, max: 2 }),
    yes: fc.boolean(),
    shares: amount,
    price,
    limit: price
  })
)

/**
 * Turns intents into a feasible event sequence (never selling what is not held) and the books
 * the events imply: a buy is its recipient's (paid), a sell its trader's (received); fills at the
 * match price rounded down (a MINT or MERGE taker at its own limit); a split pays 1 per pair, a
 * merge receives it; transfers move shares only; the end resolves or refunds and everybody claims.
 */
const scenario = (intents: ReadonlyArray<Intent>, outcome: boolean | null) => {
  const books = new Map(USERS.map((u) => [u, { paid: 0n, received: 0n, yes: 0n, no: 0n } as Book]))
  const pool = { yes: 0n, no: 0n }
  const steps: Array<Step | DomainEvent> = []
  let order = 0
  let tx = 1_000
  const held = (b: Book, yes: boolean) => (yes ? b.yes : b.no)
  const move = (b: Book, yes: boolean, delta: bigint) => (yes ? (b.yes += delta) : (b.no += delta))
  for (const i of intents) {
    const user = USERS[i.user]!
    const b = books.get(user)!
    switch (i.kind) {
      case "buy": {
        const usdc = (i.shares * i.price) / USDC
        const to = i.to === 3 ? ROUTER : USERS[i.to]!
        steps.push(trade(user, i.yes ? 0 : 2, usdc, i.shares, to))
        if (to !== ROUTER) {
          books.get(to)!.paid += usdc
          move(books.get(to)!, i.yes, i.shares)
        }
        break
      }
      case "sell": {
        const shares = i.shares > held(b, i.yes) ? held(b, i.yes) : i.shares
        if (shares === 0n) break
        const usdc = (shares * i.price) / USDC
        steps.push(trade(user, i.yes ? 1 : 3, shares, usdc, i.to === 3 ? ROUTER : USERS[i.to]!))
        b.received += usdc
        move(b, i.yes, -shares)
        break
      }
      case "split":
        steps.push(split(user, i.shares))
        b.paid += i.shares
        b.yes += i.shares
        b.no += i.shares
        break
      case "merge": {
        const shares = [i.shares, b.yes, b.no].reduce((m, v) => (v < m ? v : m))
        if (shares === 0n) break
        steps.push({ _tag: "PositionMerged", marketId: 1n, user, amount: shares })
        b.received += shares
        b.yes -= shares
        b.no -= shares
        break
      }
      case "transfer": {
        const shares = i.shares > held(b, i.yes) ? held(b, i.yes) : i.shares
        const to = USERS[i.to]!
        if (shares === 0n || to === user) break
        steps.push(transfer(i.yes ? YES : NO, user, to, shares))
        move(b, i.yes, -shares)
        move(books.get(to)!, i.yes, shares)
        break
      }
      case "pool": {
        // half of what is held into the pool, or back out of it
        const inPool = i.yes ? pool.yes : pool.no
        if (inPool > 0n && i.shares % 2n === 0n) {
          const back = i.shares > inPool ? inPool : i.shares
          steps.push(transfer(i.yes ? YES : NO, POOL_MANAGER, user, back))
          if (i.yes) pool.yes -= back
          else pool.no -= back
          move(b, i.yes, back)
          break
        }
        const shares = held(b, i.yes) / 2n
        if (shares === 0n) break
        steps.push(transfer(i.yes ? YES : NO, user, POOL_MANAGER, shares))
        if (i.yes) pool.yes += shares
        else pool.no += shares
        move(b, i.yes, -shares)
        break
      }
      case "maker": {
        const buy = i.side === 0 || i.side === 2
        const yes = i.side < 2
        const shares = buy ? i.shares : i.shares > held(b, yes) ? held(b, yes) : i.shares
        if (shares === 0n) break
        const id = ++order
        const usdc = (shares * i.price) / USDC
        steps.push(placed(id, user, i.side, i.price, shares))
        steps.push({ event: matched(id, null, 0, shares, i.price), tx: ++tx })
        if (buy) b.paid += usdc
        else b.received += usdc
        move(b, yes, buy ? shares : -shares)
        break
      }
      case "cross": {
        // maker `user` rests an order, taker `to` crosses it with a new limit order
        const taker = USERS[i.to]!
        const t = books.get(taker)!
        const [makerSide, takerSide] =
          i.matchType === 0 ? (i.yes ? [1, 0] : [3, 2]) : i.matchType === 1 ? (i.yes ? [0, 2] : [2, 0]) : i.yes ? [1, 3] : [3, 1]
        const makerYes = makerSide < 2
        const takerYes = takerSide < 2
        let shares = i.shares
        if (makerSide === 1 || makerSide === 3) shares = shares > held(b, makerYes) ? held(b, makerYes) : shares
        if (takerSide === 1 || takerSide === 3) shares = shares > held(t, takerYes) ? held(t, takerYes) : shares
        if (shares === 0n || taker === user) break
        const maker = ++order
        const takerId = ++order
        steps.push(placed(maker, user, makerSide, i.price, shares))
        tx += 1
        const block = 10_000 + tx
        steps.push({ event: matched(maker, takerId, i.matchType, shares, i.price), tx, block })
        steps.push({ event: placed(takerId, taker, takerSide, i.limit, shares), tx, block })
        const makerUsdc = (shares * i.price) / USDC
        const takerUsdc = (shares * (i.matchType === 0 ? i.price : i.limit)) / USDC
        for (const [book, side, usdc] of [
          [b, makerSide, makerUsdc],
          [t, takerSide, takerUsdc]
        ] as const) {
          const buy = side === 0 || side === 2
          if (buy) book.paid += usdc
          else book.received += usdc
          move(book, side < 2, buy ? shares : -shares)
        }
        break
      }
    }
  }
  // The end: liquidity comes back, then the market resolves (or refunds) and everybody claims.
  for (const [yes, inPool] of [
    [true, pool.yes],
    [false, pool.no]
  ] as const) {
    if (inPool === 0n) continue
    steps.push(transfer(yes ? YES : NO, POOL_MANAGER, alice, inPool))
    move(books.get(alice)!, yes, inPool)
  }
  if (outcome === null) {
    steps.push({ _tag: "RefundModeEnabled", marketId: 1n, enabler: carol })
    for (const [user, b] of books) {
      const burned = b.yes < b.no ? b.yes : b.no
      if (burned === 0n) continue
      steps.push({ _tag: "MarketRefunded", marketId: 1n, user, yesBurned: burned, noBurned: burned, payout: burned })
      b.received += burned
      b.yes -= burned
      b.no -= burned
    }
  } else {
    steps.push({ _tag: "MarketResolved", marketId: 1n, outcome, resolver: A(9) })
    for (const [user, b] of books) {
      const [winning, losing] = outcome ? [b.yes, b.no] : [b.no, b.yes]
      if (winning + losing === 0n) continue
      const fee = winning / 100n
      steps.push({ _tag: "TokensRedeemed", marketId: 1n, user, winningBurned: winning, losingBurned: losing, fee, payout: winning - fee })
      b.received += winning - fee
      b.yes = 0n
      b.no = 0n
    }
  }
  return { steps, books }
}

const mark = (yes: bigint, no: bigint, p: bigint) => (yes * p) / USDC + (no * (USDC - p)) / USDC

describe("P&L property over generated event sequences", () => {
  it("realized + unrealized = received + mark value held - paid, per user, at every prefix; no protocol contract has a position or user row", () => {
    fc.assert(
      fc.property(
        fc.array(intent, { maxLength: 40 }),
        fc.option(fc.boolean(), { nil: null }),
        fc.bigInt({ min: 0n, max: USDC }),
        fc.nat(),
        (intents, outcome, p, cut) => {
          const { steps, books } = scenario(intents, outcome)
          // the whole sequence: books at the end; a prefix: the ledger's own identity still holds
          const s = run(steps)
          for (const [user, b] of books) {
            const row = pos(s, user) ?? { yesBalance: 0n, noBalance: 0n, yesCost: 0n, noCost: 0n, realizedPnl: 0n }
            expect([row.yesBalance, row.noBalance], user).toEqual([b.yes, b.no])
            const unrealized = mark(row.yesBalance, row.noBalance, p) - row.yesCost - row.noCost
            expect(row.realizedPnl + unrealized, user).toBe(b.received + mark(b.yes, b.no, p) - b.paid)
            expect(s.rows.users.map.get(user)?.realizedPnl ?? 0n).toBe(row.realizedPnl)
          }
          const prefix = run(steps.slice(0, cut % (steps.length + 1)))
          for (const state of [s, prefix]) {
            for (const contract of PROTOCOL) {
              expect(pos(state, contract)).toBeUndefined()
              expect(state.rows.users.map.has(contract)).toBe(false)
            }
            for (const row of state.rows.positions.map.values()) {
              if (row === null) continue
              expect(row.yesBalance >= 0n && row.noBalance >= 0n && row.yesCost >= 0n && row.noCost >= 0n).toBe(true)
            }
          }
        }
      ),
      { numRuns: 300 }
    )
  })
})

describe("position history", () => {
  const at = (event: DomainEvent, timestamp: number): Step => ({ event, timestamp })
  const T = 1_700_000_040 // the start of a minute
  /** The history as the view position_history reads the journal: per position and minute, its last row's state. */
  const historyOf = (s: State) => {
    type Point = {
      user: string
      marketId: bigint
      minute: number
      yesBalance: bigint
      noBalance: bigint
      yesCost: bigint
      noCost: bigint
      realizedPnl: bigint
    }
    const last = new Map<string, Point>()
    for (const m of s.logs.positionMoves) {
      const minute = m.timestamp - (m.timestamp % 60)
      const { user, marketId, yesBalance, noBalance, yesCost, noCost, realizedPnl } = m
      last.set(`${user}|${marketId}|${minute}`, { user, marketId, minute, yesBalance, noBalance, yesCost, noCost, realizedPnl })
    }
    return [...last.values()]
  }

  it("journals each position as it stands after every event that moved it: its last row per minute is the history", () => {
    const s = run([
      at(trade(alice, 0, 30n * USDC, 50n * USDC), T),
      at(trade(alice, 1, 20n * USDC, 16n * USDC), T + 59),
      at(split(alice, 10n * USDC), T + 60),
      at(trade(bob, 0, 1n * USDC, 2n * USDC, carol), T + 61)
    ])
    const history = historyOf(s)
    const alices = history.filter((r) => r.user === alice).sort((a, b) => a.minute - b.minute)
    expect(alices).toHaveLength(2)
    // The first minute's row is the position after both trades of that minute.
    expect(alices[0]).toMatchObject({ minute: T, yesBalance: 30n * USDC, yesCost: 18n * USDC, noBalance: 0n, realizedPnl: 4n * USDC })
    // The last row is the position as it stands.
    expect(alices[1]).toMatchObject({ minute: T + 60, ...pos(s, alice) })
    expect(history.filter((r) => r.user === carol)).toEqual([
      expect.objectContaining({ minute: T + 60, yesBalance: 2n * USDC, yesCost: 1n * USDC })
    ])
    // bob paid but received nothing: his position moved by nothing, so no row.
    expect(history.filter((r) => r.user === bob)).toEqual([])
    // Every row's state is the one before it plus its change.
    const alicesMoves = s.logs.positionMoves.filter((m) => m.user === alice)
    alicesMoves.reduce(
      (before, m) => {
        expect(m.yesBalance - before.yesBalance).toBe(m.yesShares)
        expect(m.noBalance - before.noBalance).toBe(m.noShares)
        expect(m.realizedPnl - before.realizedPnl - (m.yesCost + m.noCost - before.cost)).toBe(m.usdc)
        return { yesBalance: m.yesBalance, noBalance: m.noBalance, realizedPnl: m.realizedPnl, cost: m.yesCost + m.noCost }
      },
      { yesBalance: 0n, noBalance: 0n, realizedPnl: 0n, cost: 0n }
    )
  })

  it("gives protocol contracts no history", () => {
    const s = run([at(trade(alice, 0, 30n * USDC, 50n * USDC, ROUTER), T), transfer(YES, alice, POOL_MANAGER, 1n)])
    expect(historyOf(s).filter((r) => PROTOCOL.includes(r.user))).toEqual([])
  })
})
