/**
 * The whole working set of a batch: the keyed rows of every mutable table and the appended rows
 * of every append-only table, one model for all of them (`Rows`, keyed by `rowKey`). Plain data
 * (Maps, arrays, objects) so `structuredClone` gives the undo "before".
 */
import type {
  BookLevelRow,
  CandleRow,
  FeeRow,
  HolderRow,
  LiquidityEventRow,
  LiquidityPositionRow,
  MarketRow,
  MatchRow,
  OrderRow,
  OutcomeTokenRow,
  PendingFill,
  PoolRow,
  PositionMoveRow,
  PositionRow,
  PriceSnapshotRow,
  ProtocolRow,
  ReferralRow,
  TakerFillRow,
  TradeRow,
  TraderActivityRow,
  TraderMarketRow,
  UserRow
} from "./model.js"
import type {
  ApprovedOracleRow,
  DiamondCutRow,
  EventGroupRow,
  FeeChangeRow,
  FeedMarketRow,
  HookUpgradeRow,
  ManualOracleRow,
  ManualReportRow,
  OracleActionRow,
  OracleApprovalRow,
  PauseChangeRow,
  PauseStateRow,
  RoleChangeRow
} from "./model-governance.js"
import { emptyProtocol, PROTOCOL_KEY } from "./protocol-totals.js"
import { emptyRows, type Rows } from "./rows.js"
import type { PositionBefore } from "./positions.js"

/** Mutable tables, each keyed as its module's `...Key` function says. */
export interface KeyedRows {
  readonly markets: Rows<MarketRow>
  /** Keyed `positionKey(user, marketId)`. */
  readonly positions: Rows<PositionRow>
  readonly users: Rows<UserRow>
  /** One row, `PROTOCOL_KEY` (protocol-totals.ts). */
  readonly protocol: Rows<ProtocolRow>
  readonly outcomeTokens: Rows<OutcomeTokenRow>
  readonly holders: Rows<HolderRow>
  readonly orders: Rows<OrderRow>
  readonly bookLevels: Rows<BookLevelRow>
  readonly eventGroups: Rows<EventGroupRow>
  readonly approvedOracles: Rows<ApprovedOracleRow>
  readonly manualOracles: Rows<ManualOracleRow>
  readonly reports: Rows<ManualReportRow>
  readonly feedMarkets: Rows<FeedMarketRow>
  readonly pauseStates: Rows<PauseStateRow>
  readonly pools: Rows<PoolRow>
  readonly lpPositions: Rows<LiquidityPositionRow>
  readonly candles: Rows<CandleRow>
  readonly traderTotals: Rows<TraderActivityRow>
  readonly traderDays: Rows<TraderActivityRow>
  readonly traderMarkets: Rows<TraderMarketRow>
}

/** Append-only tables: rows of this batch, in chain order. */
export interface AppendedLogs {
  readonly trades: Array<TradeRow>
  readonly priceSnapshots: Array<PriceSnapshotRow>
  readonly matches: Array<MatchRow>
  readonly takerFills: Array<TakerFillRow>
  readonly fees: Array<FeeRow>
  readonly oracleApprovals: Array<OracleApprovalRow>
  readonly oracleActions: Array<OracleActionRow>
  readonly roleChanges: Array<RoleChangeRow>
  readonly pauseChanges: Array<PauseChangeRow>
  readonly diamondCuts: Array<DiamondCutRow>
  readonly feeChanges: Array<FeeChangeRow>
  readonly hookUpgrades: Array<HookUpgradeRow>
  readonly liquidityEvents: Array<LiquidityEventRow>
  readonly referrals: Array<ReferralRow>
  readonly positionMoves: Array<PositionMoveRow>
}

export interface State {
  readonly rows: KeyedRows
  readonly logs: AppendedLogs
  /** Fills of order ids not placed yet (see orders.ts); never written. */
  readonly pendingFills: Map<string, PendingFill>
  /** Positions the event being folded moved, as they stood before it (positions.ts); empty between events, never written. */
  readonly moved: Map<PositionRow, PositionBefore>
}

export const KEYED_NAMES = [
  "markets",
  "positions",
  "users",
  "protocol",
  "outcomeTokens",
  "holders",
  "orders",
  "bookLevels",
  "eventGroups",
  "approvedOracles",
  "manualOracles",
  "reports",
  "feedMarkets",
  "pauseStates",
  "pools",
  "lpPositions",
  "candles",
  "traderTotals",
  "traderDays",
  "traderMarkets"
] as const satisfies ReadonlyArray<keyof KeyedRows>

export const LOG_NAMES = [
  "trades",
  "priceSnapshots",
  "matches",
  "takerFills",
  "fees",
  "oracleApprovals",
  "oracleActions",
  "roleChanges",
  "pauseChanges",
  "diamondCuts",
  "feeChanges",
  "hookUpgrades",
  "liquidityEvents",
  "referrals",
  "positionMoves"
] as const satisfies ReadonlyArray<keyof AppendedLogs>

/** Compile-time: the name lists above cover every keyed table and every log. */
type Uncovered<T, L extends ReadonlyArray<keyof T>> = Exclude<keyof T, L[number]>
export const NAMES_COVER_STATE: [Uncovered<KeyedRows, typeof KEYED_NAMES>, Uncovered<AppendedLogs, typeof LOG_NAMES>] extends [never, never]
  ? true
  : never = true

export const emptyKeyedRows = (strict: boolean): KeyedRows =>
  Object.fromEntries(KEYED_NAMES.map((name) => [name, emptyRows(strict)])) as unknown as KeyedRows

export const emptyLogs = (): AppendedLogs => Object.fromEntries(LOG_NAMES.map((name) => [name, []])) as unknown as AppendedLogs

/** A state built from nothing (not strict): for reducer tests and whole-chain folds in memory. */
export const emptyState = (): State => {
  const rows = emptyKeyedRows(false)
  rows.protocol.map.set(PROTOCOL_KEY, emptyProtocol())
  return { rows, logs: emptyLogs(), pendingFills: new Map(), moved: new Map() }
}
