/**
 * Events, oracles, the admin histories, stats and health against the indexed fixture.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startHarness, type Harness } from "./support/harness.js"

let api: Harness
beforeAll(async () => {
  api = await startHarness()
}, 120_000)
afterAll(async () => {
  await api?.close()
})

const six = (raw: bigint | string | number): string => {
  const value = BigInt(raw)
  const digits = value.toString().padStart(7, "0")
  return `${digits.slice(0, -6)}.${digits.slice(-6)}`
}

const MANUAL_ORACLE = "0xa51c1fc2f0d1a1b8494ed1fe312d7c3a78ed91c0"
const FEED_ORACLE = "0x9a676e781a523b5d0c0e43731313a708cb607508"

describe("GET /api/events and /api/events/{eventId}", () => {
  it("gives the resolved event with its marketIds and the winning index of the market resolved YES", async () => {
    const members = await api.sql(`select id::text as id, outcome, volume::text as v from market where id in (23, 24, 25, 26) order by id`)
    const winner = members.findIndex((m) => m["outcome"] === true)
    const answer = await api.get("/api/events/1")
    expect(answer.body.meta).toBeNull()
    expect(answer.body.data).toMatchObject({
      id: "1",
      name: "Who wins the 2026 league final?",
      marketIds: ["23", "24", "25", "26"],
      marketCount: 4,
      state: "RESOLVED",
      status: "resolved",
      isResolved: true,
      winningIndex: String(winner),
      winningMarketId: members[winner]!["id"],
      totalVolume: six(members.reduce((sum, m) => sum + BigInt(m["v"]), 0n)),
      metadata: { slug: "league-final-2026-winner", category: "sports", featured: true }
    })
    expect(answer.body.data.winningMarketId).toBe("25")
    expect(answer.body.data.metadata.title).toMatchObject({ en: "Who wins the 2026 league final?" })
    expect(Object.keys(answer.body.data.metadata.title).sort()).toEqual(["en", "ja", "ko", "vi"])
  })

  it("lists events newest first and filters by status, category and featured", async () => {
    const all = await api.get("/api/events")
    expect(all.body.meta).toEqual({ limit: 20, offset: 0, count: 2 })
    expect(all.body.data.map((e: any) => e.id)).toEqual(["2", "1"])
    expect(all.body.data[0]).toMatchObject({
      state: "REFUND",
      status: "refunding",
      refundMode: true,
      winningIndex: null,
      winningMarketId: null
    })
    expect((await api.get("/api/events?status=resolved")).body.data.map((e: any) => e.id)).toEqual(["1"])
    expect((await api.get("/api/events?status=active")).body.data).toEqual([])
    expect((await api.get("/api/events?category=world")).body.data.map((e: any) => e.id)).toEqual(["2"])
    expect((await api.get("/api/events?featured=true")).body.data.map((e: any) => e.id)).toEqual(["1"])
  })

  it("says EventNotFound (404) for an unknown id and InvalidParameter (400) for a malformed one", async () => {
    expect((await api.get("/api/events/3")).body.error).toBe("EventNotFound")
    const huge = await api.get(`/api/events/${"9".repeat(78)}`)
    expect(huge.status).toBe(400)
    for (const id of ["0", "abc", "-1", "0x01"]) {
      const answer = await api.get(`/api/events/${id}`)
      expect(answer.status, id).toBe(400)
      expect(answer.body.error).toBe("InvalidParameter")
      expect(answer.body.message).toContain('"eventId"')
    }
  })
})

describe("GET /api/oracles/...", () => {
  it("lists the approved oracles only", async () => {
    const rows = await api.sql(`select oracle from approved_oracle where approved order by oracle`)
    const answer = await api.get("/api/oracles/approved")
    expect(answer.body.data.map((o: any) => o.oracle)).toEqual(rows.map((r) => r["oracle"]))
    expect(answer.body.data.map((o: any) => o.oracle)).toEqual([FEED_ORACLE, MANUAL_ORACLE])
  })

  it("lists a manual oracle's current reports, filterable by subject and state", async () => {
    const rows = await api.sql(
      `select subject, subject_id::text as id, state from manual_report where oracle = $1 order by updated_block desc, subject, subject_id`,
      [MANUAL_ORACLE]
    )
    const answer = await api.get(`/api/oracles/manual/${MANUAL_ORACLE}/reports?limit=100`)
    expect(answer.body.data.map((r: any) => [r.subject, r.subjectId, r.state])).toEqual(
      rows.map((r) => [r["subject"], r["id"], r["state"]])
    )
    const events = await api.get(`/api/oracles/manual/${MANUAL_ORACLE}/reports?subject=event`)
    expect(events.body.data.every((r: any) => r.subject === "event")).toBe(true)
    expect(events.body.data[0]).toMatchObject({ subjectId: "1", winningIndex: "2", outcome: null })
    const none = await api.get(`/api/oracles/manual/${FEED_ORACLE}/reports`)
    expect(none.body).toEqual({ data: [], meta: { limit: 20, offset: 0, count: 0 } })
    const bad = await api.get("/api/oracles/manual/not-an-address/reports")
    expect(bad.body).toMatchObject({ error: "InvalidAddress" })
    expect(bad.body.message).toContain('"oracleContract"')
  })

  it("lists a price-feed oracle's markets with thresholds in the feed's decimals", async () => {
    const answer = await api.get(`/api/oracles/pricefeed/${FEED_ORACLE}/markets`)
    expect(answer.body.data.map((m: any) => [m.marketId, m.threshold, m.gte, m.state, m.price, m.outcome])).toEqual([
      ["17", "300000000000", true, "RESOLVED", "310000000000", true],
      ["18", "320000000000", true, "RESOLVED", "310000000000", false],
      ["19", "280000000000", false, "RESOLVED", "310000000000", false],
      ["20", "350000000000", true, "UNREGISTERED", null, null]
    ])
    // The oracle's outcome is the threshold comparison, and the market agrees.
    for (const m of answer.body.data.filter((m: any) => m.state === "RESOLVED")) {
      const above = BigInt(m.price) >= BigInt(m.threshold)
      expect(m.outcome).toBe(m.gte ? above : !above)
      expect((await api.get(`/api/markets/${m.marketId}`)).body.data.outcome).toBe(m.outcome)
    }
    expect((await api.get(`/api/oracles/pricefeed/${FEED_ORACLE}/markets?state=RESOLVED`)).body.meta.count).toBe(3)
    expect((await api.get(`/api/oracles/pricefeed/${FEED_ORACLE}/markets?state=resolved`)).status).toBe(400)
  })
})

describe("GET /api/admin/...", () => {
  const tables = {
    "role-changes": "role_change",
    pauses: "pause_change",
    "diamond-cuts": "diamond_cut",
    "fee-changes": "fee_change",
    "hook-proxy-upgrades": "hook_upgrade"
  }

  it("lists each history newest first, every row once", async () => {
    for (const [path, table] of Object.entries(tables)) {
      const rows = await api.sql(`select tx_hash, log_index from ${table} order by block_number desc, log_index desc`)
      const answer = await api.get(`/api/admin/${path}?limit=100`)
      expect(answer.body.meta.count, path).toBe(rows.length)
      expect(rows.length, path).toBeGreaterThan(0)
      expect(answer.body.data.map((r: any) => [r.txHash, r.logIndex])).toEqual(rows.map((r) => [r["tx_hash"], r["log_index"]]))
    }
  })

  it("decodes each history's fields", async () => {
    const cuts = await api.get("/api/admin/diamond-cuts")
    expect(cuts.body.data.map((c: any) => c.cuts.map((cut: any) => cut.action))).toEqual([["Replace"], ["Add", "Add", "Add"]])
    const pauses = await api.get("/api/admin/pauses?scope=MODULE")
    expect(pauses.body.data.map((p: any) => p.paused)).toEqual([false, true])
    expect(pauses.body.data[0].moduleId).toBe("0xebe5e1b4e81c19df2eae56464f20c171ff4cc84e0e7a45fb50315f3ef189da73")
    // The scenario pauses the exchange around one router trade (which then goes to the AMM alone).
    const exchange = await api.get("/api/admin/pauses?scope=EXCHANGE")
    expect(exchange.body.data.map((p: any) => [p.paused, p.moduleId, p.account])).toEqual([
      [false, null, "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266"],
      [true, null, "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266"]
    ])
    const fees = await api.get("/api/admin/fee-changes?kind=MARKET_REDEMPTION_FEE")
    expect(fees.body.data.map((f: any) => [f.marketId, f.newValue, f.overridden])).toEqual([
      ["4", "0", false],
      ["3", "200", true]
    ])
    expect((await api.get("/api/admin/fee-changes?marketId=3")).body.meta.count).toBe(1)
    const upgrades = await api.get("/api/admin/hook-proxy-upgrades")
    expect(upgrades.body.data.map((u: any) => u.action)).toEqual(["EXECUTED", "PROPOSED", "CANCELLED", "PROPOSED"])
    expect(upgrades.body.data[1].readyAt).toBe(1767230456)
    const revoked = await api.get("/api/admin/role-changes?action=REVOKED")
    expect(revoked.body.data.every((r: any) => r.action === "REVOKED")).toBe(true)
    const account = revoked.body.data[0].account
    expect((await api.get(`/api/admin/role-changes?account=${account}`)).body.data.every((r: any) => r.account === account)).toBe(true)
    expect((await api.get("/api/admin/role-changes?role=admin")).body.message).toContain('"role"')
    expect((await api.get("/api/admin/pauses?scope=global")).status).toBe(400)
  })
})

describe("GET /api/stats and /api/health", () => {
  it("gives protocol totals that agree with the trade table", async () => {
    const [t] = await api.sql(
      `select sum(case when trade_type in (0, 2) then amount_in else amount_out end)::text as v, count(*)::int as n from trade`
    )
    const stats = await api.get("/api/stats")
    expect(stats.body.data).toMatchObject({ totalMarkets: 28, totalVolume: six(t!["v"]), totalTrades: t!["n"] })
  })

  it("reports the indexed head, which every answer also names in X-Indexed-Block", async () => {
    const health = await api.get("/api/health")
    expect(health.body.data).toMatchObject({ status: "ok", chainId: 130, latestIndexedBlock: api.headBlock })
    expect(health.headers.get("x-indexed-block")).toBe(String(api.headBlock))
    const [{ hash }] = (await api.sql(`select block_hash as hash from indexer_checkpoint`)) as [{ hash: string }]
    expect(health.headers.get("x-indexed-block-hash")).toBe(hash)
    const notFound = await api.raw("/api/no-such-route")
    expect(notFound.status).toBe(404)
    expect(notFound.headers.get("x-indexed-block")).toBe(String(api.headBlock))
  })
})
