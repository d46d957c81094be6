/**
 * How each Postgres column becomes a typed DuckDB column: its DuckDB type, the Postgres
 * expression whose CSV text DuckDB's CSV reader parses exactly, and the DuckDB expression that
 * turns the parsed value into the column's value.
 *
 * The choices (documented for analysts in docs/analytics.md):
 * - token and collateral amounts and 1e6-scaled prices (both have 6 decimals) are DECIMAL(38,6)
 *   in units: a raw 1_500_000 is 1.500000. The DECIMAL's stored integer IS the raw on-chain
 *   integer, so the conversion is exact both ways (raw = value * 1e6) and Parquet keeps it exact
 *   (a DECIMAL is written as a Parquet decimal, while a HUGEINT would be written as a DOUBLE).
 *   Postgres writes the raw integer, DuckDB parses it as a HUGEINT and multiplies the
 *   DECIMAL(38,0) by 0.000001::DECIMAL(38,6): a DECIMAL product multiplies the stored integers
 *   (raw * 1) and adds the scales, so the result is the raw integer at scale 6, exactly;
 * - every other uint256/int256 (ids, indexes, counts, v4 liquidity, sqrtPriceX96, feed prices)
 *   is DECIMAL(38,0), exact;
 * - unix seconds (`timestamp`, `bucket`, `minute`, `*_at`, `*_time`) are TIMESTAMP (UTC): Postgres writes
 *   the integer, DuckDB makes the timestamp from its microseconds (no time zone involved);
 * - block numbers and counts kept as BIGINT in Postgres stay BIGINT; text stays VARCHAR
 *   (addresses and hashes are lowercase hex, as the pipeline writes them); jsonb is JSON, except
 *   the lists of market ids, which are DECIMAL(38,0)[].
 *
 * Whole numbers are parsed as HUGEINT and cast, not parsed as DECIMAL(38,x): DuckDB's CSV
 * reader parses a DECIMAL wider than 18 digits about 20 times slower than a HUGEINT.
 *
 * Invariant: a value never changes meaning on the way. DuckDB ROUNDS a decimal text with more
 * fraction digits than its type has, so every value that could not be parsed exactly (39+
 * digits, a fraction in an integer column, NaN, a timestamp beyond DuckDB's range) is refused
 * in Postgres, in the COPY's own query (`refuse` in `out-of-range.ts`): the export fails with
 * `ValueOutOfRange` naming the table, column and value, instead of truncating or rounding.
 */
import { APPEND_ONLY_TABLES, codecs, MUTABLE_TABLES } from "../../pipeline/tables.js"
import { refuse } from "./out-of-range.js"

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
  candle: ["open", "high", "low", "close", "volume"],
  referral: ["usdc_volume"],
  position_move: ["yes_shares", "no_shares", "usdc", "yes_balance", "no_balance", "yes_cost", "no_cost", "realized_pnl"]
}

/** jsonb columns holding a JSON array of uint256 decimal strings (the `bigList` codec). */
const DECIMAL_LIST_COLUMNS: ReadonlySet<string> = new Set(
  [...MUTABLE_TABLES, ...APPEND_ONLY_TABLES].flatMap((t) =>
    t.columns.filter((c) => c.codec === codecs.bigList).map((c) => `${t.sql}.${c.name}`)
  )
)

/** Unix-seconds columns by name, when their Postgres type is an integer or numeric. */
const isTimeName = (name: string) => name === "timestamp" || name === "bucket" || name === "minute" || /_(at|time)$/.test(name)

export type Meaning = "units" | "raw" | "time" | "integer" | "boolean" | "text" | "json" | "decimal_list" | "timestamptz" | "decimal"

export interface ColumnPlan {
  readonly name: string
  /** Postgres type as `format_type` prints it. */
  readonly pgType: string
  readonly duckType: string
  readonly meaning: Meaning
  /** Postgres expression over relation alias `s` whose CSV text DuckDB parses as `csvType`. */
  readonly select: string
  /** The type DuckDB's CSV reader parses the column's text as. */
  readonly csvType: string
  /** DuckDB expression making the column's value of the parsed field `field` (quoted name). */
  readonly load: (field: string) => string
}

