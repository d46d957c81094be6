/**
 * Referrals (Hook_ReferralRecorded) on hand-made events: one append-only row per event, in chain
 * order, with its location; nothing else changes. The sink test (sink.test.ts) covers a reorg of
 * the `referral` table on Postgres.
 */
import { describe, expect, it } from "vitest"
import type { DomainEvent } from "../../schema/domain-events.js"
import { emptyState } from "../../pipeline/reduce/state.js"
import { A, fold, H } from "./fold.js"

const referral = (referrer: string, trader: string, usdcVolume: bigint, marketId = 1n): DomainEvent => ({
  _tag: "Hook_ReferralRecorded",
  marketId,
  referrer,
  trader,
  usdcVolume
})

describe("referrals", () => {
  it("every event appends one row with where it sits; repeats are kept (each referred swap counts)", () => {
    const s = fold([
      referral(A(1), A(2), 10_000_000n),
      { event: referral(A(1), A(2), 2_500_000n, 3n), block: 101 },
      referral(A(4), A(3), 1n)
    ])
    expect(s.logs.referrals).toEqual([
      {
        block: 101,
        logIndex: 0,
        txHash: H(101),
        timestamp: 1_700_000_101,
        address: A(0xd1a),
        marketId: 1n,
        referrer: A(1),
        trader: A(2),
        usdcVolume: 10_000_000n
      },
      {
        block: 101,
        logIndex: 1,
        txHash: H(101),
        timestamp: 1_700_000_101,
        address: A(0xd1a),
        marketId: 3n,
        referrer: A(1),
        trader: A(2),
        usdcVolume: 2_500_000n
      },
      {
        block: 102,
        logIndex: 0,
        txHash: H(102),
        timestamp: 1_700_000_102,
        address: A(0xd1a),
        marketId: 1n,
        referrer: A(4),
        trader: A(3),
        usdcVolume: 1n
      }
    ])
  })

  it("a referral touches no other table (no market, position or user row appears)", () => {
    const s = fold([referral(A(1), A(2), 10_000_000n)])
    const empty = emptyState()
    expect(s.rows).toEqual(empty.rows)
    expect(Object.entries(s.logs).filter(([name, rows]) => name !== "referrals" && rows.length > 0)).toEqual([])
  })
})
