/**
 * The markets a folded batch changed: what its commit announces (`markets` of the NOTIFY,
 * `schema/indexed-notify.ts`), so that a listener re-reads only those markets' data.
 *
 * A row belongs to the market its `marketId` field names (the `market` row itself: its `id`); a
 * row of a table with neither belongs to no market. Invariant: every market with a row that the
 * batch inserts, changes, deletes or appends is in the set (the comparison is the writer's own,
 * `sameRow`, so a row the sink writes is a row counted here); rows it merely loaded are not.
 */
import type { State } from "./reduce/state.js"
import { KEYED_NAMES, LOG_NAMES } from "./reduce/state.js"
import { sameRow, type AnyRow } from "./rows-sink.js"
import { KEYED_TABLES } from "./tables.js"

/** The market a row of table `name` belongs to, if any. */
const marketOf = (name: string, row: AnyRow): bigint | undefined => {
  const id = name === "markets" ? row["id"] : row["marketId"]
  return typeof id === "bigint" ? id : undefined
}

/** The markets whose rows differ between `before` (the batch's rows as loaded) and `after` (folded). */
export const changedMarkets = (before: State, after: State): ReadonlySet<bigint> => {
  const markets = new Set<bigint>()
  for (const name of KEYED_NAMES) {
    const def = KEYED_TABLES[name]
    const was = before.rows[name].map as ReadonlyMap<string, AnyRow | null>
    for (const [key, row] of after.rows[name].map as ReadonlyMap<string, AnyRow | null>) {
      const old = was.get(key) ?? null
      const either = row ?? old
      if (either === null) continue
      const market = marketOf(name, either)
      if (market === undefined || markets.has(market)) continue
      if (old === null || row === null || !sameRow(def, old, row)) markets.add(market)
    }
  }
  for (const name of LOG_NAMES)
    for (const row of after.logs[name] as unknown as ReadonlyArray<AnyRow>) {
      const market = marketOf(name, row)
      if (market !== undefined) markets.add(market)
    }
  return markets
}
