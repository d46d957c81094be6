/**
 * The holder reducer on hand-made Transfer logs: mints and burns through the zero address,
 * holder rows only while positive, supply and holder counts per token.
 */
import { describe, expect, it } from "vitest"
import type { DomainEvent } from "../../schema/domain-events.js"
import { holderKey, ZERO_ADDRESS } from "../../pipeline/reduce/holders.js"
import { marketKey } from "../../pipeline/reduce/markets.js"
import { emptyProtocol, PROTOCOL_KEY } from "../../pipeline/reduce/protocol-totals.js"
import { emptyKeyedRows, emptyState } from "../../pipeline/reduce/state.js"
import { A, fold, rows, type Step } from "./fold.js"

const YES = A(0x10)
const NO = A(0x11)
const alice = A(1)
const bob = A(2)
const created: DomainEvent = {
  _tag: "MarketCreated",
  marketId: 1n,
  creator: alice,
  oracle: A(9),
  yesToken: YES,
  noToken: NO,
  endTime: 2_000_000_000n,
  question: "Q?"
}
const transfer = (token: string, from: string, to: string, value: bigint): Step => ({
  event: { _tag: "Transfer", from, to, value },
  address: token
})

describe("outcome-token holders", () => {
  it("mints, transfers and burns: balances, supply and holder counts, zero address excluded", () => {
    const s = fold([
      created,
      transfer(YES, ZERO_ADDRESS, alice, 10_000_000n),
      transfer(NO, ZERO_ADDRESS, alice, 10_000_000n),
      transfer(YES, alice, bob, 4_000_000n),
      transfer(NO, alice, bob, 10_000_000n), // alice's NO goes to zero: her row leaves
      transfer(YES, bob, ZERO_ADDRESS, 1_000_000n)
    ])
    expect(s.rows.holders.map.get(holderKey(YES, alice))).toEqual({
      token: YES,
      holder: alice,
      marketId: 1n,
      side: "YES",
      balance: 6_000_000n
    })
    expect(s.rows.holders.map.get(holderKey(YES, bob))).toEqual({ token: YES, holder: bob, marketId: 1n, side: "YES", balance: 3_000_000n })
    expect(s.rows.holders.map.get(holderKey(NO, alice))).toBeNull()
    expect(s.rows.holders.map.get(holderKey(NO, bob))).toMatchObject({ side: "NO", balance: 10_000_000n })
    expect(rows(s.rows.holders).some((h) => h.holder === ZERO_ADDRESS)).toBe(false)
    expect(rows(s.rows.outcomeTokens)).toEqual([
      { address: YES, marketId: 1n, side: "YES", supply: 9_000_000n, holders: 2n },
      { address: NO, marketId: 1n, side: "NO", supply: 10_000_000n, holders: 1n }
    ])
  })

  it("ignores transfers of contracts that are not announced outcome tokens, zero values and self-transfers", () => {
    const s = fold([
      created,
      transfer(A(0x99), ZERO_ADDRESS, alice, 5n),
      transfer(YES, ZERO_ADDRESS, alice, 0n),
      transfer(YES, ZERO_ADDRESS, bob, 7n),
      transfer(YES, bob, bob, 7n)
    ])
    expect(rows(s.rows.holders)).toEqual([expect.objectContaining({ holder: bob, balance: 7n })])
    expect(s.rows.outcomeTokens.map.get(YES)).toMatchObject({ supply: 7n, holders: 1n })
  })

  it("a transfer of more than the holder has is an error, not a negative balance", () => {
    expect(() => fold([created, transfer(YES, ZERO_ADDRESS, alice, 5n), transfer(YES, alice, bob, 6n)])).toThrow(/holding 5/)
  })

  it("in a loaded (strict) batch, a row the key collection missed cannot be read or written", () => {
    // The market (absent) and the protocol totals were loaded; its outcome tokens were not.
    const s = { ...emptyState(), rows: emptyKeyedRows(true) }
    s.rows.markets.map.set(marketKey(created.marketId), null)
    s.rows.protocol.map.set(PROTOCOL_KEY, emptyProtocol())
    expect(() => fold([created], s)).toThrow(/outcome_token row .* was not loaded/)
  })
})