export const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`

/** Magnitude limit of a DECIMAL(38, x)'s stored integer. */
const DECIMAL_LIMIT = "1e38"

/** A parsed HUGEINT (below 1e38, checked in Postgres) as the DECIMAL(38,0) of the same value. */
const asDecimal = (field: string) => `${field}::DECIMAL(38,0)`

/** A raw integer as DECIMAL(38,6) units whose stored integer is the raw integer. */
const asUnits = (field: string) => `${field}::DECIMAL(38,0) * 0.000001::DECIMAL(38,6)`

/**
 * DuckDB's TIMESTAMP range in whole seconds, exclusive bounds: its int64 microseconds less the
 * values reserved for +-infinity, and its earliest date (290309-12-22 BC).
 */
const SECONDS_ABOVE = "9223372036855"
const SECONDS_BELOW = "-9223372022401"

/** The seconds of a TIMESTAMP column, made in DuckDB: no time zone, exact. */
const fromSeconds = (field: string) => `make_timestamp(${field} * 1000000)`

/**
 * Checks that a numeric `ref` is a whole number strictly between `below` and `above`, and the
 * reason of a refusal. A column declared with scale 0 cannot hold a fraction; an unconstrained
 * numeric is whole when its scale is 0 or its fraction digits are zeros (5.0). NaN compares
 * above every number, so the bounds refuse it too.
 */
const wholeNumber = (ref: string, pgType: string, below: string, above: string, tooBig: string) => {
  const whole = /^numeric\(\d+,0\)$/.test(pgType) ? "" : ` and (scale(${ref}) = 0 or ${ref} = trunc(${ref}))`
  return {
    ok: `${ref} > ${below} and ${ref} < ${above}${whole}`,
    why: `case when ${ref} in ('NaN'::numeric, 'Infinity'::numeric, '-Infinity'::numeric) then 'not a finite number'
               when ${ref} <= ${below} or ${ref} >= ${above} then '${tooBig}' else 'more than 0 fraction digits' end`
  }
}

/** The plan of one column of `table`, from its Postgres type (`format_type`) and name. */
export const planColumn = (table: string, name: string, pgType: string): ColumnPlan => {
  const ref = `s.${quoteIdent(name)}`
  const plan = (duckType: string, meaning: Meaning, select = ref, csvType = duckType, load = (field: string) => field): ColumnPlan => ({
    name,
    pgType,
    duckType,
    meaning,
    select,
    csvType,
    load
  })
  /** `value` (null for a null) when `check` holds, else a Postgres error naming the column and value. */
  const guarded = (check: string, value: string, type: string, why: string) =>
    `case when ${ref} is null or (${check}) then ${value} else ${refuse(name, `${ref}::text`, why, type)} end`
  const asText = () => plan("VARCHAR", "text", `${ref}::text`)
  const numeric = /^numeric(?:\((\d+),(\d+)\))?$/.exec(pgType)
  if (isTimeName(name)) {
    if (pgType === "bigint") {
      const ok = `${ref} > ${SECONDS_BELOW} and ${ref} < ${SECONDS_ABOVE}`
      return plan("TIMESTAMP", "time", guarded(ok, ref, "bigint", `'beyond TIMESTAMP''s range'`), "BIGINT", fromSeconds)
    }
    if (numeric !== null) {
      const range = wholeNumber(ref, pgType, SECONDS_BELOW, SECONDS_ABOVE, "beyond TIMESTAMP''s range")
      return plan("TIMESTAMP", "time", guarded(range.ok, `${ref}::bigint`, "bigint", range.why), "BIGINT", fromSeconds)
    }
    if (pgType === "integer" || pgType === "smallint") return plan("TIMESTAMP", "time", ref, "BIGINT", fromSeconds)
  }
  if (numeric !== null) {
    const [, precision, scale] = numeric
    const units = UNIT_COLUMNS[table]?.includes(name) === true
    if (units || scale === undefined || scale === "0") {
      const range = wholeNumber(ref, pgType, `-${DECIMAL_LIMIT}`, DECIMAL_LIMIT, "more than 38 digits")
      // A whole unconstrained numeric may print as 5.0: trunc makes it 5.
      const value = scale === "0" ? ref : `trunc(${ref})`
      const select = guarded(range.ok, value, "numeric", range.why)
      return units ? plan("DECIMAL(38,6)", "units", select, "HUGEINT", asUnits) : plan("DECIMAL(38,0)", "raw", select, "HUGEINT", asDecimal)
    }
    if (Number(precision) <= 38) {
      // Declared with at most 38 digits and this scale: fits once it is a finite number.
      const finite = `${ref} > '-Infinity'::numeric and ${ref} < 'Infinity'::numeric`
      return plan(`DECIMAL(${precision},${scale})`, "decimal", guarded(finite, ref, "numeric", `'not a finite number'`))
    }
    return asText()
  }
  switch (pgType) {
    case "bigint":
      return plan("BIGINT", "integer")
    case "integer":
      return plan("INTEGER", "integer")
    case "smallint":
      return plan("SMALLINT", "integer")
    case "boolean":
      return plan("BOOLEAN", "boolean")
    case "text":
      return plan("VARCHAR", "text")
    case "jsonb":
      if (DECIMAL_LIST_COLUMNS.has(`${table}.${name}`)) {
        // Every item a whole number of at most 38 digits, as a JSON string or number.
        const items = `case when jsonb_typeof(${ref}) = 'array'
                            then not exists (select 1 from jsonb_array_elements_text(${ref}) i where i !~ '^-?0*[0-9]{1,38}$') end`
        const select = guarded(`coalesce(${items}, false)`, ref, "jsonb", `'not a list of numbers of at most 38 digits'`)
        return plan("DECIMAL(38,0)[]", "decimal_list", select, "HUGEINT[]", (field) => `${field}::DECIMAL(38,0)[]`)
      }
      return plan("JSON", "json", ref, "VARCHAR")
    case "json":
      return plan("JSON", "json", ref, "VARCHAR")
    case "timestamp with time zone":
      // ISO text in UTC with its offset: DuckDB parses it exactly whatever its own time zone.
      return plan(
        "TIMESTAMPTZ",
        "timestamptz",
        `case when isfinite(${ref}) then to_char(${ref} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"+00"') else ${ref}::text end`
      )
    case "timestamp without time zone":
      return plan(
        "TIMESTAMP",
        "time",
        `case when isfinite(${ref}) then to_char(${ref}, 'YYYY-MM-DD"T"HH24:MI:SS.US') else ${ref}::text end`
      )
    default:
      // Anything else (varchar, arrays, uuid, dates of a future metadata table) as its text.
      return asText()
  }
}
