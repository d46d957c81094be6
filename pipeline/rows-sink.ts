/**
 * Generic Postgres I/O for the tables of `tables.ts`: load keyed rows, write a batch's changed
 * rows (upserts and deletes), append rows, and the undo images and reorg restore of both kinds.
 *
 * Invariants:
 * - set-based only: one statement per table and kind of write, never a row at a time: COPY for
 *   rows absent before the batch and for appended rows, `unnest` upserts and deletes for the rest;
 * - a keyed row is written (and imaged for undo) only when its encoding differs from the row
 *   loaded at the start of the batch, so untouched rows cost nothing;
 * - an undo entry of a keyed table has `row_key` = the JSON of its key columns and `image` = the
 *   JSON of the whole row before the block (null: it did not exist); `revertKeyed` restores it
 *   with `jsonb_populate_record`, so restore needs no per-table code.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { rowKey, type KeyPart, type Rows } from "./reduce/rows.js"
import { copyField, copyInText, CopyText, escapeText } from "./copy-in.js"
import { codecs, type Codec, type DbValue, type TableDef } from "./tables.js"

export type AnyRow = Readonly<Record<string, unknown>>

const param = (def: TableDef, value: DbValue, column: number): unknown => {
  const codec = def.columns[column]!.codec
  return codec.sql === "jsonb" && value !== null ? JSON.stringify(value) : value
}

/** The row as column values (codec-encoded), in column order. */
export const encodeRow = (def: TableDef, row: AnyRow): ReadonlyArray<DbValue> => def.columns.map((c) => c.codec.encode(row[c.field]))

/**
 * One column's value as COPY text, straight from the row's field: for the common codecs without
 * the intermediate encoded value (`encode` then `copyField`), which is what any other codec
 * gets. Same text either way: `\N` for null, a bigint's decimal digits, a number's `String`,
 * `t`/`f`, escaped text.
 */
const copyFieldOf = (codec: Codec): ((value: unknown) => string) => {
  switch (codec) {
    case codecs.big:
    case codecs.count:
      return (v) => (v === null || v === undefined ? "\\N" : typeof v === "bigint" ? v.toString() : copyField(codec.encode(v)))
    case codecs.int8:
    case codecs.int4:
    case codecs.int2:
      return (v) => (v === null || v === undefined ? "\\N" : typeof v === "number" ? String(v) : copyField(codec.encode(v)))
    case codecs.text:
      return (v) => (v === null || v === undefined ? "\\N" : typeof v === "string" ? escapeText(v) : copyField(codec.encode(v)))
    case codecs.bool:
      return (v) => (v === true ? "t" : v === false ? "f" : copyField(codec.encode(v)))
    default:
      return (v) => copyField(codec.encode(v))
  }
}

const copyLines = new WeakMap<TableDef, (row: AnyRow) => string>()

/**
 * The table's COPY line of a row (its columns in order, tab-separated, newline-ended): the text
 * `copyText([encodeRow(def, row)])` gives, without the encoded row in between. Compiled once per
 * table: the backfill encodes every row it writes through this.
 */
export const copyLineOf = (def: TableDef): ((row: AnyRow) => string) => {
  const known = copyLines.get(def)
  if (known !== undefined) return known
  const fields = def.columns.map((c) => c.field)
  const writers = def.columns.map((c) => copyFieldOf(c.codec))
  const count = fields.length
  const line = (row: AnyRow) => {
    let text = writers[0]!(row[fields[0]!])
    for (let i = 1; i < count; i++) text += `\t${writers[i]!(row[fields[i]!])}`
    return `${text}\n`
  }
  copyLines.set(def, line)
  return line
}

const decodeRow = (def: TableDef, db: Readonly<Record<string, unknown>>): AnyRow =>
  Object.fromEntries(def.columns.map((c) => [c.field, c.codec.decode(db[c.name])]))

const keyColumns = (def: TableDef) => def.key.map((field) => def.columns.find((c) => c.field === field)!)

const keyOfRow = (def: TableDef, row: AnyRow) => rowKey(...def.key.map((f) => row[f] as KeyPart))

const imageOf = (def: TableDef, values: ReadonlyArray<DbValue>) =>
  JSON.stringify(Object.fromEntries(def.columns.map((c, i) => [c.name, values[i]])))

const keyImageOf = (def: TableDef, row: AnyRow) =>
  JSON.stringify(Object.fromEntries(keyColumns(def).map((c) => [c.name, c.codec.encode(row[c.field])])))

