/**
 * Event groups, oracles and admin history on hand-made events.
 */
import { describe, expect, it } from "vitest"
import type { DomainEvent } from "../../schema/domain-events.js"
import { eventGroupKey } from "../../pipeline/reduce/event-groups.js"
import { feedMarketKey, reportKey } from "../../pipeline/reduce/oracles.js"
import { A, fold, H, rows } from "./fold.js"

const admin = A(0xad)
const MANUAL = A(0x0c1)
const FEED_ORACLE = A(0x0c2)
const MARKET_MODULE = "0xebe5e1b4e81c19df2eae56464f20c171ff4cc84e0e7a45fb50315f3ef189da73"

const eventCreated = (id: bigint): DomainEvent => ({
  _tag: "EventCreated",
  eventId: id,
  creator: A(1),
  endTime: 1_800_000_000n,
  name: `E${id}`,
  marketIds: [3n, 4n, 5n],
  oracle: null
})

describe("event groups", () => {
  it("created, then resolved with the deployed winning index; a later refund changes nothing", () => {
    const s = fold([
      eventCreated(1n),
      { _tag: "EventResolved", eventId: 1n, winningIndex: 2n, resolver: admin },
      { _tag: "EventRefundModeEnabled", eventId: 1n, enabler: admin }
    ])
    expect(s.rows.eventGroups.map.get(eventGroupKey(1n))).toEqual({
      id: 1n,
      name: "E1",
      creator: A(1),
      endTime: 1_800_000_000n,
      marketIds: [3n, 4n, 5n],
      oracle: null,
      winningIndex: 2n,
      state: "RESOLVED",
      resolver: admin,
      closedAt: 1_700_000_102,
      createdAt: 1_700_000_101,
      createdBlock: 101,
      createdTx: H(101)
    })
  })

  it("refund mode (spec form without enabler), and the spec EventResolved without a winning index", () => {
    const s = fold([
      eventCreated(1n),
      eventCreated(2n),
      { _tag: "EventRefundModeEnabled", eventId: 1n, enabler: null },
      { _tag: "EventResolved", eventId: 2n, winningIndex: null, resolver: admin }
    ])
    expect(s.rows.eventGroups.map.get(eventGroupKey(1n))).toMatchObject({
      state: "REFUND",
      resolver: null,
      closedAt: 1_700_000_103,
      winningIndex: null
    })
    expect(s.rows.eventGroups.map.get(eventGroupKey(2n))).toMatchObject({ state: "RESOLVED", winningIndex: null })
  })

  it("an event created twice or closed before creation is an error", () => {
    expect(() => fold([eventCreated(1n), eventCreated(1n)])).toThrow(/created twice/)
    expect(() => fold([{ _tag: "EventResolved", eventId: 9n, winningIndex: 0n, resolver: admin }])).toThrow(/unknown event 9/)
  })
})

