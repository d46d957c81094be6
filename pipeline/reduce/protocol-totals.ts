/**
 * The protocol totals row (protocol_stats, id 1): one keyed row like any other, held in
 * `rows.protocol` under `PROTOCOL_KEY`.
 *
 * Invariant: every state the reducers fold holds it (loaded, or zeros when nothing was indexed
 * yet), so its "before" is never absent: a batch images the zeros, and a revert restores them.
 */
import type { ProtocolRow } from "./model.js"
import { getRow, rowKey, type Rows } from "./rows.js"

export const PROTOCOL_KEY = rowKey(1)

export const emptyProtocol = (): ProtocolRow => ({ id: 1, totalMarkets: 0n, totalVolume: 0n, totalTrades: 0n, totalUsers: 0n })

/** The totals row of a state (see the invariant). */
export const protocolOf = (s: { readonly rows: { readonly protocol: Rows<ProtocolRow> } }): ProtocolRow => {
  const row = getRow(s.rows.protocol, PROTOCOL_KEY, "protocol_stats")
  if (row === undefined) throw new Error("the state holds no protocol_stats row")
  return row
}
