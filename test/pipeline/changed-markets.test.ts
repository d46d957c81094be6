/**
 * The markets a folded batch announces as changed (`pipeline/changed-markets.ts`): a market is
 * named when a row of it was inserted, changed, deleted or appended, and only then; rows that were
 * loaded and left alone, and rows of no market, name nothing.
 */
import { describe, expect, it } from "vitest"
import { changedMarkets } from "../../pipeline/changed-markets.js"
import type { State } from "../../pipeline/reduce/state.js"
import { emptyKeyedRows, emptyLogs } from "../../pipeline/reduce/state.js"

const state = (): State => ({ rows: emptyKeyedRows(false), logs: emptyLogs(), pendingFills: new Map(), moved: new Map() })
const level = (marketId: bigint, amount: bigint) => ({ marketId, side: 0, price: 300_000n, amount, orders: 1 }) as any
const user = (address: string, trades: bigint) => ({ address, trades }) as any

describe("changed markets", () => {
  it("names the markets whose rows a batch inserted, changed, deleted or appended, and no other", () => {
    const before = state()
    before.rows.bookLevels.map.set("1|0|300000", level(1n, 5n)) // left alone
    before.rows.bookLevels.map.set("2|0|300000", level(2n, 5n)) // changed
    before.rows.bookLevels.map.set("3|0|300000", level(3n, 5n)) // deleted
    before.rows.bookLevels.map.set("4|0|300000", null) // inserted
    before.rows.users.map.set("0xaa", user("0xaa", 1n)) // a row of no market, changed
    before.rows.markets.map.set("6", { id: 6n, volume: 0n } as any) // the market row itself, changed
    const after = structuredClone(before)
    after.rows.bookLevels.map.set("2|0|300000", level(2n, 7n))
    after.rows.bookLevels.map.set("3|0|300000", null)
    after.rows.bookLevels.map.set("4|0|300000", level(4n, 1n))
    after.rows.users.map.set("0xaa", user("0xaa", 2n))
    after.rows.markets.map.set("6", { id: 6n, volume: 10n } as any)
    after.logs.trades.push({ marketId: 5n, blockNumber: 1, logIndex: 0 } as any) // appended
    expect([...changedMarkets(before, after)].sort(), "changed, deleted, inserted, appended; the market row by its id").toEqual([
      2n,
      3n,
      4n,
      5n,
      6n
    ])
    expect(changedMarkets(before, structuredClone(before)).size, "a batch that changed nothing names no market").toBe(0)
  })
})