describe("oracles", () => {
  it("approved set follows the latest approve or revoke, every change logged", () => {
    const s = fold([
      { _tag: "OracleApproved", oracle: MANUAL },
      { _tag: "OracleApproved", oracle: FEED_ORACLE },
      { _tag: "OracleRevoked", oracle: MANUAL }
    ])
    expect(rows(s.rows.approvedOracles).map((r) => [r.oracle, r.approved, r.updatedBlock])).toEqual([
      [MANUAL, false, 103],
      [FEED_ORACLE, true, 102]
    ])
    expect(s.logs.oracleApprovals.map((r) => [r.oracle, r.approved])).toEqual([
      [MANUAL, true],
      [FEED_ORACLE, true],
      [MANUAL, false]
    ])
  })

  it("manual reports: finalizesAt snapshots the challenge delay; revoke and reopen; event reports per oracle contract", () => {
    const s = fold([
      { event: { _tag: "OutcomeReported", marketId: 7n, outcome: true, reporter: A(2) }, address: MANUAL },
      { event: { _tag: "ChallengeDelayUpdated", previous: 0n, current: 3600n }, address: MANUAL },
      { event: { _tag: "EventOutcomeReported", eventId: 2n, winningIndex: 1n, reporter: A(2) }, address: MANUAL },
      { event: { _tag: "OutcomeRevoked", marketId: 7n, admin }, address: MANUAL },
      { event: { _tag: "EventReportReopened", eventId: 2n, admin }, address: MANUAL }
    ])
    expect(s.rows.reports.map.get(reportKey(MANUAL, "market", 7n))).toEqual({
      oracle: MANUAL,
      subject: "market",
      subjectId: 7n,
      state: "REVOKED",
      outcome: true,
      winningIndex: null,
      reporter: A(2),
      reportedAt: 1_700_000_101,
      finalizesAt: 1_700_000_101n,
      admin,
      updatedAt: 1_700_000_104,
      updatedBlock: 104
    })
    expect(s.rows.reports.map.get(reportKey(MANUAL, "event", 2n))).toMatchObject({
      state: "REOPENED",
      winningIndex: 1n,
      reportedAt: 1_700_000_103,
      finalizesAt: 1_700_000_103n + 3600n,
      admin
    })
    expect(s.rows.manualOracles.map.get(MANUAL)).toEqual({ address: MANUAL, challengeDelay: 3600n })
    expect(s.logs.oracleActions.map((a) => [a.action, a.subject, a.subjectId, a.account, a.challengeDelay])).toEqual([
      ["REPORTED", "market", 7n, A(2), null],
      ["CHALLENGE_DELAY", null, null, null, 3600n],
      ["REPORTED", "event", 2n, A(2), null],
      ["REVOKED", "market", 7n, admin, null],
      ["REOPENED", "event", 2n, admin, null]
    ])
  })

  it("price-feed markets: registered, resolved (signed price), unregistered; unknown markets ignored", () => {
    const s = fold([
      {
        event: { _tag: "MarketRegistered", marketId: 1n, feed: A(0xfeed), threshold: -5n, gte: true, snapshotAt: 1_800_000_000n },
        address: FEED_ORACLE
      },
      {
        event: {
          _tag: "MarketRegistered",
          marketId: 2n,
          feed: A(0xfeed),
          threshold: 300_000_000_000n,
          gte: false,
          snapshotAt: 1_800_000_000n
        },
        address: FEED_ORACLE
      },
      { event: { _tag: "PriceFeedMarketResolved", marketId: 1n, price: -3n, outcome: true }, address: FEED_ORACLE },
      { event: { _tag: "MarketUnregistered", marketId: 2n }, address: FEED_ORACLE },
      { event: { _tag: "MarketUnregistered", marketId: 3n }, address: FEED_ORACLE }
    ])
    expect(s.rows.feedMarkets.map.get(feedMarketKey(FEED_ORACLE, 1n))).toEqual({
      oracle: FEED_ORACLE,
      marketId: 1n,
      feed: A(0xfeed),
      threshold: -5n,
      gte: true,
      snapshotAt: 1_800_000_000n,
      state: "RESOLVED",
      price: -3n,
      outcome: true,
      registeredAt: 1_700_000_101,
      updatedAt: 1_700_000_103,
      updatedBlock: 103
    })
    expect(s.rows.feedMarkets.map.get(feedMarketKey(FEED_ORACLE, 2n))).toMatchObject({ state: "UNREGISTERED", price: null, outcome: null })
    expect(rows(s.rows.feedMarkets)).toHaveLength(2)
  })
})

