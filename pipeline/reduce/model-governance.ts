/**
 * The rows of the governance reducers: event groups, oracles, admin history and pause state (see
 * `model.ts`). Types only.
 */
import type { Located } from "./model.js"

// Event groups (event-groups.ts)

export type EventGroupState = "CREATED" | "RESOLVED" | "REFUND"

export interface EventGroupRow {
  readonly id: bigint
  readonly name: string
  readonly creator: string
  readonly endTime: bigint
  readonly marketIds: ReadonlyArray<bigint>
  readonly oracle: string | null
  winningIndex: bigint | null
  state: EventGroupState
  resolver: string | null
  closedAt: number | null
  readonly createdAt: number
  readonly createdBlock: number
  readonly createdTx: string
}

// Oracles (oracles.ts)

export interface ApprovedOracleRow {
  readonly oracle: string
  approved: boolean
  updatedAt: number
  updatedBlock: number
}

export interface OracleApprovalRow extends Located {
  readonly oracle: string
  readonly approved: boolean
}

export interface ManualOracleRow {
  readonly address: string
  challengeDelay: bigint
}

export type ReportSubject = "market" | "event"

export type ReportState = "REPORTED" | "REVOKED" | "REOPENED"

export interface ManualReportRow {
  readonly oracle: string
  readonly subject: ReportSubject
  readonly subjectId: bigint
  state: ReportState
  outcome: boolean | null
  winningIndex: bigint | null
  reporter: string | null
  reportedAt: number | null
  finalizesAt: bigint | null
  /** Admin of the last revoke or reopen. */
  admin: string | null
  updatedAt: number
  updatedBlock: number
}

export type OracleAction = "REPORTED" | "REVOKED" | "REOPENED" | "CHALLENGE_DELAY"

export interface OracleActionRow extends Located {
  readonly oracle: string
  readonly action: OracleAction
  readonly subject: ReportSubject | null
  readonly subjectId: bigint | null
  readonly outcome: boolean | null
  readonly winningIndex: bigint | null
  /** Reporter or admin. */
  readonly account: string | null
  /** New challenge delay (CHALLENGE_DELAY only). */
  readonly challengeDelay: bigint | null
}

export type FeedMarketState = "REGISTERED" | "RESOLVED" | "UNREGISTERED"

export interface FeedMarketRow {
  readonly oracle: string
  readonly marketId: bigint
  feed: string
  threshold: bigint
  gte: boolean
  snapshotAt: bigint
  state: FeedMarketState
  price: bigint | null
  outcome: boolean | null
  registeredAt: number
  updatedAt: number
  updatedBlock: number
}

// Admin history and pause state (admin.ts)

export interface RoleChangeRow extends Located {
  readonly role: string
  readonly account: string
  readonly sender: string
  readonly action: "GRANTED" | "REVOKED"
}

export type PauseScope = "GLOBAL" | "MODULE" | "HOOK" | "EXCHANGE"

export interface PauseChangeRow extends Located {
  readonly scope: PauseScope
  readonly moduleId: string | null
  readonly paused: boolean
  readonly account: string | null
}

export interface PauseStateRow {
  /** "global", "hook", "exchange" or the module id. */
  readonly scope: string
  paused: boolean
  account: string | null
  updatedAt: number
  updatedBlock: number
}

export interface DiamondCutRow extends Located {
  /** [{ facetAddress, action, functionSelectors }] as JSON. */
  readonly cuts: ReadonlyArray<{
    readonly facetAddress: string
    readonly action: number
    readonly functionSelectors: ReadonlyArray<string>
  }>
  readonly init: string
  readonly data: string
}

export type FeeKind = "DEFAULT_REDEMPTION_FEE" | "MARKET_CREATION_FEE" | "FEE_RECIPIENT" | "MARKET_REDEMPTION_FEE"

export interface FeeChangeRow extends Located {
  readonly kind: FeeKind
  readonly marketId: bigint | null
  /** Previous and new value as text: basis points, a raw USDC amount or an address. Null when the event does not say. */
  readonly previousValue: string | null
  readonly newValue: string
  readonly overridden: boolean | null
}

export interface HookUpgradeRow extends Located {
  readonly action: "PROPOSED" | "EXECUTED" | "CANCELLED"
  readonly implementation: string
  readonly readyAt: bigint | null
}
