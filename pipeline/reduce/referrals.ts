/**
 * On-chain referrals: every `Hook_ReferralRecorded` (a swap through the hook whose hook data
 * named a referrer) appends one row: market, referrer, trader and the swap's USDC volume.
 *
 * Invariants:
 * - one row per event, never changed afterwards (append-only, keyed by block and log index), so a
 *   reorg deletes exactly the rows above the common ancestor and a replay appends them again;
 * - the event is taken as the hook emitted it: the commission a referrer earns is computed off
 *   chain from these rows (protocol-facts section 5), not here.
 */
import type { DomainEventOf } from "../../schema/domain-events.js"
import type { Located } from "./model.js"
import type { State } from "./state.js"

export const onReferralRecorded = (s: State, e: DomainEventOf<"Hook_ReferralRecorded">, at: Located): void => {
  s.logs.referrals.push({ ...at, marketId: e.marketId, referrer: e.referrer, trader: e.trader, usdcVolume: e.usdcVolume })
}
