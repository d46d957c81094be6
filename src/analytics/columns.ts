/**
 * How each Postgres column becomes a typed DuckDB column: its DuckDB type, the expression that
 * reads it from Postgres, and the conversion of Postgres's text form into a DuckDB value.
 *
 * The choices (documented for analysts in the README):
 * - token and collateral amounts and 1e6-scaled prices (both have 6 decimals) are DECIMAL(38,6)
 *   in units: a raw 1_500_000 is 1.500000. The DECIMAL's stored integer IS the raw on-chain
 *   integer, so the conversion is exact both ways (raw = value * 1e6) and Parquet keeps it exact
 *   (a DECIMAL is written as a Parquet decimal, while a HUGEINT would be written as a DOUBLE);
 * - every other uint256/int256 (ids, indexes, counts, v4 liquidity, sqrtPriceX96, feed prices)
 *   is DECIMAL(38,0), exact;
 * - unix seconds (`timestamp`, `bucket`, `*_at`, `*_time`) are TIMESTAMP (UTC);
 * - block numbers and counts kept as BIGINT in Postgres stay BIGINT; text stays VARCHAR
 *   (addresses and hashes are lowercase hex, as the pipeline writes them); jsonb is JSON, except
 *   the lists of market ids, which are DECIMAL(38,0)[].
 *
 * Invariant: a value never changes meaning on the way. One that does not fit its type (39+
 * digits, a timestamp beyond year 294,000) fails the export with `ValueOutOfRange` naming the
 * table, column and value, instead of being truncated or rounded.
 */
import {
  DuckDBDecimalValue,
  DuckDBTimestampTZValue,
  DuckDBTimestampValue,
  listValue,
  type DuckDBValue
} from "@duckdb/node-api"
import { APPEND_TABLES, codecs, KEYED_TABLES } from "../../pipeline/tables.js"
import { numericScaled, numericText, OutOfRange, PG_EPOCH_MICROS } from "./pg-binary.js"

export { OutOfRange }

/** Columns holding 6-decimal amounts or 1e6-scaled prices, exported as DECIMAL(38,6) units. */
export const UNIT_COLUMNS: Readonly<Record<string, ReadonlyArray<string>>> = {
  market: ["total_collateral", "volume", "yes_price"],
  position: ["yes_balance", "no_balance", "yes_cost", "no_cost", "realized_pnl"],
  user_stats: ["volume", "realized_pnl"],
  protocol_stats: ["total_volume"],
  trade: ["amount_in", "amount_out", "clob_filled", "amm_filled"],
  price_snapshot: ["yes_price", "open_interest"],
  outcome_token: ["supply"],
  token_holder: ["balance"],
  exchange_order: ["price", "amount", "filled"],
  order_book_level: ["price", "amount"],
  order_match: ["amount", "price"],
  taker_fill: ["total_filled", "total_cost"],
  exchange_fee: ["amount"],
  candle: ["open", "high", "low", "close", "volume"]
}

/** jsonb columns holding a JSON array of uint256 decimal strings (the `bigList` codec). */
const DECIMAL_LIST_COLUMNS: ReadonlySet<string> = new Set(
  [...Object.values(KEYED_TABLES), ...Object.values(APPEND_TABLES)].flatMap((t) =>
    t.columns.filter((c) => c.codec === codecs.bigList).map((c) => `${t.sql}.${c.name}`)
  )
)

/** Unix-seconds columns by name, when their Postgres type is an integer or numeric. */
const isTimeName = (name: string) => name === "timestamp" || name === "bucket" || /_(at|time)$/.test(name)

export type Meaning = "units" | "raw" | "time" | "integer" | "boolean" | "text" | "json" | "decimal_list" | "timestamptz" | "decimal"

/** Decodes one non-null field of a binary COPY tuple: `length` bytes of `buf` from `at`. */
export type Decode = (buf: Buffer, at: number, length: number) => DuckDBValue

export interface ColumnPlan {
  readonly name: string
  /** Postgres type as `format_type` prints it. */
  readonly pgType: string
  readonly duckType: string
  readonly meaning: Meaning
  /** Expression reading the column from relation alias `s`, in the binary form `decode` takes. */
  readonly select: string
  readonly decode: Decode
}

