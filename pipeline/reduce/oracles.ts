/**
 * Oracles: the diamond's approved-oracle set, the manual oracle's reports, and the price-feed
 * oracle's market registrations. Rows are per emitting oracle contract (`at.address`), since the
 * API asks for them per contract.
 *
 * Invariants:
 * - an approved-oracle row carries the latest OracleApproved/OracleRevoked of that oracle; every
 *   change is also appended to `oracleApprovals`;
 * - a manual report row is the current report of one subject (market or event) at one oracle:
 *   REPORTED by OutcomeReported / EventOutcomeReported, REVOKED or REOPENED by the admin events;
 *   its `finalizesAt` is the report time plus the oracle's challenge delay at report time
 *   (a later ChallengeDelayUpdated does not move reports already made). Every action is also
 *   appended to `oracleActions`;
 * - a price-feed market row is REGISTERED, then RESOLVED (price and outcome set) or UNREGISTERED.
 */
import type { DomainEventOf } from "../../schema/domain-events.js"
import type { Located } from "./model.js"
import { getRow, putRow, rowKey } from "./rows.js"
import type { State } from "./state.js"
import type { OracleActionRow, ReportState, ReportSubject } from "./model-governance.js"

export const approvedOracleKey = (oracle: string) => rowKey(oracle)
export const manualOracleKey = (oracle: string) => rowKey(oracle)
export const reportKey = (oracle: string, subject: ReportSubject, id: bigint) => rowKey(oracle, subject, id)
export const feedMarketKey = (oracle: string, marketId: bigint) => rowKey(oracle, marketId)

export const onOracleApproval = (s: State, e: DomainEventOf<"OracleApproved"> | DomainEventOf<"OracleRevoked">, at: Located): void => {
  const approved = e._tag === "OracleApproved"
  const key = approvedOracleKey(e.oracle)
  const row = getRow(s.rows.approvedOracles, key, "approved_oracle")
  if (row === undefined)
    putRow(s.rows.approvedOracles, key, { oracle: e.oracle, approved, updatedAt: at.timestamp, updatedBlock: at.block }, "approved_oracle")
  else Object.assign(row, { approved, updatedAt: at.timestamp, updatedBlock: at.block })
  s.logs.oracleApprovals.push({ ...at, oracle: e.oracle, approved })
}

const challengeDelayOf = (s: State, oracle: string): bigint =>
  getRow(s.rows.manualOracles, manualOracleKey(oracle), "manual_oracle")?.challengeDelay ?? 0n

const action = (s: State, at: Located, fields: Omit<OracleActionRow, keyof Located | "oracle">): void => {
  s.logs.oracleActions.push({ ...at, oracle: at.address, ...fields })
}

type Report = DomainEventOf<"OutcomeReported"> | DomainEventOf<"EventOutcomeReported">
type AdminAction =
  | DomainEventOf<"OutcomeRevoked">
  | DomainEventOf<"ReportReopened">
  | DomainEventOf<"EventOutcomeRevoked">
  | DomainEventOf<"EventReportReopened">

export const onReport = (s: State, e: Report, at: Located): void => {
  const [subject, id, outcome, winningIndex] =
    e._tag === "OutcomeReported"
      ? (["market", e.marketId, e.outcome, null] as const)
      : (["event", e.eventId, null, e.winningIndex] as const)
  const finalizesAt = BigInt(at.timestamp) + challengeDelayOf(s, at.address)
  putRow(
    s.rows.reports,
    reportKey(at.address, subject, id),
    {
      oracle: at.address,
      subject,
      subjectId: id,
      state: "REPORTED",
      outcome,
      winningIndex,
      reporter: e.reporter,
      reportedAt: at.timestamp,
      finalizesAt,
      admin: null,
      updatedAt: at.timestamp,
      updatedBlock: at.block
    },
    "manual_report"
  )
  action(s, at, { action: "REPORTED", subject, subjectId: id, outcome, winningIndex, account: e.reporter, challengeDelay: null })
}

/** A revoke or reopen; one of a subject never reported still leaves its row and log entry. */
export const onReportAdmin = (s: State, e: AdminAction, at: Located): void => {
  const subject: ReportSubject = e._tag === "OutcomeRevoked" || e._tag === "ReportReopened" ? "market" : "event"
  const id = "marketId" in e ? e.marketId : e.eventId
  const state: ReportState = e._tag === "OutcomeRevoked" || e._tag === "EventOutcomeRevoked" ? "REVOKED" : "REOPENED"
  const key = reportKey(at.address, subject, id)
  const row = getRow(s.rows.reports, key, "manual_report")
  if (row === undefined) {
    putRow(
      s.rows.reports,
      key,
      {
        oracle: at.address,
        subject,
        subjectId: id,
        state,
        outcome: null,
        winningIndex: null,
        reporter: null,
        reportedAt: null,
        finalizesAt: null,
        admin: e.admin,
        updatedAt: at.timestamp,
        updatedBlock: at.block
      },
      "manual_report"
    )
  } else Object.assign(row, { state, admin: e.admin, updatedAt: at.timestamp, updatedBlock: at.block })
  action(s, at, { action: state, subject, subjectId: id, outcome: null, winningIndex: null, account: e.admin, challengeDelay: null })
}

export const onChallengeDelay = (s: State, e: DomainEventOf<"ChallengeDelayUpdated">, at: Located): void => {
  putRow(s.rows.manualOracles, manualOracleKey(at.address), { address: at.address, challengeDelay: e.current }, "manual_oracle")
  action(s, at, {
    action: "CHALLENGE_DELAY",
    subject: null,
    subjectId: null,
    outcome: null,
    winningIndex: null,
    account: null,
    challengeDelay: e.current
  })
}

export const onFeedRegistered = (s: State, e: DomainEventOf<"MarketRegistered">, at: Located): void => {
  putRow(
    s.rows.feedMarkets,
    feedMarketKey(at.address, e.marketId),
    {
      oracle: at.address,
      marketId: e.marketId,
      feed: e.feed,
      threshold: e.threshold,
      gte: e.gte,
      snapshotAt: e.snapshotAt,
      state: "REGISTERED",
      price: null,
      outcome: null,
      registeredAt: at.timestamp,
      updatedAt: at.timestamp,
      updatedBlock: at.block
    },
    "price_feed_market"
  )
}

export const onFeedChanged = (
  s: State,
  e: DomainEventOf<"PriceFeedMarketResolved"> | DomainEventOf<"MarketUnregistered">,
  at: Located
): void => {
  const row = getRow(s.rows.feedMarkets, feedMarketKey(at.address, e.marketId), "price_feed_market")
  if (row === undefined) return
  if (e._tag === "PriceFeedMarketResolved") Object.assign(row, { state: "RESOLVED", price: e.price, outcome: e.outcome })
  else row.state = "UNREGISTERED"
  row.updatedAt = at.timestamp
  row.updatedBlock = at.block
}
