/**
 * How the rows of every reducer beyond the first slice map to Postgres: one descriptor per table
 * naming its columns, their SQL types and how a field is encoded. The generic sink code
 * (`rows-sink.ts`) loads, writes, images and restores any table from its descriptor alone.
 *
 * Invariants:
 * - uint256/int256 fields are `bigint` in rows and NUMERIC(78,0) in Postgres, encoded as decimal
 *   strings (never JS numbers); block numbers and timestamps are JS numbers in BIGINT columns;
 * - a keyed table's `key` lists its primary-key fields in the order its `...Key` function joins
 *   them, so a loaded row's key equals the key the reducers compute;
 * - every append-only table has (block_number, log_index) as its primary key, which is how a
 *   reorg deletes its rows above the common ancestor.
 */
import type { KeyedRows, AppendedLogs } from "./reduce/state.js"

/** A value as Postgres takes it in a parameter array and as the undo image stores it in JSON. */
export type DbValue = string | number | boolean | null | ReadonlyArray<unknown> | { readonly [k: string]: unknown }

export interface Codec {
  readonly sql: "numeric" | "bigint" | "integer" | "smallint" | "text" | "boolean" | "jsonb"
  readonly encode: (value: unknown) => DbValue
  readonly decode: (value: unknown) => unknown
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each codec knows its field's type
const nullable = <T>(f: (v: any) => T) => (v: unknown): T | null => (v === null || v === undefined ? null : f(v))

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

/** Columns from [field, codec] pairs; the column name is the field in snake_case unless given. */
const columns = (...cols: ReadonlyArray<readonly [string, Codec] | readonly [string, Codec, string]>): ReadonlyArray<Column> =>
  cols.map(([field, codec, name]) => ({ field, codec, name: name ?? snake(field) }))

const { big, int8, count, int4, int2, text, bool, json, bigList } = codecs

/** The chain position every appended row carries. */
const located = columns(["block", int8, "block_number"], ["logIndex", int4], ["txHash", text], ["timestamp", int8])

export const KEYED_TABLES: { readonly [K in keyof KeyedRows]: TableDef } = {
  outcomeTokens: {
    sql: "outcome_token",
    key: ["address"],
    columns: columns(["address", text], ["marketId", big], ["side", text], ["supply", big], ["holders", count])
  },
  holders: {
    sql: "token_holder",
    key: ["token", "holder"],
    columns: columns(["token", text], ["holder", text], ["marketId", big], ["side", text], ["balance", big])
  },
  orders: {
    sql: "exchange_order",
    key: ["id"],
    columns: columns(
      ["id", text], ["marketId", big], ["owner", text], ["side", int2], ["price", big], ["amount", big], ["filled", big],
      ["status", text], ["builder", text], ["placedAt", int8], ["placedBlock", int8], ["placedTx", text], ["updatedAt", int8],
      ["filledAt", int8], ["cancelledAt", int8]
    )
  },
  bookLevels: {
    sql: "order_book_level",
    key: ["marketId", "side", "price"],
    columns: columns(["marketId", big], ["side", int2], ["price", big], ["amount", big], ["orders", count])
  },
  eventGroups: {
    sql: "event_group",
    key: ["id"],
    columns: columns(
      ["id", big], ["name", text], ["creator", text], ["endTime", big], ["marketIds", bigList], ["oracle", text],
      ["winningIndex", big], ["state", text], ["resolver", text], ["closedAt", int8], ["createdAt", int8],
      ["createdBlock", int8], ["createdTx", text]
    )
  },
  approvedOracles: {
    sql: "approved_oracle",
    key: ["oracle"],
    columns: columns(["oracle", text], ["approved", bool], ["updatedAt", int8], ["updatedBlock", int8])
  },
  manualOracles: {
    sql: "manual_oracle",
    key: ["address"],
    columns: columns(["address", text], ["challengeDelay", big])
  },
  reports: {
    sql: "manual_report",
    key: ["oracle", "subject", "subjectId"],
    columns: columns(
      ["oracle", text], ["subject", text], ["subjectId", big], ["state", text], ["outcome", bool], ["winningIndex", big],
      ["reporter", text], ["reportedAt", int8], ["finalizesAt", big], ["admin", text], ["updatedAt", int8], ["updatedBlock", int8]
    )
  },
  feedMarkets: {
    sql: "price_feed_market",
    key: ["oracle", "marketId"],
    columns: columns(
      ["oracle", text], ["marketId", big], ["feed", text], ["threshold", big], ["gte", bool], ["snapshotAt", big],
      ["state", text], ["price", big], ["outcome", bool], ["registeredAt", int8], ["updatedAt", int8], ["updatedBlock", int8]
    )
  },
  pauseStates: {
    sql: "pause_state",
    key: ["scope"],
    columns: columns(["scope", text], ["paused", bool], ["account", text], ["updatedAt", int8], ["updatedBlock", int8])
  },
  pools: {
    sql: "amm_pool",
    key: ["poolId"],
    columns: columns(
      ["poolId", text], ["marketId", big], ["yesToken", text], ["quoteToken", text], ["yesIsCurrency0", bool, "yes_is_currency0"],
      ["registeredAt", int8], ["registeredBlock", int8], ["initialized", bool], ["sqrtPriceX96", big, "sqrt_price_x96"],
      ["liquidity", big], ["tick", int4], ["fee", int4], ["tickSpacing", int4], ["updatedAt", int8], ["updatedBlock", int8]
    )
  },
  lpPositions: {
    sql: "liquidity_position",
    key: ["poolId", "owner", "tickLower", "tickUpper", "salt"],
    columns: columns(
      ["poolId", text], ["owner", text], ["tickLower", int4], ["tickUpper", int4], ["salt", text], ["marketId", big],
      ["liquidity", big], ["updatedAt", int8]
    )
  },
  candles: {
    sql: "candle",
    key: ["marketId", "timeframe", "bucket"],
    columns: columns(
      ["marketId", big], ["timeframe", text], ["bucket", int8], ["open", big], ["high", big], ["low", big], ["close", big],
      ["volume", big], ["tradeCount", count]
    )
  }
}

export const APPEND_TABLES: { readonly [K in keyof AppendedLogs]: TableDef } = {
  matches: {
    sql: "order_match",
    key: ["block", "logIndex"],
    columns: [
      ...located,
      ...columns(
        ["marketId", big], ["makerOrderId", text], ["takerOrderId", text], ["maker", text], ["makerSide", int2], ["taker", text],
        ["matchType", int2], ["amount", big], ["price", big], ["makerBuilder", text], ["takerBuilder", text]
      )
    ]
  },
  takerFills: {
    sql: "taker_fill",
    key: ["block", "logIndex"],
    columns: [
      ...located,
      ...columns(["marketId", big], ["taker", text], ["recipient", text], ["takerSide", int2], ["totalFilled", big], ["totalCost", big], ["matchCount", big])
    ]
  },
  fees: {
    sql: "exchange_fee",
    key: ["block", "logIndex"],
    columns: [...located, ...columns(["marketId", big], ["amount", big])]
  },
  oracleApprovals: {
    sql: "oracle_approval_change",
    key: ["block", "logIndex"],
    columns: [...located, ...columns(["oracle", text], ["approved", bool])]
  },
  oracleActions: {
    sql: "manual_oracle_action",
    key: ["block", "logIndex"],
    columns: [
      ...located,
      ...columns(
        ["oracle", text], ["action", text], ["subject", text], ["subjectId", big], ["outcome", bool], ["winningIndex", big],
        ["account", text], ["challengeDelay", big]
      )
    ]
  },
  roleChanges: {
    sql: "role_change",
    key: ["block", "logIndex"],
    columns: [...located, ...columns(["role", text], ["account", text], ["sender", text], ["action", text])]
  },
  pauseChanges: {
    sql: "pause_change",
    key: ["block", "logIndex"],
    columns: [...located, ...columns(["scope", text], ["moduleId", text], ["paused", bool], ["account", text])]
  },
  diamondCuts: {
    sql: "diamond_cut",
    key: ["block", "logIndex"],
    columns: [...located, ...columns(["cuts", json], ["init", text], ["data", text])]
  },
  feeChanges: {
    sql: "fee_change",
    key: ["block", "logIndex"],
    columns: [
      ...located,
      ...columns(["kind", text], ["marketId", big], ["previousValue", text], ["newValue", text], ["overridden", bool])
    ]
  },
  hookUpgrades: {
    sql: "hook_upgrade",
    key: ["block", "logIndex"],
    columns: [...located, ...columns(["action", text], ["implementation", text], ["readyAt", big])]
  },
  liquidityEvents: {
    sql: "liquidity_event",
    key: ["block", "logIndex"],
    columns: [
      ...located,
      ...columns(["poolId", text], ["marketId", big], ["owner", text], ["tickLower", int4], ["tickUpper", int4], ["salt", text], ["liquidityDelta", big])
    ]
  }
}
