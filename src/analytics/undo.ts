/**
 * How the undo log names and images the rows of each mutable table, so that a snapshot can read
 * a mutable table as it stood at the finalized block while the pipeline has already written the
 * unfinalized blocks on top of it.
 *
 * The undo log (see pipeline/sink.ts) holds, for every unfinalized block b and every row b
 * changed, the row as it was before b (null: it did not exist). So the row as of the finalized
 * block F is the image of the FIRST undo entry above F for its key, and rows without an entry
 * above F are unchanged since F. Every mutable table has one format (`pipeline/rows-sink.ts`,
 * driven by the descriptors of `pipeline/tables.ts`): row_key is a JSON object of the key columns
 * and the image a JSON object of every column, both by column name.
 *
 * Invariant: a table missing here whose name appears in the undo log above F makes the
 * finalized export fail (`UnknownUndoTable`) rather than export tip rows as if final.
 */
import { MUTABLE_TABLES } from "../../pipeline/tables.js"
import { quoteIdent } from "./columns.js"

export interface UndoRule {
  /** SQL over `f` (an undo_log row): the parts of the row's key. */
  readonly undoKey: (columnType: (column: string) => string) => ReadonlyArray<string>
  /** SQL over `t` (a table row): the same parts. */
  readonly rowKey: ReadonlyArray<string>
  /** SQL over `f.image`: the value of `column` (of Postgres type `pgType`) in the image. */
  readonly imageColumn: (column: string, pgType: string) => string
}

const literal = (text: string) => `'${text.replace(/'/g, "''")}'`

const fromJson = (source: string, field: string, pgType: string) =>
  pgType === "jsonb" || pgType === "json" ? `(${source}->${literal(field)})::${pgType}` : `(${source}->>${literal(field)})::${pgType}`

/** A descriptor table: JSON key and image by column name (`rows-sink.ts`). */
const descriptorRow = (keyColumns: ReadonlyArray<string>): UndoRule => ({
  undoKey: (columnType) => keyColumns.map((c) => fromJson("f.row_key::jsonb", c, columnType(c))),
  rowKey: keyColumns.map((c) => `t.${quoteIdent(c)}`),
  imageColumn: (column, pgType) => fromJson("f.image", column, pgType)
})

export const UNDO_RULES: Readonly<Record<string, UndoRule>> = Object.fromEntries(
  MUTABLE_TABLES.map((def) => [def.sql, descriptorRow(def.key.map((field) => def.columns.find((c) => c.field === field)!.name))])
)
