/**
 * Typed database rows: each query declares its columns once (`rowDecoder`), and its rows are
 * checked and converted by that declaration instead of by hand (`BigInt(row.x)`).
 *
 * Postgres hands NUMERIC and BIGINT values over as strings and INTEGER as numbers; a column kind
 * says which value it expects and what it becomes: `bigint` for amounts and uint256 ids, `int`
 * for counts, unix seconds and block numbers, `time` for an on-chain uint256 time.
 *
 * Why not Effect Schema (`SqlSchema`): measured on this machine, decoding a Schema `Struct` costs
 * 15 to 25 µs per row (a 26-column market row, a 7-column candle), 10 to 15 times the hand
 * conversions it replaces; for the 100 candles of `/api/markets/{id}/candles` that is about
 * 0.5 ms, half of the whole uncached request's CPU. These decoders cost about what the hand
 * conversions did (0.70 against 0.59 µs per fixture market row, `toMarket` with its renames) and
 * check what a Schema would: a value of another kind is a `RowDecodeError` naming the column, a
 * defect (a query and the migrations disagree) that the API answers 500, never a wrong answer.
 */

/** A row's column disagrees with its declaration: a bug between a query and the schema it reads. */
export class RowDecodeError extends Error {
  constructor(column: string, expected: string, value: unknown) {
    super(`column ${column}: expected ${expected}, got ${typeof value === "string" ? JSON.stringify(value) : String(value)}`)
    this.name = "RowDecodeError"
  }
}

/** Reads one column's value as an `A`; throws `RowDecodeError` on a value of another kind. */
export type Column<A> = (value: unknown, column: string) => A

/** A NUMERIC or BIGINT (a string of digits) or an INTEGER, as a bigint. */
export const bigint: Column<bigint> = (value, column) => {
  if (typeof value === "string") {
    try {
      return BigInt(value)
    } catch {
      throw new RowDecodeError(column, "an integer", value)
    }
  }
  if (typeof value === "number" && Number.isSafeInteger(value)) return BigInt(value)
  throw new RowDecodeError(column, "an integer", value)
}

/** A count, unix seconds or a block number (BIGINT, NUMERIC or INTEGER) as a JSON-safe integer. */
export const int: Column<number> = (value, column) => {
  const n = typeof value === "string" ? Number(value) : value
  if (typeof n === "number" && Number.isSafeInteger(n)) return n
  throw new RowDecodeError(column, "a safe integer", value)
}

/**
 * A uint256 that is a time on-chain (endTime, snapshotAt) as unix seconds: a value beyond
 * 2^53 - 1 (no real time) is clamped there, so the answer stays a valid integer.
 */
export const time: Column<number> = (value, column) => {
  const n = bigint(value, column)
  return n > MAX_SAFE ? Number.MAX_SAFE_INTEGER : Number(n)
}
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER)

/** TEXT, typed as `A` (an address or hash the pipeline stored lowercase, or a plain string). */
export const text = <A extends string = string>(): Column<A> => textColumn as Column<A>
const textColumn: Column<string> = (value, column) => {
  if (typeof value === "string") return value
  throw new RowDecodeError(column, "a string", value)
}

/** TEXT holding one of `values` (an enum the pipeline writes). */
export const oneOf = <const A extends ReadonlyArray<string>>(...values: A): Column<A[number]> => {
  const allowed = new Set<string>(values)
  return (value, column) => {
    if (typeof value === "string" && allowed.has(value)) return value as A[number]
    throw new RowDecodeError(column, `one of ${values.join(", ")}`, value)
  }
}

export const bool: Column<boolean> = (value, column) => {
  if (typeof value === "boolean") return value
  throw new RowDecodeError(column, "a boolean", value)
}

/** JSON or JSONB, typed as `A` by the writer's contract (the pipeline wrote it). */
export const json = <A>(): Column<A> => jsonColumn as Column<A>
const jsonColumn: Column<unknown> = (value, column) => {
  if (value !== undefined) return value
  throw new RowDecodeError(column, "a JSON value", value)
}

/** An array (a Postgres array, or a JSONB array) whose elements are read by `element`. */
export const array =
  <A>(element: Column<A>): Column<ReadonlyArray<A>> =>
  (value, column) => {
    if (!Array.isArray(value)) throw new RowDecodeError(column, "an array", value)
    return value.map((item) => element(item, column))
  }

/** `column` or SQL null. */
export const nullable =
  <A>(column: Column<A>): Column<A | null> =>
  (value, name) =>
    value === null ? null : column(value, name)

type Columns = Readonly<Record<string, Column<unknown>>>

/** A decoded row of `columns`. */
export type RowOf<C extends Columns> = { readonly [K in keyof C]: C[K] extends Column<infer A> ? A : never }

/**
 * A decoder of rows with `columns` (by column name). Columns the query selects beyond them
 * (such as a page's `total_count`) are left out; a declared column missing from the row is a
 * `RowDecodeError`.
 *
 * The decoder is generated as the object literal one would write by hand, so every column is a
 * property read of its own: V8 then sees one row shape at each read. A loop over the column
 * names (`row[name]`) sees every query's shapes at one read, and measured 2 to 4 times slower on
 * the list endpoints (about 0.2 ms more per page of 50 orders or matches). Only the column names
 * of our declarations, quoted by `JSON.stringify`, enter the generated code.
 */
export const rowDecoder = <C extends Columns>(columns: C): ((row: unknown) => RowOf<C>) => {
  const names = Object.keys(columns)
  const readers = names.map((name) => columns[name]!)
  const fields = names.map((name, i) => `${JSON.stringify(name)}: readers[${i}](row[${JSON.stringify(name)}], ${JSON.stringify(name)})`)
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  return new Function("readers", `return function decodeRow(row) { return { ${fields.join(", ")} } }`)(readers)
}
