/**
 * The one dispatcher from decoded events to every reducer. Pure, like each reducer it calls.
 *
 * Order within one event: markets.ts runs first, so candles see exactly the
 * price snapshots it appended for this event. Last, every position the event moved is journaled
 * with its source and its state after the event (positions.ts, `recordMoves`; `moveSource`), and
 * the trade and liquidity rows it appended feed the trader totals (trader-activity.ts).
 */
import type { DomainEvent } from "../../schema/domain-events.js"
import { onDiamondCut, onFeeChange, onHookUpgrade, onPause, onRoleChange } from "./admin.js"
import { onInitialize, onModifyLiquidity, onPoolRegistered, onSwap } from "./amm.js"
import { onPriceSnapshot, onTradeVolume } from "./candles.js"
import { onEventCreated, onEventRefundMode, onEventResolved } from "./event-groups.js"
import { onDustRefunded, onTokensCreated, onTransfer } from "./holders.js"
import { reduceEvent, tradeVolume } from "./markets.js"
import type { Located, MoveSource, ProtocolContracts } from "./model.js"
import { onChallengeDelay, onFeedChanged, onFeedRegistered, onOracleApproval, onReport, onReportAdmin } from "./oracles.js"
import { onFeeCollected, onOrderCancelled, onOrderMatched, onOrderPlaced, onTakerFilled } from "./orders.js"
import { recordMoves } from "./positions.js"
import { onReferralRecorded } from "./referrals.js"
import type { State } from "./state.js"
import { onLiquidityAdded, onTraderTrade, tradeRowVolume } from "./trader-activity.js"

export const reduceAll = (s: State, event: DomainEvent, at: Located, protocol: ProtocolContracts): void => {
  const trades = s.logs.trades.length
  const liquidity = s.logs.liquidityEvents.length
  dispatch(s, event, at, protocol)
  // The trader totals count exactly the trade and liquidity rows this event appended.
  for (let i = trades; i < s.logs.trades.length; i++) onTraderTrade(s, s.logs.trades[i]!, tradeRowVolume(s.logs.trades[i]!))
  for (let i = liquidity; i < s.logs.liquidityEvents.length; i++) onLiquidityAdded(s, s.logs.liquidityEvents[i]!)
  if (s.moved.size > 0) recordMoves(s.moved, at, s.logs.positionMoves, moveSource(s, event))
}

/**
 * What kind of share move `event` is for a user whose position it moved. A match moves its
 * maker's position as a maker fill and its taker's as a taker fill; an OrderPlaced moves only the
 * new order's owner (its crossing matches, logged before it: orders.ts), a taker fill.
 */
const moveSource =
  (s: State, event: DomainEvent) =>
  (user: string): MoveSource => {
    switch (event._tag) {
      case "Trade":
        return "router"
      case "OrderMatched":
        return s.logs.matches[s.logs.matches.length - 1]?.maker === user ? "clob_maker" : "clob_taker"
      case "OrderPlaced":
      case "TakerFilled":
        return "clob_taker"
      case "PositionSplit":
        return "split"
      case "PositionMerged":
        return "merge"
      case "TokensRedeemed":
        return "redeem"
      case "MarketRefunded":
        return "refund"
      case "DustRefunded":
        return "dust"
      default:
        return "transfer"
    }
  }

const dispatch = (s: State, event: DomainEvent, at: Located, protocol: ProtocolContracts): void => {
  const snapshots = s.logs.priceSnapshots.length
  reduceEvent(s, event, at, protocol)
  for (let i = snapshots; i < s.logs.priceSnapshots.length; i++) onPriceSnapshot(s, s.logs.priceSnapshots[i]!)
  switch (event._tag) {
    case "MarketCreated":
      return onTokensCreated(s, event)
    case "Trade":
      return onTradeVolume(s, event.marketId, at, tradeVolume(event))
    case "Transfer":
      return onTransfer(s, event, at, protocol)
    case "DustRefunded":
      return onDustRefunded(s, event, protocol)
    case "OrderPlaced":
      return onOrderPlaced(s, event, at, protocol)
    case "OrderMatched":
      return onOrderMatched(s, event, at, protocol)
    case "OrderCancelled":
      return onOrderCancelled(s, event, at)
    case "TakerFilled":
      return onTakerFilled(s, event, at, protocol)
    case "FeeCollected":
      return onFeeCollected(s, event, at)
    case "EventCreated":
      return onEventCreated(s, event, at)
    case "EventResolved":
      return onEventResolved(s, event, at)
    case "EventRefundModeEnabled":
      return onEventRefundMode(s, event, at)
    case "OracleApproved":
    case "OracleRevoked":
      return onOracleApproval(s, event, at)
    case "OutcomeReported":
    case "EventOutcomeReported":
      return onReport(s, event, at)
    case "OutcomeRevoked":
    case "ReportReopened":
    case "EventOutcomeRevoked":
    case "EventReportReopened":
      return onReportAdmin(s, event, at)
    case "ChallengeDelayUpdated":
      return onChallengeDelay(s, event, at)
    case "MarketRegistered":
      return onFeedRegistered(s, event, at)
    case "PriceFeedMarketResolved":
    case "MarketUnregistered":
      return onFeedChanged(s, event, at)
    case "RoleGranted":
    case "RoleRevoked":
      return onRoleChange(s, event, at)
    case "GlobalPaused":
    case "GlobalUnpaused":
    case "ModulePaused":
    case "ModuleUnpaused":
    case "Hook_PauseStatusChanged":
    case "ExchangePaused":
    case "ExchangeUnpaused":
      return onPause(s, event, at)
    case "DiamondCut":
      return onDiamondCut(s, event, at)
    case "DefaultRedemptionFeeUpdated":
    case "MarketCreationFeeUpdated":
    case "FeeRecipientUpdated":
    case "PerMarketRedemptionFeeUpdated":
      return onFeeChange(s, event, at)
    case "Hook_UpgradeProposed":
    case "Hook_Upgraded":
    case "Hook_UpgradeCancelled":
      return onHookUpgrade(s, event, at)
    case "Hook_PoolRegistered":
      return onPoolRegistered(s, event, at)
    case "Initialize":
      return onInitialize(s, event, at)
    case "Swap":
      return onSwap(s, event, at)
    case "ModifyLiquidity":
      return onModifyLiquidity(s, event, at)
    case "Hook_ReferralRecorded":
      return onReferralRecorded(s, event, at)
    default:
      return
  }
}
