/**
 * Which catalog events a recording holds: every log of every block (orphaned ones included,
 * since they were emitted too) decoded by emitting address, counted per catalog entry, with the
 * logs no entry knows counted apart. The fixture test and the devnet summary use it.
 */
import { AddressBook, announcedTokens, decodeLog } from "../../pipeline/decode.js"
import { CATALOG, type CatalogEntry } from "../../schema/catalog.js"
import { readRecords } from "../recording/io.js"

export const entryKey = (entry: Pick<CatalogEntry, "contract" | "variant" | "name" | "indexedCount">) =>
  `${entry.contract}.${entry.name}/${entry.variant}/${entry.indexedCount}`

export interface Coverage {
  /** Logs per catalog entry key (see entryKey); entries never seen are absent. */
  readonly counts: ReadonlyMap<string, number>
  /** Logs of a catalogued contract that no entry of its kinds knows. */
  readonly unknown: number
  /** Logs of contracts outside the catalog (collateral token, faucet, timelock, factory). */
  readonly unrouted: number
  readonly logs: number
  /** Catalog entries of `variant` with no log in the recording. */
  readonly missing: (variant: "spec" | "deployed") => ReadonlyArray<string>
}

export const eventCoverage = async (recording: string): Promise<Coverage> => {
  const counts = new Map<string, number>()
  let book: AddressBook | undefined
  let unknown = 0
  let unrouted = 0
  let logs = 0
  for await (const record of readRecords(recording)) {
    if (record.t === "meta") book = new AddressBook(record.deployment)
    if (record.t !== "block" || book === undefined) continue
    for (const log of record.logs) {
      logs++
      for (const token of announcedTokens(log)) book.watchToken(token)
      const kinds = book.kindsOf(log.address)
      if (kinds === undefined) {
        unrouted++
        continue
      }
      const decoded = decodeLog(kinds, log)
      if (decoded === undefined) unknown++
      else counts.set(entryKey(decoded.entry), (counts.get(entryKey(decoded.entry)) ?? 0) + 1)
    }
  }
  return {
    counts,
    unknown,
    unrouted,
    logs,
    missing: (variant) => CATALOG.filter((e) => e.variant === variant && !counts.has(entryKey(e))).map(entryKey)
  }
}
