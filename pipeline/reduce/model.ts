/**
 * The reducers' shared model: where an event sits on the chain, and the row of every table the
 * reducers derive (the admin, oracle and event-group rows are in `model-governance.ts`). Types
 * only, below every reducer: reducers, keys, the sink and the descriptors of `tables.ts` import
 * them from here, so no reducer imports another for a type.
 *
 * Rows are plain data (no classes, no functions) so `structuredClone` gives a batch's undo
 * "before"; mutable fields are the ones reducers change in place.
 */
import type { TIMEFRAMES } from "../../schema/enums.js"
import type { MoveSource } from "../../schema/move-sources.js"

export type { MoveSource }

// Markets, router trades, price snapshots, protocol totals (markets.ts)

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
  /**
   * Latest YES price, 1e6-scaled, within 0..1e6: the last snapshot (hook or router) while the
   * market trades; 1e6 or 0 by outcome once resolved; before any trade, the pool's initial
   * price once it is initialized, and 0.5 before that (a pool must open within 0.475..0.525).
   */
  yesPrice: bigint
  lastTradeAt: number | null
}

/** The protocol totals: the one row of protocol_stats, id 1 (`PROTOCOL_KEY` in state.ts). */
export interface ProtocolRow {
  readonly id: 1
  totalMarkets: bigint
  totalVolume: bigint
  totalTrades: bigint
  totalUsers: bigint
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

// Positions and users (positions.ts)

/**
 * One event's change to one position (the ledger's journal, positions.ts `recordMoves`): shares
 * in (+) or out (-) per side, and USDC received (+) or paid (-) as the ledger counts it. Summed
 * over a position's rows they give its balances, and `usdc` sums to realized P&L minus the cost
 * basis held, exactly.
 */
export interface PositionMoveRow extends Located {
  readonly user: string
  readonly marketId: bigint
  readonly source: MoveSource
  readonly yesShares: bigint
  readonly noShares: bigint
  readonly usdc: bigint
  /**
   * The position as it stood after the event (its balances, cost basis per side and realized
   * P&L): the position history (`/api/portfolio/:address/history`, the view `position_history`)
   * is the last of these per minute, so the journal is its one record.
   */
  readonly yesBalance: bigint
  readonly noBalance: bigint
  readonly yesCost: bigint
  readonly noCost: bigint
  readonly realizedPnl: bigint
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

export interface UserRow {
  readonly address: string
  volume: bigint
  tradeCount: bigint
  realizedPnl: bigint
  /** Traded at least once (router trader or recipient, CLOB maker or taker): counted in totalUsers. */
  traded: boolean
}

/**
 * The deployment's contracts (every component, the outcome tokens): plumbing, never a user
 * (rule 4). `isVenue` names the two whose every token movement with a user their own events
 * describe (the router: Trade, DustRefunded; the exchange: fills, escrow), so a Transfer between
 * a user and one of them moves no position; a Transfer between a user and any other contract
 * (the pool manager's liquidity, the market factory's seed tokens, ...) is a transfer.
 */
export interface ProtocolContracts {
  readonly has: (address: string) => boolean
  readonly isVenue: (address: string) => boolean
}

// Outcome tokens and their holders (holders.ts)

export type TokenSide = "YES" | "NO"

export interface OutcomeTokenRow {
  readonly address: string
  readonly marketId: bigint
  readonly side: TokenSide
  supply: bigint
  holders: bigint
}

export interface HolderRow {
  readonly token: string
  readonly holder: string
  readonly marketId: bigint
  readonly side: TokenSide
  balance: bigint
}

// The exchange: orders, book levels, matches, fills, fees (orders.ts)

export type OrderStatus = "OPEN" | "PARTIALLY_FILLED" | "FILLED" | "CANCELLED"

export interface OrderRow {
  readonly id: string
  readonly marketId: bigint
  readonly owner: string
  readonly side: number
  readonly price: bigint
  readonly amount: bigint
  filled: bigint
  status: OrderStatus
  readonly builder: string | null
  readonly placedAt: number
  readonly placedBlock: number
  readonly placedTx: string
  updatedAt: number
  filledAt: number | null
  cancelledAt: number | null
  /** The transaction of its OrderCancelled (a cancel notification names it). */
  cancelledTx: string | null
}

export interface BookLevelRow {
  readonly marketId: bigint
  readonly side: number
  readonly price: bigint
  amount: bigint
  orders: bigint
}

export interface MatchRow extends Located {
  readonly marketId: bigint
  readonly makerOrderId: string
  readonly takerOrderId: string
  /** Owner of the maker order; null only when that order was never seen placed. */
  readonly maker: string | null
  readonly makerSide: number | null
  /** Owner of the taker order, filled in when a matched-before-placed order is placed. */
  taker: string | null
  readonly matchType: number
  readonly amount: bigint
  readonly price: bigint
  readonly makerBuilder: string | null
  readonly takerBuilder: string | null
}

export interface TakerFillRow extends Located {
  readonly marketId: bigint
  readonly taker: string
  readonly recipient: string
  readonly takerSide: number
  readonly totalFilled: bigint
  readonly totalCost: bigint
  readonly matchCount: bigint
}

export interface FeeRow extends Located {
  readonly marketId: bigint
  readonly amount: bigint
}

/** Fills seen for an order id before its OrderPlaced, and the match rows that wait for its owner. */
export interface PendingFill {
  filled: bigint
  readonly matches: Array<number>
  lastAt: number
}

// AMM pools, liquidity positions and events (amm.ts)

export interface PoolRow {
  readonly poolId: string
  readonly marketId: bigint
  readonly yesToken: string
  readonly quoteToken: string
  readonly yesIsCurrency0: boolean
  readonly registeredAt: number
  readonly registeredBlock: number
  initialized: boolean
  sqrtPriceX96: bigint | null
  liquidity: bigint
  tick: number | null
  fee: number | null
  tickSpacing: number | null
  updatedAt: number
  updatedBlock: number
}

export interface LiquidityPositionRow {
  readonly poolId: string
  readonly owner: string
  readonly tickLower: number
  readonly tickUpper: number
  readonly salt: string
  readonly marketId: bigint
  liquidity: bigint
  updatedAt: number
}

export interface LiquidityEventRow extends Located {
  readonly poolId: string
  readonly marketId: bigint
  readonly owner: string
  readonly tickLower: number
  readonly tickUpper: number
  readonly salt: string
  /** Signed: positive adds liquidity, negative removes it. */
  readonly liquidityDelta: bigint
}

// Candles (candles.ts)

export type Timeframe = (typeof TIMEFRAMES)[number]

export interface CandleRow {
  readonly marketId: bigint
  readonly timeframe: Timeframe
  readonly bucket: number
  open: bigint | null
  high: bigint | null
  low: bigint | null
  close: bigint | null
  volume: bigint
  tradeCount: bigint
}

// Referrals (referrals.ts)

export interface ReferralRow extends Located {
  readonly marketId: bigint
  readonly referrer: string
  readonly trader: string
  /** USDC (6 decimals) the referred swap moved. */
  readonly usdcVolume: bigint
}

// Trader activity (trader-activity.ts)

export interface TraderActivityRow {
  readonly address: string
  /** The UTC day (unix seconds / 86400) these totals stand at the end of. */
  readonly day: number
  volume: bigint
  trades: bigint
  /** Some trade moved at least `firstTradeUsdc`. */
  firstTrade: boolean
  firstTradeAt: number | null
  lastTradeAt: number | null
  /** The first trade of `day` (null when the address did not trade that day). */
  dayFirstTradeAt: number | null
  lastTradeDay: number | null
  run: number
  longestRun: number
  streaks: number
  liquidityDays: number
  lastLiquidityDay: number | null
}

export interface TraderMarketRow {
  readonly address: string
  readonly marketId: bigint
  /** The address's last trade in the market as trader; null if it only ever received shares. */
  lastTradedAt: number | null
  /** Shares bought minus shares sold as recipient, per side (YES: trade types 0/1, NO: 2/3). */
  netYes: bigint
  netNo: bigint
}
