/**
 * Protocol invariants (protocol-facts.md section 9) checked on the derived tables alone, after
 * indexing: what the reducers wrote must agree with itself across tables.
 *
 * - INV-1: an open market (not resolved, not in refund mode) has YES supply == NO supply ==
 *   total collateral; in refund mode refunds burn pairs, so YES == NO == collateral still holds.
 * - A resolved market keeps total collateral == the winning token's supply (redeem burns the
 *   caller's whole balances and takes only the winning amount out of collateral).
 * - Holders: a token's supply is the sum of its holders' balances, and its holder count their number.
 * - Per trade: clobFilled + ammFilled == amountOut.
 * - Event groups: a resolved event has exactly one child market resolved YES, and its children share
 *   its end time.
 * Returns how many markets were checked.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { expect } from "vitest"

export const databaseInvariants = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const markets = yield* sql.unsafe<{
    id: string
    collateral: string
    resolved: boolean
    outcome: boolean | null
    refund: boolean
    yes: string | null
    no: string | null
  }>(`
    select m.id::text, m.total_collateral::text as collateral, m.is_resolved as resolved, m.outcome, m.refund_mode as refund,
      (select supply::text from outcome_token t where t.address = m.yes_token) as yes,
      (select supply::text from outcome_token t where t.address = m.no_token) as no
    from market m order by m.id`)
  for (const m of markets) {
    const yes = m.yes ?? "0"
    const no = m.no ?? "0"
    if (!m.resolved || m.refund) {
      expect(yes, `market ${m.id}: YES supply == NO supply`).toBe(no)
      expect(m.collateral, `market ${m.id}: collateral == supply`).toBe(yes)
    } else {
      expect(m.collateral, `market ${m.id}: collateral == winning supply`).toBe(m.outcome ? yes : no)
    }
  }
  const holders = yield* sql.unsafe<{ address: string }>(`
    select t.address from outcome_token t
    where t.supply <> coalesce((select sum(balance) from token_holder h where h.token = t.address), 0)
       or t.holders <> (select count(*) from token_holder h where h.token = t.address)`)
  expect(holders, "tokens whose holders do not add up").toEqual([])
  const trades = yield* sql.unsafe(`select block_number, log_index from trade where clob_filled + amm_filled <> amount_out`)
  expect(trades, "trades whose fills do not add up").toEqual([])
  const events = yield* sql.unsafe<{ id: string; winners: string; off_time: string }>(`
    select e.id::text,
      (select count(*) from market m where m.id::text in (select jsonb_array_elements_text(e.market_ids)) and m.is_resolved and m.outcome)::text as winners,
      (select count(*) from market m where m.id::text in (select jsonb_array_elements_text(e.market_ids)) and m.end_time <> e.end_time)::text as off_time
    from event_group e where e.state = 'RESOLVED' order by e.id`)
  for (const e of events) {
    expect(e.winners, `event ${e.id}: one winning child`).toBe("1")
    expect(e.off_time, `event ${e.id}: children share its end time`).toBe("0")
  }
  return markets.length
})