export const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`

const DECIMAL_LIMIT = 10n ** 38n
/** DuckDB's TIMESTAMP is int64 microseconds, its extremes reserved for +-infinity. */
const MICROS_LIMIT = 2n ** 63n - 2n
const SECONDS_LIMIT = MICROS_LIMIT / 1_000_000n

/**
 * NUMERIC -> DECIMAL(width, scale) whose stored integer is the Postgres value * 10^storedScale.
 * For units, storedScale is 0 and scale 6: the raw on-chain integer becomes the stored integer
 * as is, i.e. the value divided by 1e6, exactly.
 */
const numericDecimal = (width: number, scale: number, storedScale: number): Decode => (buf, at) =>
  new DuckDBDecimalValue(numericScaled(buf, at, storedScale, DECIMAL_LIMIT), width, scale)

const timestampOf = (seconds: bigint, text: () => string) => {
  const micros = seconds * 1_000_000n
  if (micros > MICROS_LIMIT || micros < -MICROS_LIMIT) throw new OutOfRange(text(), "beyond TIMESTAMP's range")
  return new DuckDBTimestampValue(micros)
}

/** Buffer's own UTF-8 slice, without `toString`'s argument handling (it runs once per text value). */
const utf8 = (buf: Buffer, start: number, end: number): string => (buf as unknown as { utf8Slice: (s: number, e: number) => string }).utf8Slice(start, end)

const decodeText: Decode = (buf, at, length) => utf8(buf, at, at + length)

/** jsonb's binary form is a version byte (1) and the JSON text. */
const decodeJsonb: Decode = (buf, at, length) => utf8(buf, at + 1, at + length)

const decodeDecimalList = (jsonAt: number): Decode => (buf, at, length) => {
  const items = JSON.parse(buf.toString("utf8", at + jsonAt, at + length)) as ReadonlyArray<string | number>
  return listValue(
    items.map((item) => {
      const value = BigInt(item)
      if (value >= DECIMAL_LIMIT || value <= -DECIMAL_LIMIT) throw new OutOfRange(String(item), "more than 38 digits")
      return new DuckDBDecimalValue(value, 38, 0)
    })
  )
}

const SECONDS: Readonly<Record<string, Decode>> = {
  bigint: (buf, at) => timestampOf(buf.readBigInt64BE(at), () => String(buf.readBigInt64BE(at))),
  integer: (buf, at) => timestampOf(BigInt(buf.readInt32BE(at)), () => String(buf.readInt32BE(at))),
  smallint: (buf, at) => timestampOf(BigInt(buf.readInt16BE(at)), () => String(buf.readInt16BE(at)))
}
const numericSeconds: Decode = (buf, at) => timestampOf(numericScaled(buf, at, 0, SECONDS_LIMIT), () => numericText(buf, at))

/** Postgres timestamps are int64 microseconds since 2000-01-01. */
const pgTimestamp = (make: (micros: bigint) => DuckDBValue): Decode => (buf, at) => make(buf.readBigInt64BE(at) + PG_EPOCH_MICROS)

/** The plan of one column of `table`, from its Postgres type (`format_type`) and name. */
export const planColumn = (table: string, name: string, pgType: string): ColumnPlan => {
  const ref = `s.${quoteIdent(name)}`
  const plan = (duckType: string, meaning: Meaning, decode: Decode, select = ref): ColumnPlan => ({
    name,
    pgType,
    duckType,
    meaning,
    select,
    decode
  })
  const asText = () => plan("VARCHAR", "text", decodeText, `${ref}::text`)
  const numeric = /^numeric(?:\((\d+),(\d+)\))?$/.exec(pgType)
  if (isTimeName(name)) {
    if (numeric !== null) return plan("TIMESTAMP", "time", numericSeconds)
    const seconds = SECONDS[pgType]
    if (seconds !== undefined) return plan("TIMESTAMP", "time", seconds)
  }
  if (numeric !== null) {
    if (UNIT_COLUMNS[table]?.includes(name)) return plan("DECIMAL(38,6)", "units", numericDecimal(38, 6, 0))
    const [, precision, scale] = numeric
    if (scale === undefined || scale === "0") return plan("DECIMAL(38,0)", "raw", numericDecimal(38, 0, 0))
    if (Number(precision) <= 38) {
      const s = Number(scale)
      return plan(`DECIMAL(${precision},${s})`, "decimal", numericDecimal(Number(precision), s, s))
    }
    return asText()
  }
  switch (pgType) {
    case "bigint":
      return plan("BIGINT", "integer", (buf, at) => buf.readBigInt64BE(at))
    case "integer":
      return plan("INTEGER", "integer", (buf, at) => buf.readInt32BE(at))
    case "smallint":
      return plan("SMALLINT", "integer", (buf, at) => buf.readInt16BE(at))
    case "boolean":
      return plan("BOOLEAN", "boolean", (buf, at) => buf[at] !== 0)
    case "text":
      return plan("VARCHAR", "text", decodeText)
    case "jsonb":
      return DECIMAL_LIST_COLUMNS.has(`${table}.${name}`)
        ? plan("DECIMAL(38,0)[]", "decimal_list", decodeDecimalList(1))
        : plan("JSON", "json", decodeJsonb)
    case "json":
      return plan("JSON", "json", decodeText)
    case "timestamp with time zone":
      return plan("TIMESTAMPTZ", "timestamptz", pgTimestamp((micros) => new DuckDBTimestampTZValue(micros)))
    case "timestamp without time zone":
      return plan("TIMESTAMP", "time", pgTimestamp((micros) => new DuckDBTimestampValue(micros)))
    default:
      // Anything else (varchar, arrays, uuid, dates of a future metadata table) as its text.
      return asText()
  }
}
