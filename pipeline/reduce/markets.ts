/**
 * Pure reducers for markets, router trades, positions and protocol totals.
 *
 * Events in, state changes out: each function reads and writes a `Working` set (in-memory rows
 * keyed by table and id) and appends rows to `appended`. No clock, no I/O, no randomness: the
 * same events on the same rows give the same changes. The sink loads the rows a batch touches,
 * folds the batch, then writes every touched row once (a thousand trades on one market are one
 * market update).
 *
 * The spec's event-source rules, each kept in exactly one place here:
 * 1. `Trade` is the only source of volume and trade counts (market, protocol, user): `onTrade`.
 * 2. `Hook_MarketTraded` feeds price snapshots and last-trade time, never volume: `onHookTraded`.
 * 3. Split, merge, redeem and refund always update positions, whoever the user is: `onSettlement`.
 * 4. A `Trade` writes a position only when its recipient is not a protocol contract: `onTrade`.
 *
 * The later reducers (holders, orders, event groups, oracles, admin, AMM, candles) live beside
 * this module; `all.ts` dispatches every event, running this module's `reduceEvent` first.
 */
import type { DomainEvent, DomainEventOf } from "../../schema/domain-events.js"

/** Where an event sits on the chain; every derived row carries it. */
export interface Located {
  readonly block: number
  readonly timestamp: number
  readonly txHash: string
  readonly logIndex: number
  /** The emitting contract, lowercase (an outcome token's Transfer names its token only here). */
  readonly address: string
}

export type ResolutionType = "NONE" | "ORACLE" | "EMERGENCY" | "REFUND"

export interface MarketRow {
  readonly id: bigint
  readonly question: string
  readonly endTime: bigint
  readonly oracle: string
  readonly creator: string
  readonly yesToken: string
  readonly noToken: string
  readonly createdAt: number
  readonly createdBlock: number
  readonly createdTx: string
  totalCollateral: bigint
  volume: bigint
  tradeCount: bigint
  isResolved: boolean
  outcome: boolean | null
  resolutionType: ResolutionType
  resolvedAt: number | null
  refundMode: boolean
  /** Latest YES price snapshot, 1e6-scaled; null before any trade. */
  yesPrice: bigint | null
  lastTradeAt: number | null
}

export interface PositionRow {
  readonly user: string
  readonly marketId: bigint
  yesBalance: bigint
  noBalance: bigint
  /** Collateral paid for the tokens held (average-cost basis), per side. */
  yesCost: bigint
  noCost: bigint
  realizedPnl: bigint
}

export interface ProtocolRow {
  totalMarkets: bigint
  totalVolume: bigint
  totalTrades: bigint
  totalUsers: bigint
}

export interface UserRow {
  readonly address: string
  volume: bigint
  tradeCount: bigint
  realizedPnl: bigint
}

export interface TradeRow extends Located {
  readonly marketId: bigint
  readonly trader: string
  readonly recipient: string
  readonly tradeType: number
  readonly amountIn: bigint
  readonly amountOut: bigint
  readonly clobFilled: bigint
  readonly ammFilled: bigint
}

export interface PriceSnapshotRow extends Located {
  readonly marketId: bigint
  readonly yesPrice: bigint
  readonly source: "router" | "hook_amm"
  /** The market's collateral at that moment: the open interest of the price series. */
  readonly openInterest: bigint
}

/** Rows a batch has read or changed, by key; `undefined` means "known not to exist". */
export interface Working {
  readonly markets: Map<bigint, MarketRow>
  readonly positions: Map<string, PositionRow>
  readonly users: Map<string, UserRow>
  protocol: ProtocolRow
  readonly appended: { readonly trades: Array<TradeRow>; readonly priceSnapshots: Array<PriceSnapshotRow> }
}

export const positionKey = (user: string, marketId: bigint) => `${user}:${marketId}`

const PRICE_UNIT = 1_000_000n

/** Addresses whose trades are plumbing, not a user's position (rule 4). */
export interface ProtocolContracts {
  readonly has: (address: string) => boolean
}

export const emptyProtocol = (): ProtocolRow => ({ totalMarkets: 0n, totalVolume: 0n, totalTrades: 0n, totalUsers: 0n })

export const emptyWorking = (): Working => ({
  markets: new Map(),
  positions: new Map(),
  users: new Map(),
  protocol: emptyProtocol(),
  appended: { trades: [], priceSnapshots: [] }
})

