/**
 * Issue 14 against the indexed fixture, values recomputed from the raw event tables: protocol
 * contracts are not users, every CLOB taker fill is listed (without volume), positions follow
 * every share (balances = tokens held + shares locked in live SELL orders), prices are the true
 * ratio, yesPrice is never null and counts are integers.
 */
import * as fs from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { COMPONENTS } from "../../../schema/components.js"
import { startHarness, type Harness } from "./support/harness.js"

let api: Harness
let protocol: ReadonlyArray<string>
beforeAll(async () => {
  api = await startHarness()
  const deployment = JSON.parse(fs.readFileSync(new URL("../../../fixtures/devnet.deployment.json", import.meta.url), "utf8"))
  const tokens = await api.sql(`select yes_token as t from market union select no_token from market`)
  protocol = [...COMPONENTS.map((c) => String(deployment[c]).toLowerCase()), ...tokens.map((r) => r["t"] as string)]
}, 120_000)
afterAll(async () => {
  await api?.close()
})

const ZERO_ID = `0x${"0".repeat(64)}`
const raw = (six: string) => BigInt(six.replace(".", "").replace(/^(-?)0+(?=\d)/, "$1"))

describe("protocol contracts are not users", () => {
  it("hold no position, portfolio or user stats, and totalUsers counts the other addresses that traded", async () => {
    const positions = await api.sql(`select distinct user_address as a from position where user_address = any($1)`, [protocol])
    expect(positions).toEqual([])
    const stats = await api.sql(`select address as a from user_stats where address = any($1)`, [protocol])
    expect(stats).toEqual([])
    // ...while they do hold tokens (the holder view keeps every address)
    const held = await api.sql(`select distinct holder as a from token_holder where holder = any($1)`, [protocol])
    expect(held.length).toBeGreaterThan(0)
    for (const { a } of held) {
      const portfolio = await api.get(`/api/portfolio/${a}`)
      expect(portfolio.body.data.openPositions, a).toBe(0)
    }
    const markets = await api.sql(`select id::text as id from market order by id`)
    for (const { id } of markets) {
      const answer = await api.get(`/api/markets/${id}/positions?limit=100`)
      expect(
        answer.body.data.filter((p: any) => protocol.includes(p.user)),
        id
      ).toEqual([])
    }
    const [traded] = await api.sql(
      `select count(distinct a)::int as n from (
         select trader as a from trade union all select recipient from trade
         union all select maker from order_match where maker is not null
         union all select taker from order_match where taker is not null
         union all select taker from taker_fill union all select recipient from taker_fill
       ) x where a <> all($1)`,
      [protocol]
    )
    const answer = await api.get("/api/stats")
    expect(answer.body.data.totalUsers).toBe(traded!["n"])
  })
})

describe("every fill is a trade", () => {
  it("lists each match of a limit order that crossed the book as a clob trade of its taker, adding no volume", async () => {
    const crosses = await api.sql(
      `select m.market_id::text as market, count(*)::int as n from order_match m
        where m.taker_order_id <> $1 group by 1 order by 2 desc, 1`,
      [ZERO_ID]
    )
    expect(crosses.length).toBeGreaterThan(0)
    for (const { market, n } of crosses) {
      const [direct] = await api.sql(
        `select count(*)::int as n from taker_fill f where f.market_id = $1::numeric
            and not exists (select 1 from trade t where t.tx_hash = f.tx_hash and t.market_id = f.market_id)`,
        [market]
      )
      const clob = await api.get(`/api/markets/${market}/trades?source=clob&limit=100`)
      expect(clob.body.meta.count, market).toBe(n + direct!["n"])
      expect(clob.body.data.every((t: any) => t.source === "clob" && t.matchCount !== null && !protocol.includes(t.trader))).toBe(true)
      const [volume] = await api.sql(
        `select coalesce(sum(case when trade_type in (0, 2) then amount_in else amount_out end), 0)::text as v, count(*)::int as n from trade where market_id = $1::numeric`,
        [market]
      )
      const detail = await api.get(`/api/markets/${market}`)
      expect(raw(detail.body.data.volume)).toBe(BigInt(volume!["v"]))
      expect(detail.body.data.tradeCount).toBe(volume!["n"])
    }
    // a taker fill carries its taker's side and the price it paid
    const [one] = await api.sql(
      `select m.tx_hash, m.log_index, o.owner, o.side, m.amount::text as amount, m.match_type, m.price::text as price, o.price::text as limit, m.market_id::text as market
         from order_match m join exchange_order o on o.id = m.taker_order_id order by m.block_number, m.log_index limit 1`
    )
    const listed = (await api.get(`/api/markets/${one!["market"]}/trades?source=clob&limit=100`)).body.data.find(
      (t: any) => t.txHash === one!["tx_hash"] && t.logIndex === one!["log_index"]
    )
    const price = BigInt(one!["match_type"] === 0 ? one!["price"] : one!["limit"])
    const usdc = (BigInt(one!["amount"]) * price) / 1_000_000n
    const buy = one!["side"] === 0 || one!["side"] === 2
    expect(listed).toMatchObject({ trader: one!["owner"], isBuy: buy })
    expect(raw(buy ? listed.amountIn : listed.amountOut)).toBe(usdc)
    expect(raw(buy ? listed.amountOut : listed.amountIn)).toBe(BigInt(one!["amount"]))
  })
})

