/**
 * How the rows of every reducer map to Postgres: one descriptor per table naming its columns,
 * their SQL types and how a field is encoded. The generic sink code (`rows-sink.ts`) loads,
 * writes, images and restores any table from its descriptor alone, and the analytics export
 * reads the undo log through the same descriptors.
 *
 * Invariants:
 * - uint256/int256 fields are `bigint` in rows and NUMERIC(78,0) in Postgres, encoded as decimal
 *   strings (never JS numbers); block numbers and timestamps are JS numbers in BIGINT columns;
 * - a keyed table's `key` lists its primary-key fields in the order its `...Key` function joins
 *   them, so a loaded row's key equals the key the reducers compute;
 * - every append-only table has (block_number, log_index) as its primary key, which is how a
 *   reorg deletes its rows above the common ancestor.
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
  PoolRow,
  PositionRow,
  PriceSnapshotRow,
  ProtocolRow,
  PositionMoveRow,
  ReferralRow,
  TakerFillRow,
  TradeRow,
  TraderActivityRow,
  TraderMarketRow,
  UserRow
} from "./reduce/model.js"
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
} from "./reduce/model-governance.js"
import type { AppendedLogs, KeyedRows } from "./reduce/state.js"

/** A value as Postgres takes it in a parameter array and as the undo image stores it in JSON. */
export type DbValue = string | number | boolean | null | ReadonlyArray<unknown> | { readonly [k: string]: unknown }