const position = (w: Working, user: string, marketId: bigint): PositionRow => {
  const key = positionKey(user, marketId)
  let row = w.positions.get(key)
  if (row === undefined) {
    row = { user, marketId, yesBalance: 0n, noBalance: 0n, yesCost: 0n, noCost: 0n, realizedPnl: 0n }
    w.positions.set(key, row)
  }
  return row
}

const user = (w: Working, address: string): UserRow => {
  let row = w.users.get(address)
  if (row === undefined) {
    row = { address, volume: 0n, tradeCount: 0n, realizedPnl: 0n }
    w.users.set(address, row)
    w.protocol.totalUsers += 1n
  }
  return row
}

/** Cost of `amount` tokens out of `balance` held at total `cost` (average cost, rounded down). */
const costOf = (cost: bigint, balance: bigint, amount: bigint) => (balance === 0n ? 0n : (cost * amount) / balance)

const market = (w: Working, id: bigint, what: string): MarketRow => {
  const row = w.markets.get(id)
  if (row === undefined) throw new Error(`${what} for unknown market ${id}`)
  return row
}

export const onMarketCreated = (w: Working, e: DomainEventOf<"MarketCreated">, at: Located): void => {
  if (w.markets.has(e.marketId)) throw new Error(`market ${e.marketId} created twice`)
  w.markets.set(e.marketId, {
    id: e.marketId,
    question: e.question,
    endTime: e.endTime,
    oracle: e.oracle,
    creator: e.creator,
    yesToken: e.yesToken,
    noToken: e.noToken,
    createdAt: at.timestamp,
    createdBlock: at.block,
    createdTx: at.txHash,
    totalCollateral: 0n,
    volume: 0n,
    tradeCount: 0n,
    isResolved: false,
    outcome: null,
    resolutionType: "NONE",
    resolvedAt: null,
    refundMode: false,
    yesPrice: null,
    lastTradeAt: null
  })
  w.protocol.totalMarkets += 1n
}

/**
 * Rule 1's measure: the collateral side of a trade, amountIn for buys (USDC paid), amountOut for
 * sells (USDC received), so volume is always in USDC. Candles count volume with it too.
 */
export const tradeVolume = (e: DomainEventOf<"Trade">): bigint =>
  e.tradeType === 0 || e.tradeType === 2 ? e.amountIn : e.amountOut

/** Rules 1 and 4. */
export const onTrade = (w: Working, e: DomainEventOf<"Trade">, at: Located, protocol: ProtocolContracts): void => {
  const m = market(w, e.marketId, "Trade")
  const buy = e.tradeType === 0 || e.tradeType === 2
  const yes = e.tradeType === 0 || e.tradeType === 1
  const usdc = tradeVolume(e)
  m.volume += usdc
  m.tradeCount += 1n
  m.lastTradeAt = at.timestamp
  w.protocol.totalVolume += usdc
  w.protocol.totalTrades += 1n
  const trader = user(w, e.trader)
  trader.volume += usdc
  trader.tradeCount += 1n
  // Price paid or received per share, as the router's own snapshot of the market (source router).
  const shares = buy ? e.amountOut : e.amountIn
  if (shares > 0n) {
    const perShare = (usdc * PRICE_UNIT) / shares
    const yesPrice = yes ? perShare : PRICE_UNIT - perShare
    m.yesPrice = yesPrice < 0n ? 0n : yesPrice > PRICE_UNIT ? PRICE_UNIT : yesPrice
    w.appended.priceSnapshots.push({ ...at, marketId: e.marketId, yesPrice: m.yesPrice, source: "router", openInterest: m.totalCollateral })
  }
  w.appended.trades.push({
    ...at,
    marketId: e.marketId,
    trader: e.trader,
    recipient: e.recipient,
    tradeType: e.tradeType,
    amountIn: e.amountIn,
    amountOut: e.amountOut,
    clobFilled: e.clobFilled,
    ammFilled: e.ammFilled
  })
  if (protocol.has(e.recipient)) return
  const p = position(w, e.recipient, e.marketId)
  if (buy) {
    if (yes) {
      p.yesBalance += e.amountOut
      p.yesCost += e.amountIn
    } else {
      p.noBalance += e.amountOut
      p.noCost += e.amountIn
    }
    return
  }
  // A sell realizes proceeds minus the average cost of the shares sold.
  const held = yes ? p.yesBalance : p.noBalance
  const sold = e.amountIn > held ? held : e.amountIn
  const cost = costOf(yes ? p.yesCost : p.noCost, held, sold)
  if (yes) {
    p.yesBalance -= sold
    p.yesCost -= cost
  } else {
    p.noBalance -= sold
    p.noCost -= cost
  }
  p.realizedPnl += e.amountOut - cost
  user(w, e.recipient).realizedPnl += e.amountOut - cost
}

