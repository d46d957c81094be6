/**
 * Statements Postgres should parse and plan once per connection instead of on every run: the
 * texts of the hot read paths (a portfolio, a quote), marked here by the module that owns them.
 * The service's pool (`src/db/database.ts`) sends a marked text as a named prepared statement, so
 * each connection parses it once and, after Postgres' first few executions, reuses one generic
 * plan; every other text goes as an unnamed statement, parsed and planned each time.
 *
 * Invariants: a name stands for one text for the life of the process (names are never reused),
 * and only fixed texts are marked (values are always parameters), so the statements a connection
 * keeps are bounded by the number of marked texts in the code, whatever the requests.
 */
const names = new Map<string, string>()

/** Marks `text` as a prepared statement and gives it back (for a module-level constant). */
export const prepared = (text: string): string => {
  if (!names.has(text)) names.set(text, `predix_${names.size + 1}`)
  return text
}

/** The statement name of a marked text, undefined for any other. */
export const preparedName = (text: string): string | undefined => names.get(text)