describe("admin history and pause state", () => {
  it("appends one row per admin event and keeps the latest pause per scope", () => {
    const s = fold([
      { _tag: "RoleGranted", role: H(1), account: A(3), sender: admin },
      { _tag: "RoleRevoked", role: H(1), account: A(3), sender: admin },
      { _tag: "GlobalPaused", account: admin },
      { _tag: "ModulePaused", moduleId: MARKET_MODULE, account: admin },
      { _tag: "GlobalUnpaused", account: admin },
      { _tag: "Hook_PauseStatusChanged", paused: true },
      { _tag: "DiamondCut", cuts: [{ facetAddress: A(0xfa), action: 0, functionSelectors: ["0x12345678"] }], init: A(0), data: "0x" },
      { _tag: "DefaultRedemptionFeeUpdated", previousBps: 0, newBps: 200 },
      { _tag: "MarketCreationFeeUpdated", previousFee: 0n, newFee: 10_000_000n },
      { _tag: "FeeRecipientUpdated", previousRecipient: A(4), newRecipient: A(5) },
      { _tag: "PerMarketRedemptionFeeUpdated", marketId: 9n, bps: 150, overridden: true },
      { _tag: "Hook_UpgradeProposed", implementation: A(0x1e), readyAt: 1_700_200_000n },
      { _tag: "Hook_UpgradeCancelled", implementation: A(0x1e) },
      { _tag: "Hook_Upgraded", implementation: A(0x1f) }
    ])
    expect(s.logs.roleChanges.map((r) => [r.role, r.account, r.sender, r.action])).toEqual([
      [H(1), A(3), admin, "GRANTED"],
      [H(1), A(3), admin, "REVOKED"]
    ])
    expect(s.logs.pauseChanges.map((r) => [r.scope, r.moduleId, r.paused])).toEqual([
      ["GLOBAL", null, true],
      ["MODULE", MARKET_MODULE, true],
      ["GLOBAL", null, false],
      ["HOOK", null, true]
    ])
    expect(rows(s.rows.pauseStates).map((r) => [r.scope, r.paused, r.updatedBlock])).toEqual([
      ["global", false, 105],
      [MARKET_MODULE, true, 104],
      ["hook", true, 106]
    ])
    expect(s.logs.diamondCuts).toEqual([
      expect.objectContaining({
        cuts: [{ facetAddress: A(0xfa), action: 0, functionSelectors: ["0x12345678"] }],
        init: A(0),
        data: "0x",
        block: 107
      })
    ])
    expect(s.logs.feeChanges.map((r) => [r.kind, r.marketId, r.previousValue, r.newValue, r.overridden])).toEqual([
      ["DEFAULT_REDEMPTION_FEE", null, "0", "200", null],
      ["MARKET_CREATION_FEE", null, "0", "10000000", null],
      ["FEE_RECIPIENT", null, A(4), A(5), null],
      ["MARKET_REDEMPTION_FEE", 9n, null, "150", true]
    ])
    expect(s.logs.hookUpgrades.map((r) => [r.action, r.implementation, r.readyAt])).toEqual([
      ["PROPOSED", A(0x1e), 1_700_200_000n],
      ["CANCELLED", A(0x1e), null],
      ["EXECUTED", A(0x1f), null]
    ])
  })

  it("the exchange's pause: scope EXCHANGE in the history, the latest of pause and unpause under 'exchange'", () => {
    const s = fold([
      { _tag: "ExchangePaused", account: admin },
      { _tag: "Hook_PauseStatusChanged", paused: true },
      { _tag: "ExchangeUnpaused", account: admin },
      { _tag: "ExchangePaused", account: A(7) }
    ])
    expect(s.logs.pauseChanges.map((r) => [r.scope, r.moduleId, r.paused, r.account, r.block])).toEqual([
      ["EXCHANGE", null, true, admin, 101],
      ["HOOK", null, true, null, 102],
      ["EXCHANGE", null, false, admin, 103],
      ["EXCHANGE", null, true, A(7), 104]
    ])
    expect(rows(s.rows.pauseStates).map((r) => [r.scope, r.paused, r.account, r.updatedBlock])).toEqual([
      ["exchange", true, A(7), 104],
      ["hook", true, null, 102]
    ])
  })
})
