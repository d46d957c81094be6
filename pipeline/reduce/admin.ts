/**
 * Admin history (append-only) and the current pause state.
 *
 * Invariants:
 * - every admin event appends exactly one history row and history rows never change;
 * - a pause-state row holds the latest pause or unpause of its scope: "global" (diamond
 *   GlobalPaused/GlobalUnpaused), "hook" (Hook_PauseStatusChanged), "exchange" (the exchange's
 *   Paused/Unpaused) or a module id (diamond ModulePaused/ModuleUnpaused). Markets read it
 *   through the `market_pause` view (migration 0004) rather than carrying a copy, so one pause is
 *   one row write, not one per market; the backend's quote reads "hook" and "exchange".
 */
import type { DomainEventOf } from "../../schema/domain-events.js"
import type { Located } from "./model.js"
import { putRow, rowKey } from "./rows.js"
import type { State } from "./state.js"
import type { FeeChangeRow, PauseScope } from "./model-governance.js"

export const pauseKey = (scope: string) => rowKey(scope)

export const onRoleChange = (s: State, e: DomainEventOf<"RoleGranted"> | DomainEventOf<"RoleRevoked">, at: Located): void => {
  s.logs.roleChanges.push({
    ...at,
    role: e.role,
    account: e.account,
    sender: e.sender,
    action: e._tag === "RoleGranted" ? "GRANTED" : "REVOKED"
  })
}

type Pause =
  | DomainEventOf<"GlobalPaused">
  | DomainEventOf<"GlobalUnpaused">
  | DomainEventOf<"ModulePaused">
  | DomainEventOf<"ModuleUnpaused">
  | DomainEventOf<"Hook_PauseStatusChanged">
  | DomainEventOf<"ExchangePaused">
  | DomainEventOf<"ExchangeUnpaused">

const pauseOf = (e: Pause): [PauseScope, string | null, boolean, string | null] => {
  switch (e._tag) {
    case "GlobalPaused":
    case "GlobalUnpaused":
      return ["GLOBAL", null, e._tag === "GlobalPaused", e.account]
    case "ModulePaused":
    case "ModuleUnpaused":
      return ["MODULE", e.moduleId, e._tag === "ModulePaused", e.account]
    case "ExchangePaused":
    case "ExchangeUnpaused":
      return ["EXCHANGE", null, e._tag === "ExchangePaused", e.account]
    case "Hook_PauseStatusChanged":
      return ["HOOK", null, e.paused, null]
  }
}

export const onPause = (s: State, e: Pause, at: Located): void => {
  const [scope, moduleId, paused, account] = pauseOf(e)
  s.logs.pauseChanges.push({ ...at, scope, moduleId, paused, account })
  const key = moduleId ?? scope.toLowerCase()
  putRow(s.rows.pauseStates, pauseKey(key), { scope: key, paused, account, updatedAt: at.timestamp, updatedBlock: at.block }, "pause_state")
}

export const onDiamondCut = (s: State, e: DomainEventOf<"DiamondCut">, at: Located): void => {
  s.logs.diamondCuts.push({ ...at, cuts: e.cuts, init: e.init, data: e.data })
}

type FeeEvent =
  | DomainEventOf<"DefaultRedemptionFeeUpdated">
  | DomainEventOf<"MarketCreationFeeUpdated">
  | DomainEventOf<"FeeRecipientUpdated">
  | DomainEventOf<"PerMarketRedemptionFeeUpdated">

export const onFeeChange = (s: State, e: FeeEvent, at: Located): void => {
  const row = ((): Omit<FeeChangeRow, keyof Located> => {
    switch (e._tag) {
      case "DefaultRedemptionFeeUpdated":
        return {
          kind: "DEFAULT_REDEMPTION_FEE",
          marketId: null,
          previousValue: String(e.previousBps),
          newValue: String(e.newBps),
          overridden: null
        }
      case "MarketCreationFeeUpdated":
        return {
          kind: "MARKET_CREATION_FEE",
          marketId: null,
          previousValue: e.previousFee.toString(),
          newValue: e.newFee.toString(),
          overridden: null
        }
      case "FeeRecipientUpdated":
        return { kind: "FEE_RECIPIENT", marketId: null, previousValue: e.previousRecipient, newValue: e.newRecipient, overridden: null }
      case "PerMarketRedemptionFeeUpdated":
        return {
          kind: "MARKET_REDEMPTION_FEE",
          marketId: e.marketId,
          previousValue: null,
          newValue: String(e.bps),
          overridden: e.overridden
        }
    }
  })()
  s.logs.feeChanges.push({ ...at, ...row })
}

type HookUpgrade = DomainEventOf<"Hook_UpgradeProposed"> | DomainEventOf<"Hook_Upgraded"> | DomainEventOf<"Hook_UpgradeCancelled">

export const onHookUpgrade = (s: State, e: HookUpgrade, at: Located): void => {
  const action = e._tag === "Hook_UpgradeProposed" ? "PROPOSED" : e._tag === "Hook_Upgraded" ? "EXECUTED" : "CANCELLED"
  s.logs.hookUpgrades.push({
    ...at,
    action,
    implementation: e.implementation,
    readyAt: e._tag === "Hook_UpgradeProposed" ? e.readyAt : null
  })
}