describe("the devnet scenario's users crossing each other", () => {
  it("lists its MINT, MERGE and COMPLEMENTARY crosses as clob trades of the taker, at the price the taker paid", async () => {
    // The scenario's first crosses (tools/devnet/scenario.ts): BUY NO 0.52 into BUY YES 0.50 (MINT),
    // SELL NO 0.40 into SELL YES 0.55 (MERGE), BUY YES 0.65 into SELL YES 0.60 (COMPLEMENTARY).
    const first = await api.sql(
      `select m.tx_hash, m.log_index, m.match_type, m.market_id::text as market, o.owner from order_match m
         join exchange_order o on o.id = m.taker_order_id order by m.block_number, m.log_index limit 3`
    )
    expect(first.map((r) => r["match_type"])).toEqual([1, 2, 0])
    const listed = (await api.get(`/api/markets/${first[0]!["market"]}/trades?source=clob&limit=100`)).body.data
    const row = (r: Record<string, any>) => listed.find((t: any) => t.txHash === r["tx_hash"] && t.logIndex === r["log_index"])
    expect(row(first[0]!)).toMatchObject({
      trader: first[0]!["owner"],
      tradeType: "BUY_NO",
      amountIn: "5.200000",
      amountOut: "10.000000",
      price: "0.520000"
    })
    expect(row(first[1]!)).toMatchObject({
      trader: first[1]!["owner"],
      tradeType: "SELL_NO",
      amountIn: "10.000000",
      amountOut: "4.000000",
      price: "0.400000"
    })
    expect(row(first[2]!)).toMatchObject({
      trader: first[2]!["owner"],
      tradeType: "BUY_YES",
      amountIn: "6.000000",
      amountOut: "10.000000",
      price: "0.600000"
    })
  })
})

describe("positions follow every share", () => {
  it("each user's balances are the tokens held plus the shares locked in live SELL orders", async () => {
    const rows = await api.sql(
      `with held as (
         select h.holder as u, h.market_id as m, sum(h.balance) filter (where h.side = 'YES') as yes, sum(h.balance) filter (where h.side = 'NO') as no
           from token_holder h group by 1, 2
       ), locked as (
         select owner as u, market_id as m, sum(amount - filled) filter (where side = 1) as yes, sum(amount - filled) filter (where side = 3) as no
           from exchange_order where status in ('OPEN', 'PARTIALLY_FILLED') group by 1, 2
       ), expected as (
         select coalesce(h.u, l.u) as u, coalesce(h.m, l.m) as m,
                coalesce(h.yes, 0) + coalesce(l.yes, 0) as yes, coalesce(h.no, 0) + coalesce(l.no, 0) as no
           from held h full join locked l on l.u = h.u and l.m = h.m
       )
       select coalesce(e.u, p.user_address) as u, coalesce(e.m, p.market_id)::text as m,
              coalesce(e.yes, 0)::text as want_yes, coalesce(e.no, 0)::text as want_no,
              coalesce(p.yes_balance, 0)::text as yes, coalesce(p.no_balance, 0)::text as no
         from (select * from expected where u <> all($1)) e full join position p on p.user_address = e.u and p.market_id = e.m
        where coalesce(e.yes, 0) <> coalesce(p.yes_balance, 0) or coalesce(e.no, 0) <> coalesce(p.no_balance, 0)`,
      [protocol]
    )
    expect(rows).toEqual([])
    const [count] = await api.sql(`select count(*)::int as n from position where yes_balance > 0 or no_balance > 0`)
    expect(count!["n"]).toBeGreaterThan(20)
  })

  it("never shows a negative balance or cost basis", async () => {
    const bad = await api.sql(`select * from position where yes_balance < 0 or no_balance < 0 or yes_cost < 0 or no_cost < 0`)
    expect(bad).toEqual([])
  })
})

describe("prices", () => {
  it("every trade reports the true ratio of its USDC side to its share side, never clamped", async () => {
    const trades = await api.sql(
      `select market_id::text as market, tx_hash, log_index,
              floor(case when trade_type in (0, 2) then amount_in * 1000000 / amount_out else amount_out * 1000000 / amount_in end)::text as price
         from trade where amount_in > 0 and amount_out > 0`
    )
    const byMarket = new Map<string, Map<string, string>>()
    for (const t of trades) {
      const m = byMarket.get(t["market"]) ?? new Map<string, string>()
      m.set(`${t["tx_hash"]}:${t["log_index"]}`, t["price"])
      byMarket.set(t["market"], m)
    }
    for (const [market, expected] of byMarket) {
      let offset = 0
      for (;;) {
        const page = (await api.get(`/api/markets/${market}/trades?source=router&limit=100&offset=${offset}`)).body
        for (const t of page.data) expect(raw(t.price), `${market} ${t.txHash}`).toBe(BigInt(expected.get(`${t.txHash}:${t.logIndex}`)!))
        offset += 100
        if (offset >= page.meta.count) break
      }
    }
  })

  it("yesPrice is never null: every market has a price within 0..1, and a resolved one its outcome's", async () => {
    const list = await api.get("/api/markets?limit=100")
    expect(list.body.data.length).toBeGreaterThan(0)
    for (const m of list.body.data) {
      expect(m.yesPrice, m.id).not.toBeNull()
      expect(raw(m.yesPrice) + raw(m.noPrice)).toBe(1_000_000n)
      if (m.isResolved) expect(m.yesPrice, m.id).toBe(m.outcome ? "1.000000" : "0.000000")
    }
  })
})

describe("counts are integers", () => {
  it("in /api/stats as everywhere", async () => {
    const stats = (await api.get("/api/stats")).body.data
    for (const key of ["totalMarkets", "totalTrades", "totalUsers", "activeMarkets", "resolvedMarkets", "refundMarkets"]) {
      expect(Number.isInteger(stats[key]), key).toBe(true)
    }
    const [m] = await api.sql(`select count(*)::int as n from market`)
    expect(stats.totalMarkets).toBe(m!["n"])
  })
})