/** Rule 2: a price snapshot and the last-trade time; never volume or counts. */
export const onHookTraded = (w: Working, e: DomainEventOf<"Hook_MarketTraded">, at: Located): void => {
  const m = market(w, e.marketId, "Hook_MarketTraded")
  m.yesPrice = e.yesPrice
  m.lastTradeAt = at.timestamp
  w.appended.priceSnapshots.push({ ...at, marketId: e.marketId, yesPrice: e.yesPrice, source: "hook_amm", openInterest: m.totalCollateral })
}

/** Burns tokens of a position for `payout` collateral, realizing payout minus their average cost. */
const burnForCollateral = (w: Working, p: PositionRow, yesBurned: bigint, noBurned: bigint, payout: bigint): void => {
  const yesPart = costOf(p.yesCost, p.yesBalance, yesBurned)
  const noPart = costOf(p.noCost, p.noBalance, noBurned)
  p.yesCost -= yesPart
  p.noCost -= noPart
  p.yesBalance -= yesBurned
  p.noBalance -= noBurned
  p.realizedPnl += payout - yesPart - noPart
  user(w, p.user).realizedPnl += payout - yesPart - noPart
}

type Settlement =
  | DomainEventOf<"PositionSplit">
  | DomainEventOf<"PositionMerged">
  | DomainEventOf<"TokensRedeemed">
  | DomainEventOf<"MarketRefunded">

/** Rule 3: collateral and positions move for every user, protocol contracts included. */
export const onSettlement = (w: Working, e: Settlement): void => {
  const m = market(w, e.marketId, e._tag)
  const p = position(w, e.user, e.marketId)
  switch (e._tag) {
    case "PositionSplit": {
      // One collateral unit buys one YES and one NO; the cost is shared evenly between them.
      m.totalCollateral += e.amount
      p.yesBalance += e.amount
      p.noBalance += e.amount
      const half = e.amount / 2n
      p.yesCost += half
      p.noCost += e.amount - half
      return
    }
    case "PositionMerged":
      m.totalCollateral -= e.amount
      return burnForCollateral(w, p, e.amount, e.amount, e.amount)
    case "TokensRedeemed": {
      // Redemption burns the whole balance of both sides; collateral falls by the winning side only.
      m.totalCollateral -= e.winningBurned
      const pnl = e.payout - p.yesCost - p.noCost
      p.realizedPnl += pnl
      user(w, e.user).realizedPnl += pnl
      p.yesBalance = 0n
      p.noBalance = 0n
      p.yesCost = 0n
      p.noCost = 0n
      return
    }
    case "MarketRefunded":
      m.totalCollateral -= e.payout
      return burnForCollateral(w, p, e.yesBurned, e.noBurned, e.payout)
  }
}

export const onResolved = (
  w: Working,
  e: DomainEventOf<"MarketResolved"> | DomainEventOf<"MarketEmergencyResolved">,
  at: Located
): void => {
  const m = market(w, e.marketId, e._tag)
  // isResolved never flips back; a second resolution of a resolved market changes nothing.
  if (m.isResolved) return
  m.isResolved = true
  m.outcome = e.outcome
  m.resolutionType = e._tag === "MarketResolved" ? "ORACLE" : "EMERGENCY"
  m.resolvedAt = at.timestamp
}

export const onRefundMode = (w: Working, e: DomainEventOf<"RefundModeEnabled">, at: Located): void => {
  const m = market(w, e.marketId, e._tag)
  m.refundMode = true
  m.resolutionType = "REFUND"
  m.resolvedAt = at.timestamp
}

/** Folds one decoded event into the working set; events this slice does not derive from are ignored. */
export const reduceEvent = (w: Working, event: DomainEvent, at: Located, protocol: ProtocolContracts): void => {
  switch (event._tag) {
    case "MarketCreated":
      return onMarketCreated(w, event, at)
    case "Trade":
      return onTrade(w, event, at, protocol)
    case "Hook_MarketTraded":
      return onHookTraded(w, event, at)
    case "PositionSplit":
    case "PositionMerged":
    case "TokensRedeemed":
    case "MarketRefunded":
      return onSettlement(w, event)
    case "MarketResolved":
    case "MarketEmergencyResolved":
      return onResolved(w, event, at)
    case "RefundModeEnabled":
      return onRefundMode(w, event, at)
    default:
      return
  }
}
