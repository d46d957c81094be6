/**
 * Keyed rows of one mutable table as a batch sees them: loaded from the database, then changed
 * by pure reducers, then written back once (coalesced) by the sink.
 *
 * Invariants:
 * - `map` holds a row, or `null` when the row is known not to exist (loaded absent, or deleted
 *   in this batch). A key the map does not hold was never loaded.
 * - when `strict` (a set loaded for a batch), reading or writing a key that was never loaded
 *   throws: the batch's key collection missed it, and guessing "absent" would overwrite a stored
 *   row or lose its undo image.
 *   Sets built in memory from nothing (reducer tests, whole-chain folds) are not strict.
 * - keys are `rowKey` of the table's key fields, in the table's key order.
 */
export interface Rows<R> {
  readonly strict: boolean
  readonly map: Map<string, R | null>
}

export type KeyPart = string | number | bigint | boolean

/** The in-memory key of a row: its key fields, stringified, joined by "|". */
export const rowKey = (...parts: ReadonlyArray<KeyPart>): string => {
  // A loop, not map + join: this runs several times per event.
  let key = String(parts[0])
  for (let i = 1; i < parts.length; i++) key += `|${parts[i]}`
  return key
}

export const emptyRows = <R>(strict = false): Rows<R> => ({ strict, map: new Map() })

const checkLoaded = (rows: Rows<unknown>, key: string, table: string): void => {
  if (rows.strict && !rows.map.has(key)) throw new Error(`${table} row ${key} was not loaded for this batch`)
}

export const getRow = <R>(rows: Rows<R>, key: string, table: string): R | undefined => {
  checkLoaded(rows, key, table)
  return rows.map.get(key) ?? undefined
}

/** Writes a row; in a strict set its key must have been loaded (its undo image is the loaded row). */
export const putRow = <R>(rows: Rows<R>, key: string, row: R, table: string): void => {
  checkLoaded(rows, key, table)
  rows.map.set(key, row)
}

export const dropRow = <R>(rows: Rows<R>, key: string, table: string): void => {
  checkLoaded(rows, key, table)
  rows.map.set(key, null)
}