/** Column-wise parameter arrays of `rows` (already encoded), cast per column. */
const unnestOf = (def: TableDef, cols: ReadonlyArray<number>, rows: ReadonlyArray<ReadonlyArray<DbValue>>, offset = 0) => ({
  sql: `unnest(${cols.map((c, i) => `$${i + 1 + offset}::${def.columns[c]!.codec.sql}[]`).join(", ")})`,
  params: cols.map((c) => rows.map((r) => param(def, r[c]!, c)))
})

/** The stored rows of `keys` (each its key fields' values, in key order); absent keys are left out. */
export const selectKeyed = (def: TableDef, keys: Iterable<ReadonlyArray<KeyPart>>) =>
  Effect.gen(function* () {
    const kcols = keyColumns(def)
    const kidx = kcols.map((k) => def.columns.indexOf(k))
    const encoded: Array<Array<DbValue>> = []
    for (const parts of keys) {
      const values: Array<DbValue> = def.columns.map(() => null)
      parts.forEach((p, i) => (values[kidx[i]!] = kcols[i]!.codec.encode(p)))
      encoded.push(values)
    }
    if (encoded.length === 0) return []
    const sql = yield* SqlClient.SqlClient
    const u = unnestOf(def, kidx, encoded)
    const names = kcols.map((c) => c.name)
    const found = yield* sql.unsafe<Record<string, unknown>>(
      `select t.* from ${def.sql} t join ${u.sql} as k(${names.join(", ")}) on ${names.map((n) => `t.${n} = k.${n}`).join(" and ")}`,
      u.params
    )
    return found.map((db) => decodeRow(def, db))
  })

/** Loads the rows of `keys` (in-memory key -> key parts); absent keys come back as null. */
export const loadKeyed = (def: TableDef, keys: ReadonlyMap<string, ReadonlyArray<KeyPart>>, strict: boolean) =>
  Effect.gen(function* () {
    const rows: Rows<AnyRow> = { strict, map: new Map() }
    if (keys.size === 0) return rows
    const found = yield* selectKeyed(def, keys.values())
    for (const key of keys.keys()) rows.map.set(key, null)
    for (const row of found) rows.map.set(keyOfRow(def, row), row)
    return rows
  })

export interface UndoEntry {
  readonly table: string
  readonly key: string
  readonly image: string | null
}

/**
 * Two rows equal as stored: scalar fields by value (bigints included), JSON fields by their
 * encoded text. Compared on the rows themselves, so an unchanged row costs no encoding.
 */
export const sameRow = (def: TableDef, a: AnyRow, b: AnyRow) => {
  for (const c of def.columns) {
    const x = a[c.field] ?? null
    const y = b[c.field] ?? null
    if (x === y) continue
    if (c.codec.sql !== "jsonb" || x === null || y === null) return false
    if (JSON.stringify(c.codec.encode(x)) !== JSON.stringify(c.codec.encode(y))) return false
  }
  return true
}

/**
 * Writes the keyed rows that changed between `before` and `after` (key -> row; null or not held:
 * absent) with an upsert, or a delete when the row is gone, and returns their undo entries (none
 * unless `withUndo`). The key type is the caller's: both maps key rows the same way.
 */
export const writeKeyed = <K>(
  def: TableDef,
  before: ReadonlyMap<K, AnyRow | null>,
  after: ReadonlyMap<K, AnyRow | null>,
  withUndo: boolean
) =>
  Effect.gen(function* () {
    const line = copyLineOf(def)
    const inserts = new CopyText()
    const upserts: Array<ReadonlyArray<DbValue>> = []
    const deletes: Array<ReadonlyArray<DbValue>> = []
    const undo: Array<UndoEntry> = []
    for (const [key, row] of after) {
      const old = before.get(key) ?? null
      if (old === null ? row === null : row !== null && sameRow(def, old, row)) continue
      // The old row's values only where they are used: its undo image, or the key of a delete.
      const oldValues = old === null || (!withUndo && row !== null) ? null : encodeRow(def, old)
      if (withUndo)
        undo.push({ table: def.sql, key: keyImageOf(def, (row ?? old)!), image: oldValues === null ? null : imageOf(def, oldValues) })
      if (row === null) deletes.push(oldValues!)
      // Absent before the batch (loaded as absent; the batch holds the checkpoint lock): a plain insert.
      else if (old === null) inserts.add(line(row))
      else upserts.push(encodeRow(def, row))
    }
    yield* writeKeyedRows(def, { inserts, upserts, deletes })
    return undo
  })

