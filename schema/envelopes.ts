/**
 * Success envelopes of both layers and the shared pagination parameters.
 *
 * Indexer: a list is `{ data: A[], meta: { limit, offset, count } }` (count = number of matching
 * rows, not only this page); a single item is `{ data: A, meta: null }`.
 * Backend: `{ data, meta: { timestamp, version, reqId? } }`; lists add
 * `meta.pagination { limit, offset, total }`, single items have no list fields at all.
 * Pagination (both layers): `limit` default 20, 1..100; `offset` default 0, 0 or more.
 */
import { Option, ParseResult, Schema, SchemaAST } from "effect"
import { Timestamp } from "./primitives.js"

const count = (description: string) => Schema.NonNegativeInt.annotations({ description })

/** Names an envelope after its item, when the item has an identifier (for OpenAPI components). */
const envelopeAnnotations = (item: Schema.Schema.Any, kind: string, description: string) => {
  const id = Option.getOrUndefined(SchemaAST.getIdentifierAnnotation(item.ast))
  return id === undefined ? { title: kind, description } : { identifier: `${kind}.${id}`, title: `${kind} of ${id}`, description }
}

// ---------------------------------------------------------------------------------------------
// Indexer

/** Meta of an indexer list: the page asked for and the number of matching rows. */
export const IndexerListMeta = Schema.Struct({
  limit: count("page size used"),
  offset: count("number of rows skipped"),
  count: count("number of matching rows in total, not only this page")
}).annotations({ identifier: "IndexerListMeta", title: "Indexer list meta", description: "limit, offset and count of an indexer list" })
export type IndexerListMeta = typeof IndexerListMeta.Type

/** Former name of `IndexerListMeta`. */
export const ListMeta = IndexerListMeta

/** `{ data: A[], meta: { limit, offset, count } }`. */
export const IndexerList = <S extends Schema.Schema.Any>(item: S) =>
  Schema.Struct({ data: Schema.Array(item), meta: IndexerListMeta }).annotations(
    envelopeAnnotations(item, "IndexerList", "indexer list: data holds the page, meta its limit, offset and total count")
  )

/** `{ data: A, meta: null }`. */
export const IndexerItem = <S extends Schema.Schema.Any>(item: S) =>
  Schema.Struct({ data: item, meta: Schema.Null }).annotations(
    envelopeAnnotations(item, "IndexerItem", "indexer single item: data holds it, meta is null")
  )

export const indexerList = <A>(
  data: ReadonlyArray<A>,
  meta: IndexerListMeta
): { readonly data: ReadonlyArray<A>; readonly meta: IndexerListMeta } => ({
  data,
  meta: { limit: meta.limit, offset: meta.offset, count: meta.count }
})

export const indexerItem = <A>(data: A): { readonly data: A; readonly meta: null } => ({ data, meta: null })

// ---------------------------------------------------------------------------------------------
// Backend

/** The value of `meta.version` (spec, Versioning 2). */
export const BACKEND_VERSION = "v2"

/** Meta of every backend answer. */
export const BackendMeta = Schema.Struct({
  timestamp: Timestamp, // unix seconds when the answer was made
  version: Schema.String.annotations({ description: 'API version, "v2"' }),
  reqId: Schema.optional(Schema.String.annotations({ description: "request id (also in the X-Request-Id header)" }))
}).annotations({ identifier: "BackendMeta", title: "Backend meta", description: "timestamp, version and optional request id" })
export type BackendMeta = typeof BackendMeta.Type

/** Pagination of a backend list. */
export const Pagination = Schema.Struct({
  limit: count("page size used"),
  offset: count("number of rows skipped"),
  total: count("number of matching rows in total, not only this page")
}).annotations({ identifier: "Pagination", title: "Pagination", description: "limit, offset and total of a backend list" })
export type Pagination = typeof Pagination.Type

/** Meta of a backend list: the common meta plus `pagination`. */
export const BackendListMeta = Schema.Struct({ ...BackendMeta.fields, pagination: Pagination }).annotations({
  identifier: "BackendListMeta",
  title: "Backend list meta",
  description: "timestamp, version, optional request id, and the list's pagination"
})
export type BackendListMeta = typeof BackendListMeta.Type

/** `{ data: A, meta: { timestamp, version, reqId? } }`. */
export const BackendItem = <S extends Schema.Schema.Any>(item: S) =>
  Schema.Struct({ data: item, meta: BackendMeta }).annotations(
    envelopeAnnotations(item, "BackendItem", "backend single item: data, and meta without list fields")
  )

/** `{ data: A[], meta: { timestamp, version, reqId?, pagination: { limit, offset, total } } }`. */
export const BackendList = <S extends Schema.Schema.Any>(item: S) =>
  Schema.Struct({ data: Schema.Array(item), meta: BackendListMeta }).annotations(
    envelopeAnnotations(item, "BackendList", "backend list: data holds the page, meta.pagination its limit, offset and total")
  )

