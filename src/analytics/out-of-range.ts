/**
 * Refusing, in Postgres, a value that does not fit its column's analysis type, and naming it.
 *
 * The COPY's query evaluates `refuse(...)` only for such a value (it is the ELSE of a CASE over
 * the value, never a constant, so the planner cannot fold it). It casts a marked text to numeric,
 * which fails the COPY with Postgres's "invalid input syntax for type numeric: "<text>"", the
 * text carrying the column, the value and the reason as JSON. `valueOutOfRangeOf` turns that
 * error back into the typed `ValueOutOfRange`.
 */
import { ValueOutOfRange } from "./errors.js"

const MARK = "predix-value-out-of-range "

const literal = (text: string) => `'${text.replace(/'/g, "''")}'`

/**
 * A Postgres expression of type `type` that fails, naming `column`, the value (`valueText`, SQL
 * of type text) and the reason (`why`, SQL of type text).
 */
export const refuse = (column: string, valueText: string, why: string, type: string) =>
  `(${literal(MARK)} || json_build_object('column', ${literal(column)}, 'value', ${valueText}, 'why', ${why})::text)::numeric::text::${type}`

/** What `valueOutOfRangeOf` needs of a table's plan (catalog.ts's `TablePlan` is one). */
export interface PlannedTable {
  readonly name: string
  readonly columns: ReadonlyArray<{ readonly name: string; readonly duckType: string }>
}

/** The `ValueOutOfRange` a failed COPY of `plan` reports, or undefined for any other error. */
export const valueOutOfRangeOf = (plan: PlannedTable, error: unknown): ValueOutOfRange | undefined => {
  const message = String((error as Error)?.message ?? "")
  const at = message.indexOf(MARK)
  if (at < 0) return undefined
  let named: { column: string; value: string; why: string }
  try {
    named = JSON.parse(message.slice(at + MARK.length, message.lastIndexOf("}") + 1))
  } catch {
    return undefined
  }
  const { column, value, why } = named
  const type = plan.columns.find((c) => c.name === column)?.duckType ?? "its type"
  return new ValueOutOfRange({
    table: plan.name,
    column,
    value,
    message: `${plan.name}.${column} = ${value} does not fit ${type} (${why})`
  })
}
