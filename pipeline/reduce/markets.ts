/**
 * Pure reducers for markets, router trades, positions and protocol totals.
 *
 * Events in, state changes out: each function reads and writes the rows of a batch's state
 * (`rows.markets`, `rows.positions`, `rows.users`, `rows.protocol`) and appends rows to
 * `logs.trades` and `logs.priceSnapshots`. No clock, no I/O, no randomness: the
 * same events on the same rows give the same changes. The sink loads the rows a batch touches,
 * folds the batch, then writes every touched row once (a thousand trades on one market are one
 * market update).
 *
 * The spec's event-source rules, each kept in exactly one place here:
 * 1. `Trade` is the only source of volume and trade counts (market, protocol, user): `onTrade`.
 * 2. `Hook_MarketTraded` feeds price snapshots and last-trade time, never volume: `onHookTraded`.
 * 3. Split, merge, redeem and refund always move collateral, whoever the user is: `onSettlement`.
 * 4. No protocol contract ever has a position or user row (positions.ts ignores them), so a
 *    `Trade` writes a position only when its recipient is not a protocol contract.
 *
 * Positions and P&L follow every way shares move (positions.ts; the CLOB's fills in orders.ts,
 * transfers in holders.ts).
 *
 * The later reducers (holders, orders, event groups, oracles, admin, AMM, candles) live beside
 * this module; `all.ts` dispatches every event, running this module's `reduceEvent` first.
 */
import type { DomainEvent, DomainEventOf } from "../../schema/domain-events.js"
import { acquire, dispose, markTraded, splitCost, userRow, type Ledger } from "./positions.js"
import type { Located, MarketRow, PriceSnapshotRow, ProtocolContracts, TradeRow } from "./model.js"
import { protocolOf } from "./protocol-totals.js"
import { getRow, putRow, rowKey, type Rows } from "./rows.js"

const PRICE_UNIT = 1_000_000n

/** The part of a batch's state (`State`) these reducers read and write. */
export interface MarketsState extends Ledger {
  readonly rows: Ledger["rows"] & { readonly markets: Rows<MarketRow> }
  readonly logs: { readonly trades: Array<TradeRow>; readonly priceSnapshots: Array<PriceSnapshotRow> }
}

export const marketKey = (id: bigint) => rowKey(id)

/** The market row of `id`, when it exists. */
export const marketRow = (w: { readonly rows: { readonly markets: Rows<MarketRow> } }, id: bigint): MarketRow | undefined =>
  getRow(w.rows.markets, marketKey(id), "market")

const market = (w: MarketsState, id: bigint, what: string): MarketRow => {
  const row = marketRow(w, id)
  if (row === undefined) throw new Error(`${what} for unknown market ${id}`)
  return row
}

export const onMarketCreated = (w: MarketsState, e: DomainEventOf<"MarketCreated">, at: Located): void => {
  if (marketRow(w, e.marketId) !== undefined) throw new Error(`market ${e.marketId} created twice`)
  putRow(
    w.rows.markets,
    marketKey(e.marketId),
    {
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
      yesPrice: PRICE_UNIT / 2n,
      lastTradeAt: null
    },
    "market"
  )
  protocolOf(w).totalMarkets += 1n
}

/**
 * Rule 1's measure: the collateral side of a trade, amountIn for buys (USDC paid), amountOut for
 * sells (USDC received), so volume is always in USDC. Candles count volume with it too.
 */
export const tradeVolume = (e: DomainEventOf<"Trade">): bigint => (e.tradeType === 0 || e.tradeType === 2 ? e.amountIn : e.amountOut)

/**
 * The implied YES price of a trade, 1e6-scaled: USDC per share for YES, one minus it for NO.
 * Undefined when no shares moved or the ratio is no probability (a trade that paid more than 1
 * USDC per share): such a trade keeps its true price in the trade list but moves no price series.
 */
export const impliedYesPrice = (e: DomainEventOf<"Trade">): bigint | undefined => {
  const buy = e.tradeType === 0 || e.tradeType === 2
  const shares = buy ? e.amountOut : e.amountIn
  if (shares === 0n) return undefined
  const perShare = (tradeVolume(e) * PRICE_UNIT) / shares
  if (perShare > PRICE_UNIT) return undefined
  return e.tradeType === 0 || e.tradeType === 1 ? perShare : PRICE_UNIT - perShare
}