/** Meta for an answer made at `timestamp` (unix seconds). */
export const backendMeta = (timestamp: number, reqId?: string): BackendMeta =>
  reqId === undefined ? { timestamp, version: BACKEND_VERSION } : { timestamp, version: BACKEND_VERSION, reqId }

export const backendItem = <A>(data: A, meta: BackendMeta): { readonly data: A; readonly meta: BackendMeta } => ({ data, meta })

export const backendList = <A>(
  data: ReadonlyArray<A>,
  meta: BackendMeta,
  pagination: Pagination
): { readonly data: ReadonlyArray<A>; readonly meta: BackendListMeta } => ({ data, meta: { ...meta, pagination } })

// ---------------------------------------------------------------------------------------------
// Pagination query

export const DEFAULT_LIMIT = 20
export const MAX_LIMIT = 100
export const DEFAULT_OFFSET = 0

/** Digits of the largest safe integer (2^53 - 1): a longer string is out of range before any pattern reads it. */
const MAX_SAFE_DIGITS = 16

/**
 * A whole number in [min, max] from a query string. Failures are one sentence naming the
 * parameter and the allowed range: `limit must be between 1 and 100, got 101`, `offset must be a
 * whole number from 0 to 9007199254740991, got "-1"`.
 */
export const integerQueryParam = (name: string, min: number, max: number, description: string) => {
  const range = max === Number.MAX_SAFE_INTEGER ? `from ${min} to ${max}` : `between ${min} and ${max}`
  const shown = (actual: unknown) =>
    typeof actual === "string"
      ? JSON.stringify(actual.length > 90 ? `${actual.slice(0, 87)}...` : actual)
      : Array.isArray(actual)
        ? "several values (give the parameter once)"
        : String(actual)
  const isDigits = (input: string) => input.length <= MAX_SAFE_DIGITS + 1 && /^(0|[1-9][0-9]*)$/.test(input)
  const explain = (actual: unknown): string => {
    if (typeof actual === "string" && actual.length > MAX_SAFE_DIGITS + 1 && /^[1-9]/.test(actual) && !/[^0-9]/.test(actual)) {
      return `${name} must be a whole number ${range}, got ${shown(actual)}, which is too large`
    }
    if (typeof actual === "string" && isDigits(actual)) {
      const value = Number(actual)
      if (value < min || value > max) return `${name} must be ${range}, got ${Number.isSafeInteger(value) ? value : shown(actual)}`
    }
    if (typeof actual === "number") return `${name} must be ${range}, got ${actual}`
    return `${name} must be a whole number ${range}, got ${shown(actual)}`
  }
  return Schema.transformOrFail(
    // Documented as the integer it stands for (the text is its decimal digits, checked in decode):
    // a generated client sends `limit=5` for `limit: 5`.
    Schema.String.annotations({ jsonSchema: { type: "integer", minimum: min, maximum: max } }),
    // OpenAPI takes the parameter's title and description from this side.
    Schema.Int.pipe(Schema.between(min, max, { title: name, description })),
    {
      strict: true,
      decode: (input, _, ast) => {
        const value = Number(input)
        return isDigits(input) && Number.isSafeInteger(value) && value >= min && value <= max
          ? ParseResult.succeed(value)
          : ParseResult.fail(new ParseResult.Type(ast, input, explain(input)))
      },
      encode: (value) => ParseResult.succeed(String(value))
    }
  ).annotations({
    title: name,
    description,
    message: (issue) => ({ message: explain("actual" in issue ? issue.actual : undefined), override: true })
  })
}

/** `limit`: 1..100 from a query string. */
export const LimitParam = integerQueryParam("limit", 1, MAX_LIMIT, `page size, 1 to ${MAX_LIMIT}, default ${DEFAULT_LIMIT}`)

/** `offset`: 0 or more from a query string. */
export const OffsetParam = integerQueryParam("offset", 0, Number.MAX_SAFE_INTEGER, `number of rows to skip, default ${DEFAULT_OFFSET}`)

/** The pagination fields, to spread into an endpoint's own URL-parameter struct. */
export const paginationFields = {
  limit: Schema.optionalWith(LimitParam, { default: () => DEFAULT_LIMIT, exact: true }),
  offset: Schema.optionalWith(OffsetParam, { default: () => DEFAULT_OFFSET, exact: true })
}

/**
 * `limit` (default 20, 1..100) and `offset` (default 0) from query strings. Deliberately without
 * an `identifier`: OpenAPI generation lists URL parameters only from an inline object schema, not
 * from a `$ref`.
 */
export const PaginationQuery = Schema.Struct(paginationFields).annotations({
  title: "Pagination",
  description: `limit (1 to ${MAX_LIMIT}, default ${DEFAULT_LIMIT}) and offset (default ${DEFAULT_OFFSET}) query parameters`
})
export type PaginationQuery = typeof PaginationQuery.Type
