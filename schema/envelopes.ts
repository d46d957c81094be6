/**
 * Success envelopes of both layers and the shared pagination parameters.
 *
 * Indexer: lists `{ data: A[], meta: { limit, offset, count } }` (count = all matching rows);
 * a single item `{ data: A, meta: null }`. Backend: `{ data, meta: { timestamp, version,
 * reqId? } }`, lists adding `meta.pagination { limit, offset, total }`.
 */
import { Schema } from "effect"

export const ListMeta = Schema.Struct({
  limit: Schema.Int,
  offset: Schema.Int,
  count: Schema.Int.annotations({ description: "total number of matching rows, not only this page" })
}).annotations({ identifier: "ListMeta" })

export const IndexerList = <S extends Schema.Schema.Any>(item: S) => Schema.Struct({ data: Schema.Array(item), meta: ListMeta })
export const IndexerItem = <S extends Schema.Schema.Any>(item: S) => Schema.Struct({ data: item, meta: Schema.Null })

export const BackendMeta = Schema.Struct({
  timestamp: Schema.Int.annotations({ description: "unix seconds when the answer was made" }),
  version: Schema.String,
  reqId: Schema.optional(Schema.String)
}).annotations({ identifier: "BackendMeta" })

export const Pagination = Schema.Struct({ limit: Schema.Int, offset: Schema.Int, total: Schema.Int }).annotations({ identifier: "Pagination" })

export const BackendItem = <S extends Schema.Schema.Any>(item: S) => Schema.Struct({ data: item, meta: BackendMeta })
export const BackendList = <S extends Schema.Schema.Any>(item: S) =>
  Schema.Struct({ data: Schema.Array(item), meta: Schema.extend(BackendMeta, Schema.Struct({ pagination: Pagination })) })

export const DEFAULT_LIMIT = 20
export const MAX_LIMIT = 100

/** A whole number in [min, max] from a query string, with a message naming the parameter. */
const integerParam = (name: string, min: number, max: number) =>
  Schema.String.pipe(
    Schema.filter((s) => /^\d+$/.test(s) || `${name} must be a whole number between ${min} and ${max}, got ${JSON.stringify(s)}`),
    Schema.compose(Schema.NumberFromString),
    Schema.filter((n) => (n >= min && n <= max) || `${name} must be between ${min} and ${max}, got ${n}`)
  ).annotations({ description: `${name}: ${min}..${max}` })

/** `limit` (default 20, 1..100) and `offset` (default 0) from query strings. */
export const PaginationQuery = Schema.Struct({
  limit: Schema.optionalWith(integerParam("limit", 1, MAX_LIMIT), { default: () => DEFAULT_LIMIT }),
  offset: Schema.optionalWith(integerParam("offset", 0, Number.MAX_SAFE_INTEGER), { default: () => 0 })
})