export interface Codec {
  readonly sql: "numeric" | "bigint" | "integer" | "smallint" | "text" | "boolean" | "jsonb"
  readonly encode: (value: unknown) => DbValue
  readonly decode: (value: unknown) => unknown
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each codec knows its field's type
const nullable =
  <T>(f: (v: any) => T) =>
  (v: unknown): T | null =>
    v === null || v === undefined ? null : f(v)

export const codecs = {
  /** uint256 / int256 as NUMERIC(78,0). */
  big: { sql: "numeric", encode: nullable((v: bigint) => v.toString()), decode: nullable((v: string) => BigInt(v)) },
  /** Block numbers and unix seconds. */
  int8: { sql: "bigint", encode: nullable((v: number) => v), decode: nullable((v: string | number) => Number(v)) },
  /** Counts kept as bigint in rows, BIGINT in Postgres. */
  count: { sql: "bigint", encode: nullable((v: bigint) => v.toString()), decode: nullable((v: string) => BigInt(v)) },
  int4: { sql: "integer", encode: nullable((v: number) => v), decode: nullable((v: number) => v) },
  int2: { sql: "smallint", encode: nullable((v: number) => v), decode: nullable((v: number) => v) },
  text: { sql: "text", encode: nullable((v: string) => v), decode: nullable((v: string) => v) },
  bool: { sql: "boolean", encode: nullable((v: boolean) => v), decode: nullable((v: boolean) => v) },
  json: { sql: "jsonb", encode: nullable((v: unknown) => v as DbValue), decode: nullable((v: unknown) => v) },
  /** A list of uint256 as a JSON array of decimal strings. */
  bigList: {
    sql: "jsonb",
    encode: nullable((v: ReadonlyArray<bigint>) => v.map(String)),
    decode: nullable((v: ReadonlyArray<string>) => v.map((x) => BigInt(x)))
  }
} satisfies Record<string, Codec>

export interface Column {
  readonly name: string
  readonly field: string
  readonly codec: Codec
}

export interface TableDef {
  readonly sql: string
  readonly columns: ReadonlyArray<Column>
  /** Primary-key fields, in key order. */
  readonly key: ReadonlyArray<string>
}

const snake = (field: string) => field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

type Spec<R> = readonly [keyof R & string, Codec] | readonly [keyof R & string, Codec, string]

/**
 * A table of rows `R`: columns from [field, codec] (column name = the field in snake_case unless
 * given). Type-checked both ways: every column names a field of `R`, and every field of `R`
 * except `skip` has a column, so a descriptor cannot silently drop or misspell a field.
 */
const tableOf =
  <R, Skip extends keyof R = never>() =>
  <const C extends ReadonlyArray<Spec<R>>>(
    sql: string,
    key: ReadonlyArray<C[number][0]>,
    cols: C &
      ([Exclude<keyof R, C[number][0] | Skip>] extends [never] ? unknown : { readonly missing: Exclude<keyof R, C[number][0] | Skip> })
  ): TableDef => ({
    sql,
    key,
    columns: cols.map(([field, codec, name]) => ({ field, codec, name: name ?? snake(field) }))
  })

const { big, int8, count, int4, int2, text, bool, json, bigList } = codecs

/** The chain position every appended row carries (its emitting address is not stored). */
const LOCATED = [
  ["block", int8, "block_number"],
  ["logIndex", int4],
  ["txHash", text],
  ["timestamp", int8]
] as const
const APPEND_KEY = ["block", "logIndex"] as const

/** trader_total and trader_day hold the same totals (reduce/trader-activity.ts), keyed by address, or address and day. */
const TRADER_ACTIVITY = [
  ["address", text],
  ["day", int8],
  ["volume", big],
  ["trades", count],
  ["firstTrade", bool],
  ["firstTradeAt", int8],
  ["lastTradeAt", int8],
  ["dayFirstTradeAt", int8],
  ["lastTradeDay", int8],
  ["run", int4],
  ["longestRun", int4],
  ["streaks", int4],
  ["liquidityDays", int4],
  ["lastLiquidityDay", int8]
] as const

/**
 * Every mutable table, by its name in `KeyedRows` and the row cache. Written and reverted in this
 * order (markets, positions, users and the protocol totals first, as they always were).
 */
export const KEYED_TABLES: { readonly [K in keyof KeyedRows]: TableDef } = {
  markets: tableOf<MarketRow>()(
    "market",
    ["id"],
    [
      ["id", big],
      ["question", text],
      ["endTime", big],
      ["oracle", text],
      ["creator", text],
      ["yesToken", text],
      ["noToken", text],
      ["createdAt", int8],
      ["createdBlock", int8],
      ["createdTx", text],
      ["totalCollateral", big],
      ["volume", big],
      ["tradeCount", count],
      ["isResolved", bool],
      ["outcome", bool],
      ["resolutionType", text],
      ["resolvedAt", int8],
      ["refundMode", bool],
      ["yesPrice", big],
      ["lastTradeAt", int8]
    ]
  ),
  positions: tableOf<PositionRow>()(
    "position",
    ["user", "marketId"],
    [
      ["user", text, "user_address"],
      ["marketId", big],
      ["yesBalance", big],
      ["noBalance", big],
      ["yesCost", big],
      ["noCost", big],
      ["realizedPnl", big]
    ]
  ),
  users: tableOf<UserRow>()(
    "user_stats",
    ["address"],
    [
      ["address", text],
      ["volume", big],
      ["tradeCount", count],
      ["realizedPnl", big],
      ["traded", bool]
    ]
  ),
  protocol: tableOf<ProtocolRow>()(
    "protocol_stats",
    ["id"],
    [
      ["id", int2],
      ["totalMarkets", big],
      ["totalVolume", big],
      ["totalTrades", big],
      ["totalUsers", big]
    ]
  ),
  outcomeTokens: tableOf<OutcomeTokenRow>()(
    "outcome_token",
    ["address"],
    [
      ["address", text],
      ["marketId", big],
      ["side", text],
      ["supply", big],
      ["holders", count]
    ]
  ),
  holders: tableOf<HolderRow>()(
    "token_holder",
    ["token", "holder"],
    [
      ["token", text],
      ["holder", text],
      ["marketId", big],
      ["side", text],
      ["balance", big]
    ]
  ),
  orders: tableOf<OrderRow>()(
    "exchange_order",
    ["id"],
    [
      ["id", text],
      ["marketId", big],
      ["owner", text],
      ["side", int2],
      ["price", big],
      ["amount", big],
      ["filled", big],
      ["status", text],
      ["builder", text],
      ["placedAt", int8],
      ["placedBlock", int8],
      ["placedTx", text],
      ["updatedAt", int8],
      ["filledAt", int8],
      ["cancelledAt", int8],
      ["cancelledTx", text]
    ]
  ),
  bookLevels: tableOf<BookLevelRow>()(
    "order_book_level",
    ["marketId", "side", "price"],
    [
      ["marketId", big],
      ["side", int2],
      ["price", big],
      ["amount", big],
      ["orders", count]
    ]
  ),
  eventGroups: tableOf<EventGroupRow>()(
    "event_group",
    ["id"],
    [
      ["id", big],
      ["name", text],
      ["creator", text],
      ["endTime", big],
      ["marketIds", bigList],
      ["oracle", text],
      ["winningIndex", big],
      ["state", text],
      ["resolver", text],
      ["closedAt", int8],
      ["createdAt", int8],
      ["createdBlock", int8],
      ["createdTx", text]
    ]
  ),
  approvedOracles: tableOf<ApprovedOracleRow>()(
    "approved_oracle",
    ["oracle"],
    [
      ["oracle", text],
      ["approved", bool],
      ["updatedAt", int8],
      ["updatedBlock", int8]
    ]
  ),
  manualOracles: tableOf<ManualOracleRow>()(
    "manual_oracle",
    ["address"],
    [
      ["address", text],
      ["challengeDelay", big]
    ]
  ),
  reports: tableOf<ManualReportRow>()(
    "manual_report",
    ["oracle", "subject", "subjectId"],
    [
      ["oracle", text],
      ["subject", text],
      ["subjectId", big],
      ["state", text],
      ["outcome", bool],
      ["winningIndex", big],
      ["reporter", text],
      ["reportedAt", int8],
      ["finalizesAt", big],
      ["admin", text],
      ["updatedAt", int8],
      ["updatedBlock", int8]
    ]
  ),
  feedMarkets: tableOf<FeedMarketRow>()(
    "price_feed_market",
    ["oracle", "marketId"],
    [
      ["oracle", text],
      ["marketId", big],
      ["feed", text],
      ["threshold", big],
      ["gte", bool],
      ["snapshotAt", big],
      ["state", text],
      ["price", big],
      ["outcome", bool],
      ["registeredAt", int8],
      ["updatedAt", int8],
      ["updatedBlock", int8]
    ]
  ),
  pauseStates: tableOf<PauseStateRow>()(
    "pause_state",
    ["scope"],
    [
      ["scope", text],
      ["paused", bool],
      ["account", text],
      ["updatedAt", int8],
      ["updatedBlock", int8]
    ]
  ),
  pools: tableOf<PoolRow>()(
    "amm_pool",
    ["poolId"],
    [
      ["poolId", text],
      ["marketId", big],
      ["yesToken", text],
      ["quoteToken", text],
      ["yesIsCurrency0", bool, "yes_is_currency0"],
      ["registeredAt", int8],
      ["registeredBlock", int8],
      ["initialized", bool],
      ["sqrtPriceX96", big, "sqrt_price_x96"],
      ["liquidity", big],
      ["tick", int4],
      ["fee", int4],
      ["tickSpacing", int4],
      ["updatedAt", int8],
      ["updatedBlock", int8]
    ]
  ),
  lpPositions: tableOf<LiquidityPositionRow>()(
    "liquidity_position",
    ["poolId", "owner", "tickLower", "tickUpper", "salt"],
    [
      ["poolId", text],
      ["owner", text],
      ["tickLower", int4],
      ["tickUpper", int4],
      ["salt", text],
      ["marketId", big],
      ["liquidity", big],
      ["updatedAt", int8]
    ]
  ),
  candles: tableOf<CandleRow>()(
    "candle",
    ["marketId", "timeframe", "bucket"],
    [
      ["marketId", big],
      ["timeframe", text],
      ["bucket", int8],
      ["open", big],
      ["high", big],
      ["low", big],
      ["close", big],
      ["volume", big],
      ["tradeCount", count]
    ]
  ),
  traderTotals: tableOf<TraderActivityRow>()("trader_total", ["address"], TRADER_ACTIVITY),
  traderDays: tableOf<TraderActivityRow>()("trader_day", ["address", "day"], TRADER_ACTIVITY),
  traderMarkets: tableOf<TraderMarketRow>()(
    "trader_market",
    ["address", "marketId"],
    [
      ["address", text],
      ["marketId", big],
      ["lastTradedAt", int8],
      ["netYes", big],
      ["netNo", big]
    ]
  )
}

/** Every append-only table, by its name in `AppendedLogs`; appended in this order. */
export const APPEND_TABLES: { readonly [K in keyof AppendedLogs]: TableDef } = {
  trades: tableOf<TradeRow, "address">()("trade", APPEND_KEY, [
    ...LOCATED,
    ["marketId", big],
    ["trader", text],
    ["recipient", text],
    ["tradeType", int2],
    ["amountIn", big],
    ["amountOut", big],
    ["clobFilled", big],
    ["ammFilled", big]
  ]),
  // A snapshot's transaction is its trade's: not stored again.
  priceSnapshots: tableOf<PriceSnapshotRow, "address" | "txHash">()("price_snapshot", APPEND_KEY, [
    ["block", int8, "block_number"],
    ["logIndex", int4],
    ["timestamp", int8],
    ["marketId", big],
    ["yesPrice", big],
    ["source", text],
    ["openInterest", big]
  ]),
  matches: tableOf<MatchRow, "address">()("order_match", APPEND_KEY, [
    ...LOCATED,
    ["marketId", big],
    ["makerOrderId", text],
    ["takerOrderId", text],
    ["maker", text],
    ["makerSide", int2],
    ["taker", text],
    ["matchType", int2],
    ["amount", big],
    ["price", big],
    ["makerBuilder", text],
    ["takerBuilder", text]
  ]),
  takerFills: tableOf<TakerFillRow, "address">()("taker_fill", APPEND_KEY, [
    ...LOCATED,
    ["marketId", big],
    ["taker", text],
    ["recipient", text],
    ["takerSide", int2],
    ["totalFilled", big],
    ["totalCost", big],
    ["matchCount", big]
  ]),
  fees: tableOf<FeeRow, "address">()("exchange_fee", APPEND_KEY, [...LOCATED, ["marketId", big], ["amount", big]]),
  oracleApprovals: tableOf<OracleApprovalRow, "address">()("oracle_approval_change", APPEND_KEY, [
    ...LOCATED,
    ["oracle", text],
    ["approved", bool]
  ]),
  oracleActions: tableOf<OracleActionRow, "address">()("manual_oracle_action", APPEND_KEY, [
    ...LOCATED,
    ["oracle", text],
    ["action", text],
    ["subject", text],
    ["subjectId", big],
    ["outcome", bool],
    ["winningIndex", big],
    ["account", text],
    ["challengeDelay", big]
  ]),
  roleChanges: tableOf<RoleChangeRow, "address">()("role_change", APPEND_KEY, [
    ...LOCATED,
    ["role", text],
    ["account", text],
    ["sender", text],
    ["action", text]
  ]),
  pauseChanges: tableOf<PauseChangeRow, "address">()("pause_change", APPEND_KEY, [
    ...LOCATED,
    ["scope", text],
    ["moduleId", text],
    ["paused", bool],
    ["account", text]
  ]),
  diamondCuts: tableOf<DiamondCutRow, "address">()("diamond_cut", APPEND_KEY, [...LOCATED, ["cuts", json], ["init", text], ["data", text]]),
  feeChanges: tableOf<FeeChangeRow, "address">()("fee_change", APPEND_KEY, [
    ...LOCATED,
    ["kind", text],
    ["marketId", big],
    ["previousValue", text],
    ["newValue", text],
    ["overridden", bool]
  ]),
  hookUpgrades: tableOf<HookUpgradeRow, "address">()("hook_upgrade", APPEND_KEY, [
    ...LOCATED,
    ["action", text],
    ["implementation", text],
    ["readyAt", big]
  ]),
  liquidityEvents: tableOf<LiquidityEventRow, "address">()("liquidity_event", APPEND_KEY, [
    ...LOCATED,
    ["poolId", text],
    ["marketId", big],
    ["owner", text],
    ["tickLower", int4],
    ["tickUpper", int4],
    ["salt", text],
    ["liquidityDelta", big]
  ]),
  referrals: tableOf<ReferralRow, "address">()("referral", APPEND_KEY, [
    ...LOCATED,
    ["marketId", big],
    ["referrer", text],
    ["trader", text],
    ["usdcVolume", big]
  ]),
  // One row per (event, user): an event moves one market's positions, each user's once. Its last
  // row per minute is the position history (the view position_history, migration 0028).
  positionMoves: tableOf<PositionMoveRow, "address">()(
    "position_move",
    ["block", "logIndex", "user"],
    [
      ...LOCATED,
      ["user", text, "user_address"],
      ["marketId", big],
      ["source", text],
      ["yesShares", big],
      ["noShares", big],
      ["usdc", big],
      ["yesBalance", big],
      ["noBalance", big],
      ["yesCost", big],
      ["noCost", big],
      ["realizedPnl", big]
    ]
  )
}

/** Every table whose rows change in place: restored from the undo log on a reorg. */
export const MUTABLE_TABLES: ReadonlyArray<TableDef> = Object.values(KEYED_TABLES)

/** Every append-only table: rows above the common ancestor deleted on a reorg. */
export const APPEND_ONLY_TABLES: ReadonlyArray<TableDef> = Object.values(APPEND_TABLES)

/** Every table the sink writes. */
export const SINK_TABLES: ReadonlyArray<string> = [...MUTABLE_TABLES, ...APPEND_ONLY_TABLES].map((t) => t.sql)
