/**
 * The position ledger: shares and their cost basis per (user, market), and realized P&L per
 * position and per user. Every way shares move calls one of four moves here (the rule table is
 * in docs/positions.md):
 *
 * - `acquire`: shares in at a cost (router buy, CLOB buy fill, split, transfer in at cost 0);
 * - `dispose`: shares out for proceeds, realizing proceeds minus their average cost (router sell,
 *   CLOB sell fill, merge, redeem, refund, transfer out for proceeds 0).
 *
 * Invariants:
 * - protocol contracts (the deployment's components, outcome tokens) never get a position row
 *   or a user row: every move on one is ignored, so their plumbing never looks like a user;
 * - per position, USDC paid for shares = cost basis held + cost basis removed, exactly (the
 *   removed cost is rounded down and the rest stays in the basis), so for every user and market
 *   realized + (mark value - cost basis) = USDC received + mark value - USDC paid;
 * - a position's balances are the shares its owner holds or has locked in live SELL orders:
 *   escrow is not a movement (the exchange holds them for the owner until a fill or a cancel);
 * - every position a move changes is added to `moved` with what it was before the event (when
 *   the ledger has it), and the dispatcher journals the event's change to each position in
 *   `position_move` (`recordMoves`; one row per event and user, with its source and the
 *   position as it stood after the event): a user's journal is every share move the P&L counts,
 *   so per position its shares sum to the balances and its USDC to realized P&L minus the cost
 *   basis held (what a trade history shows and a user can reconcile), and its last row in a
 *   minute is the position at the end of that minute (the view `position_history`).
 */
import { getRow, putRow, rowKey, type Rows } from "./rows.js"
import type { Located, MoveSource, PositionMoveRow, PositionRow, ProtocolContracts, ProtocolRow, UserRow } from "./model.js"
import { protocolOf } from "./protocol-totals.js"

/** A position as it stood before the event being folded first moved it. */
export interface PositionBefore {
  readonly yesBalance: bigint
  readonly noBalance: bigint
  readonly cost: bigint
  readonly realizedPnl: bigint
}

/** The part of a batch's working set (`State`) the ledger changes. */
export interface Ledger {
  readonly rows: {
    readonly positions: Rows<PositionRow>
    readonly users: Rows<UserRow>
    readonly protocol: Rows<ProtocolRow>
  }
  /** Positions moved by the event being folded, as they were before it (see `recordMoves`). */
  readonly moved: Map<PositionRow, PositionBefore>
}

/** Notes `p` as moved by the current event, keeping what it was before the event's first move of it. */
const touch = (w: Ledger, p: PositionRow): void => {
  if (w.moved.has(p)) return
  w.moved.set(p, { yesBalance: p.yesBalance, noBalance: p.noBalance, cost: p.yesCost + p.noCost, realizedPnl: p.realizedPnl })
}

/**
 * Journals every position the event moved (`journal`, with the source `sourceOf` names for its
 * user): its change and what it stood at after the event, then forgets them. The USDC of a
 * change is what left the cost basis or came into realized P&L: an acquire adds its cost to the
 * basis (USDC paid), a dispose removes cost c and realizes proceeds - c (USDC received). A
 * position the event left as it was (no share, no USDC, no P&L moved) gets no row.
 */
export const recordMoves = (
  moved: Map<PositionRow, PositionBefore>,
  at: Located,
  journal: Array<PositionMoveRow>,
  sourceOf: (user: string) => MoveSource
): void => {
  for (const [p, before] of moved) {
    const yesShares = p.yesBalance - before.yesBalance
    const noShares = p.noBalance - before.noBalance
    const usdc = p.realizedPnl - before.realizedPnl - (p.yesCost + p.noCost - before.cost)
    if (yesShares !== 0n || noShares !== 0n || usdc !== 0n || p.realizedPnl !== before.realizedPnl) {
      journal.push({
        block: at.block,
        logIndex: at.logIndex,
        txHash: at.txHash,
        timestamp: at.timestamp,
        address: at.address,
        user: p.user,
        marketId: p.marketId,
        source: sourceOf(p.user),
        yesShares,
        noShares,
        usdc,
        yesBalance: p.yesBalance,
        noBalance: p.noBalance,
        yesCost: p.yesCost,
        noCost: p.noCost,
        realizedPnl: p.realizedPnl
      })
    }
  }
  moved.clear()
}