/** Rules 1 and 4; a buy's shares go to the recipient at amountIn, a sell's leave the trader for amountOut. */
export const onTrade = (w: MarketsState, e: DomainEventOf<"Trade">, at: Located, protocol: ProtocolContracts): void => {
  const m = market(w, e.marketId, "Trade")
  const buy = e.tradeType === 0 || e.tradeType === 2
  const yes = e.tradeType === 0 || e.tradeType === 1
  const usdc = tradeVolume(e)
  m.volume += usdc
  m.tradeCount += 1n
  m.lastTradeAt = at.timestamp
  const totals = protocolOf(w)
  totals.totalVolume += usdc
  totals.totalTrades += 1n
  markTraded(w, e.trader, protocol)
  markTraded(w, e.recipient, protocol)
  if (!protocol.has(e.trader)) {
    const trader = userRow(w, e.trader)
    trader.volume += usdc
    trader.tradeCount += 1n
  }
  // The router's own snapshot of the market (source router).
  const yesPrice = impliedYesPrice(e)
  if (yesPrice !== undefined) {
    m.yesPrice = yesPrice
    w.logs.priceSnapshots.push({ ...at, marketId: e.marketId, yesPrice, source: "router", openInterest: m.totalCollateral })
  }
  w.logs.trades.push({
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
  if (buy) acquire(w, protocol, e.recipient, e.marketId, yes, e.amountOut, e.amountIn)
  else dispose(w, protocol, e.trader, e.marketId, yes, e.amountIn, e.amountOut)
}

/** Rule 2: a price snapshot and the last-trade time; never volume or counts. */
export const onHookTraded = (w: MarketsState, e: DomainEventOf<"Hook_MarketTraded">, at: Located): void => {
  const m = market(w, e.marketId, "Hook_MarketTraded")
  m.yesPrice = e.yesPrice
  m.lastTradeAt = at.timestamp
  w.logs.priceSnapshots.push({ ...at, marketId: e.marketId, yesPrice: e.yesPrice, source: "hook_amm", openInterest: m.totalCollateral })
}

type Settlement =
  DomainEventOf<"PositionSplit"> | DomainEventOf<"PositionMerged"> | DomainEventOf<"TokensRedeemed"> | DomainEventOf<"MarketRefunded">

/** Rule 3: collateral moves for every user; positions for users that are not protocol contracts. */
export const onSettlement = (w: MarketsState, e: Settlement, protocol: ProtocolContracts): void => {
  const m = market(w, e.marketId, e._tag)
  switch (e._tag) {
    case "PositionSplit": {
      m.totalCollateral += e.amount
      const cost = splitCost(e.amount, m.yesPrice)
      acquire(w, protocol, e.user, e.marketId, true, e.amount, cost.yes)
      acquire(w, protocol, e.user, e.marketId, false, e.amount, cost.no)
      return
    }
    case "PositionMerged":
      m.totalCollateral -= e.amount
      dispose(w, protocol, e.user, e.marketId, true, e.amount, 0n)
      dispose(w, protocol, e.user, e.marketId, false, e.amount, e.amount)
      return
    case "TokensRedeemed": {
      // Redemption burns both sides; collateral falls by the winning side only.
      m.totalCollateral -= e.winningBurned
      const yesWon = m.outcome !== false
      dispose(w, protocol, e.user, e.marketId, true, yesWon ? e.winningBurned : e.losingBurned, yesWon ? e.payout : 0n)
      dispose(w, protocol, e.user, e.marketId, false, yesWon ? e.losingBurned : e.winningBurned, yesWon ? 0n : e.payout)
      return
    }
    case "MarketRefunded":
      m.totalCollateral -= e.payout
      dispose(w, protocol, e.user, e.marketId, true, e.yesBurned, 0n)
      dispose(w, protocol, e.user, e.marketId, false, e.noBurned, e.payout)
      return
  }
}

export const onResolved = (
  w: MarketsState,
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
  // A resolved market's YES is worth its payout: 1 or 0 (a refunded market keeps its last price).
  m.yesPrice = e.outcome ? PRICE_UNIT : 0n
}

export const onRefundMode = (w: MarketsState, e: DomainEventOf<"RefundModeEnabled">, at: Located): void => {
  const m = market(w, e.marketId, e._tag)
  m.refundMode = true
  m.resolutionType = "REFUND"
  m.resolvedAt = at.timestamp
}

/** Folds one decoded event into the working set; events this slice does not derive from are ignored. */
export const reduceEvent = (w: MarketsState, event: DomainEvent, at: Located, protocol: ProtocolContracts): void => {
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
      return onSettlement(w, event, protocol)
    case "MarketResolved":
    case "MarketEmergencyResolved":
      return onResolved(w, event, at)
    case "RefundModeEnabled":
      return onRefundMode(w, event, at)
    default:
      return
  }
}