/** A keyed table's rows to write, encoded: new, changed (upserted), and gone (by their key columns). */
export interface KeyedWrites {
  /** The new rows as COPY text (`copyLineOf`'s lines; empty for none). */
  readonly inserts: CopyText
  readonly upserts: ReadonlyArray<ReadonlyArray<DbValue>>
  readonly deletes: ReadonlyArray<ReadonlyArray<DbValue>>
}

/** One statement per kind: deletes by key, COPY for new rows, one unnest upsert for the rest. */
export const writeKeyedRows = (def: TableDef, { inserts, upserts, deletes }: KeyedWrites) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const all = def.columns.map((_, i) => i)
    const kidx = keyColumns(def).map((k) => def.columns.indexOf(k))
    const names = def.columns.map((c) => c.name)
    const keyNames = kidx.map((i) => names[i]!)
    if (deletes.length > 0) {
      const u = unnestOf(def, kidx, deletes)
      yield* sql.unsafe(
        `delete from ${def.sql} t using ${u.sql} as k(${keyNames.join(", ")}) where ${keyNames.map((n) => `t.${n} = k.${n}`).join(" and ")}`,
        u.params
      )
    }
    yield* copyInText(def.sql, names, inserts)
    if (upserts.length > 0) {
      const u = unnestOf(def, all, upserts)
      const rest = names.filter((n) => !keyNames.includes(n))
      yield* sql.unsafe(
        `insert into ${def.sql} (${names.join(", ")}) select * from ${u.sql}
         on conflict (${keyNames.join(", ")}) do ${rest.length === 0 ? "nothing" : `update set ${rest.map((n) => `${n} = excluded.${n}`).join(", ")}`}`,
        u.params
      )
    }
  })

/**
 * Writes the keyed rows an in-place fold touched (`touched`: key -> row before the batch;
 * `now`: the rows after it): every touched row still present is written (rows are changed in
 * place, so there is no copy to compare with), absent before -> COPY, present -> upsert; rows
 * gone are deleted by the key columns of the row they were (key fields never change), and their
 * keys added to `gone`.
 */
export const writeTouchedKeyed = <K>(
  def: TableDef,
  touched: ReadonlyMap<K, unknown>,
  now: ReadonlyMap<K, unknown>,
  gone?: Map<K, undefined>
) => {
  const line = copyLineOf(def)
  const inserts = new CopyText()
  const upserts: Array<ReadonlyArray<DbValue>> = []
  const deletes: Array<ReadonlyArray<DbValue>> = []
  for (const [key, old] of touched) {
    const was = (old ?? null) as AnyRow | null
    const row = (now.get(key) ?? null) as AnyRow | null
    if (row === null) {
      gone?.set(key, undefined)
      if (was !== null) deletes.push(encodeRow(def, was))
    } else if (was === null) inserts.add(line(row))
    else upserts.push(encodeRow(def, row))
  }
  return writeKeyedRows(def, { inserts, upserts, deletes })
}

export const appendRows = (def: TableDef, rows: ReadonlyArray<AnyRow>) =>
  Effect.suspend(() => {
    const line = copyLineOf(def)
    const text = new CopyText()
    for (const row of rows) text.add(line(row))
    return copyInText(
      def.sql,
      def.columns.map((c) => c.name),
      text
    )
  })

/**
 * Restores a keyed table to its state at `ancestor`: each row any undone block changed goes back
 * to its image from the first such block (deleted when that image is null).
 */
export const revertKeyed = (def: TableDef, ancestor: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const firsts = `(select distinct on (row_key) row_key, image from undo_log
                      where block_number > $1 and table_name = '${def.sql}' order by row_key, block_number) f`
    const keyNames = keyColumns(def).map((c) => c.name)
    yield* sql.unsafe(
      `delete from ${def.sql} t using (select (jsonb_populate_record(null::"${def.sql}", f.row_key::jsonb)).* from ${firsts}) k
       where ${keyNames.map((n) => `t.${n} = k.${n}`).join(" and ")}`,
      [ancestor]
    )
    yield* sql.unsafe(
      `insert into ${def.sql} select (jsonb_populate_record(null::"${def.sql}", f.image)).* from ${firsts} where f.image is not null`,
      [ancestor]
    )
  })

export const revertAppended = (def: TableDef, ancestor: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`delete from ${def.sql} where block_number > $1`, [ancestor]))