export const positionKey = (user: string, marketId: bigint) => rowKey(user, marketId)

export const userKey = (address: string) => rowKey(address)

/** The user's position row, created empty on first use. */
export const position = (w: Ledger, user: string, marketId: bigint): PositionRow => {
  const key = positionKey(user, marketId)
  let row = getRow(w.rows.positions, key, "position")
  if (row === undefined) {
    row = { user, marketId, yesBalance: 0n, noBalance: 0n, yesCost: 0n, noCost: 0n, realizedPnl: 0n }
    putRow(w.rows.positions, key, row, "position")
  }
  return row
}

/** The user's stats row, created on first use (not yet counted as a user: see `markTraded`). */
export const userRow = (w: Ledger, address: string): UserRow => {
  const key = userKey(address)
  let row = getRow(w.rows.users, key, "user_stats")
  if (row === undefined) {
    row = { address, volume: 0n, tradeCount: 0n, realizedPnl: 0n, traded: false }
    putRow(w.rows.users, key, row, "user_stats")
  }
  return row
}

/**
 * `totalUsers` counts distinct non-protocol addresses that traded: router trader or recipient,
 * CLOB maker or taker. Called on each of them; counts an address once.
 */
export const markTraded = (w: Ledger, address: string, protocol: ProtocolContracts): void => {
  if (protocol.has(address)) return
  const u = userRow(w, address)
  if (u.traded) return
  u.traded = true
  protocolOf(w).totalUsers += 1n
}

/** Cost of `amount` shares out of `balance` held at total `cost` (average cost, rounded down). */
export const costOf = (cost: bigint, balance: bigint, amount: bigint) => (balance === 0n ? 0n : (cost * amount) / balance)

const realize = (w: Ledger, p: PositionRow, pnl: bigint): void => {
  if (pnl === 0n) return
  p.realizedPnl += pnl
  userRow(w, p.user).realizedPnl += pnl
}

/** Shares in at `cost` USDC. */
export const acquire = (
  w: Ledger,
  protocol: ProtocolContracts,
  user: string,
  marketId: bigint,
  yes: boolean,
  shares: bigint,
  cost: bigint
): void => {
  if (protocol.has(user) || (shares === 0n && cost === 0n)) return
  const p = position(w, user, marketId)
  touch(w, p)
  if (yes) {
    p.yesBalance += shares
    p.yesCost += cost
  } else {
    p.noBalance += shares
    p.noCost += cost
  }
}

/**
 * Shares out for `proceeds` USDC: the average cost of the shares leaves the basis and proceeds
 * minus it is realized. Never more than the position holds leaves it (the rest of the proceeds is
 * realized at zero cost).
 */
export const dispose = (
  w: Ledger,
  protocol: ProtocolContracts,
  user: string,
  marketId: bigint,
  yes: boolean,
  shares: bigint,
  proceeds: bigint
): void => {
  if (protocol.has(user) || (shares === 0n && proceeds === 0n)) return
  const p = position(w, user, marketId)
  touch(w, p)
  const held = yes ? p.yesBalance : p.noBalance
  const out = shares > held ? held : shares
  const cost = costOf(yes ? p.yesCost : p.noCost, held, out)
  if (yes) {
    p.yesBalance -= out
    p.yesCost -= cost
  } else {
    p.noBalance -= out
    p.noCost -= cost
  }
  realize(w, p, proceeds - cost)
}

const PRICE_UNIT = 1_000_000n

/** USDC for `shares` at a 1e6-scaled price, rounded down (as the exchange pays makers). */
export const atPrice = (shares: bigint, price: bigint) => (shares * price) / PRICE_UNIT

/**
 * How a split's USDC is shared between its YES and NO: at the market's YES price (0.5 until it
 * has one), so a fresh split is worth what it cost on each side; half and half should a hook
 * event ever report a price beyond 1, so neither side's cost goes negative.
 */
export const splitCost = (amount: bigint, yesPrice: bigint): { readonly yes: bigint; readonly no: bigint } => {
  const price = yesPrice >= 0n && yesPrice <= PRICE_UNIT ? yesPrice : PRICE_UNIT / 2n
  const yes = atPrice(amount, price)
  return { yes, no: amount - yes }
}
