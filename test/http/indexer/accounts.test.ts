/**
 * Per-user endpoints (portfolio, pnl, history, leaderboard, user stats, accuracy, resolved
 * positions, maker fills) against the indexed fixture. Expected values are recomputed here: open
 * positions from ERC-20 balances, marks from the latest price snapshot, realized P&L from
 * `user_stats`, accuracy by replaying the router trades in JavaScript.
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

const USER = "0xa0ee7a142d267c1f36714e4a8f75612f20a79720"
const NOBODY = "0x000000000000000000000000000000000000dead"

const six = (raw: bigint | string | number): string => {
  const value = BigInt(raw)
  const negative = value < 0n
  const digits = (negative ? -value : value).toString().padStart(7, "0")
  return `${negative ? "-" : ""}${digits.slice(0, -6)}.${digits.slice(-6)}`
}

/** Calls per user in resolved markets, replayed from the router trades (see user-stats.ts). */
const replayCalls = async () => {
  const trades = await api.sql(
    `select t.recipient, t.market_id::text as market, t.trade_type, t.amount_in::text as amount_in, t.amount_out::text as amount_out, m.outcome
       from trade t join market m on m.id = t.market_id where m.is_resolved and m.outcome is not null`
  )
  const net = new Map<string, { user: string; yes: bigint; no: bigint; outcome: boolean }>()
  for (const t of trades) {
    const key = `${t["recipient"]}:${t["market"]}`
    const entry = net.get(key) ?? { user: t["recipient"], yes: 0n, no: 0n, outcome: t["outcome"] }
    const type = t["trade_type"] as number
    if (type === 0) entry.yes += BigInt(t["amount_out"])
    if (type === 1) entry.yes -= BigInt(t["amount_in"])
    if (type === 2) entry.no += BigInt(t["amount_out"])
    if (type === 3) entry.no -= BigInt(t["amount_in"])
    net.set(key, entry)
  }
  const perUser = new Map<string, { calls: number; correct: number }>()
  for (const { user, yes, no, outcome } of net.values()) {
    const stats = perUser.get(user) ?? { calls: 0, correct: 0 }
    if (yes !== no) {
      stats.calls += 1
      if (yes > no === outcome) stats.correct += 1
    }
    perUser.set(user, stats)
  }
  return perUser
}

const accuracyText = (stats: { calls: number; correct: number } | undefined) =>
  stats === undefined || stats.calls === 0 ? null : six((BigInt(stats.correct) * 1_000_000n) / BigInt(stats.calls))

describe("GET /api/portfolio/{address}", () => {
  it("lists a known user's open positions with their token balances, marked at the latest price", async () => {
    const held = await api.sql(
      `select m.id::int as market, coalesce(y.balance, 0)::text as yes, coalesce(n.balance, 0)::text as no,
              (select yes_price::text from price_snapshot s where s.market_id = m.id order by block_number desc, log_index desc limit 1) as price,
              m.is_resolved, m.outcome
         from market m
         left join token_holder y on y.token = m.yes_token and y.holder = $1
         left join token_holder n on n.token = m.no_token and n.holder = $1
        where y.balance > 0 or n.balance > 0 order by m.id`,
      [USER]
    )
    const answer = await api.get(`/api/portfolio/${USER}`)
    expect(answer.body.meta).toBeNull()
    const portfolio = answer.body.data
    expect(portfolio.positions.map((p: any) => Number(p.marketId))).toEqual(held.map((h) => h["market"]))
    expect(portfolio.positions.map((p: any) => p.marketId)).toEqual(["15", "16", "21", "22"])
    let value = 0n
    held.forEach((h, i) => {
      const p = portfolio.positions[i]
      const price = BigInt(h["price"])
      const expected = h["is_resolved"]
        ? BigInt(h["outcome"] ? h["yes"] : h["no"])
        : (BigInt(h["yes"]) * price) / 1_000_000n + (BigInt(h["no"]) * (1_000_000n - price)) / 1_000_000n
      value += expected
      expect(p).toMatchObject({
        user: USER,
        yesBalance: six(h["yes"]),
        noBalance: six(h["no"]),
        markPrice: six(price),
        value: six(expected)
      })
      expect(BigInt(p.unrealizedPnl.replace(".", ""))).toBe(
        expected - BigInt(p.yesCost.replace(".", "")) - BigInt(p.noCost.replace(".", ""))
      )
    })
    const [stats] = await api.sql(`select realized_pnl::text as pnl from user_stats where address = $1`, [USER])
    expect(portfolio).toMatchObject({ address: USER, openPositions: 4, value: six(value), realizedPnl: six(stats!["pnl"]) })
    expect(portfolio.realizedPnl).toBe("192.271063")
  })

  it("is empty, not 404, for an address with no activity, and 400 for a malformed one", async () => {
    const empty = await api.get(`/api/portfolio/${NOBODY}`)
    expect(empty.body.data).toEqual({
      address: NOBODY,
      positions: [],
      openPositions: 0,
      value: "0.000000",
      cost: "0.000000",
      unrealizedPnl: "0.000000",
      realizedPnl: "0.000000",
      totalPnl: "0.000000"
    })
    const bad = await api.get("/api/portfolio/0xZZ")
    expect(bad.status).toBe(400)
    expect(bad.body).toMatchObject({ error: "InvalidAddress" })
    expect(bad.body.message).toContain('"address"')
  })

  it("lowercases a checksummed address", async () => {
    const mixed = "0xa0Ee7A142d267C1f36714E4a8F75612F20a79720"
    const answer = await api.get(`/api/portfolio/${mixed}/pnl`)
    expect(answer.body.data.address).toBe(USER)
  })
})

describe("GET /api/portfolio/{address}/pnl and /history", () => {
  it("aggregates realized and unrealized P&L with the user's router volume", async () => {
    const [trades] = await api.sql(
      `select coalesce(sum(case when trade_type in (0, 2) then amount_in else amount_out end), 0)::text as volume, count(*)::int as n
         from trade where trader = $1`,
      [USER]
    )
    const snapshot = (await api.get(`/api/portfolio/${USER}`)).body.data
    const pnl = await api.get(`/api/portfolio/${USER}/pnl`)
    expect(pnl.body.data).toEqual({
      address: USER,
      value: snapshot.value,
      cost: snapshot.cost,
      unrealizedPnl: snapshot.unrealizedPnl,
      realizedPnl: "192.271063",
      totalPnl: snapshot.totalPnl,
      volume: six(trades!["volume"]),
      tradeCount: trades!["n"],
      marketsTraded: 16,
      openPositions: 4
    })
    expect(pnl.body.data.volume).toBe("3460.081414")
  })

  it("buckets the cash flow of the user's trades per day, with a running total", async () => {
    const days = await api.sql(
      `select (timestamp / 86400) * 86400 as day,
              coalesce(sum(amount_in) filter (where trade_type in (0, 2)), 0)::text as bought,
              coalesce(sum(amount_out) filter (where trade_type in (1, 3)), 0)::text as sold, count(*)::int as n
         from trade where recipient = $1 group by 1 order by 1`,
      [USER]
    )
    // Buckets without trades are listed too (positions moved or prices changed: the portfolio's value).
    const answer = await api.get(`/api/portfolio/${USER}/history?limit=100`)
    expect(answer.body.meta.count).toBe(answer.body.data.length)
    const traded = answer.body.data.filter((point: any) => point.tradeCount > 0)
    expect(traded.length).toBe(days.length)
    let running = 0n
    traded.forEach((point: any, i: number) => {
      const day = days[i]!
      const net = BigInt(day["sold"]) - BigInt(day["bought"])
      running += net
      expect(point).toMatchObject({
        timeframe: "1d",
        timestamp: Number(day["day"]),
        bought: six(day["bought"]),
        sold: six(day["sold"]),
        netFlow: six(net),
        cumulativeNetFlow: six(running),
        tradeCount: day["n"]
      })
    })
    // A window keeps the running total of the flows before it.
    const later = await api.get(`/api/portfolio/${USER}/history?from=${Number(days[1]!["day"])}`)
    expect(later.body.data[0].cumulativeNetFlow).toBe(traded[1].cumulativeNetFlow)
    const hourly = await api.get(`/api/portfolio/${USER}/history?timeframe=1h&limit=100`)
    expect(hourly.body.data.reduce((n: number, p: any) => n + p.tradeCount, 0)).toBe(days.reduce((n, d) => n + d["n"], 0))
    expect((await api.get(`/api/portfolio/${NOBODY}/history`)).body).toEqual({ data: [], meta: { limit: 20, offset: 0, count: 0 } })
    expect((await api.get(`/api/portfolio/${USER}/history?timeframe=2d`)).status).toBe(400)
  })
})

describe("GET /api/user-stats", () => {
  it("ranks traders by realized P&L by default, ties by address", async () => {
    const rows = await api.sql(
      `select address, realized_pnl::text as pnl from user_stats where trade_count > 0 order by realized_pnl desc, address`
    )
    const answer = await api.get("/api/user-stats?limit=100")
    expect(answer.body.meta.count).toBe(rows.length)
    expect(answer.body.data.map((u: any) => [u.rank, u.address, u.realizedPnl])).toEqual(
      rows.map((r, i) => [i + 1, r["address"], six(r["pnl"])])
    )
  })

  it("ranks by volume, and by accuracy replayed from the trades", async () => {
    const byVolume = await api.sql(`select address from user_stats where trade_count > 0 order by volume desc, address`)
    const volume = await api.get("/api/user-stats?sort=volume&limit=100")
    expect(volume.body.data.map((u: any) => u.address)).toEqual(byVolume.map((r) => r["address"]))

    const calls = await replayCalls()
    const accuracy = await api.get("/api/user-stats?sort=accuracy&limit=100")
    for (const user of accuracy.body.data) {
      expect(user.accuracy, user.address).toBe(accuracyText(calls.get(user.address)))
      expect(user.resolvedPositions).toBe(calls.get(user.address)?.calls ?? 0)
    }
    const values = accuracy.body.data.map((u: any) => (u.accuracy === null ? -1 : Number(u.accuracy)))
    expect(values).toEqual([...values].sort((a, b) => b - a))
    expect(accuracy.body.data[0]).toMatchObject({ rank: 1, address: "0xbcd4042de499d14e55001ccbb24a551f3b954096", accuracy: "0.800000" })
    const page2 = await api.get("/api/user-stats?sort=accuracy&limit=5&offset=5")
    expect(page2.body.data[0].rank).toBe(6)
  })

  it("rejects another sort naming it", async () => {
    const bad = await api.get("/api/user-stats?sort=winRate")
    expect(bad.status).toBe(400)
    expect(bad.body.message).toBe('invalid parameter "sort": sort must be one of "pnl", "volume", "accuracy", got "winRate"')
  })
})

describe("GET /api/user-stats/{address} and /api/users/{address}/...", () => {
  it("gives one user's stats with their pnl rank, and zeros for an unknown address", async () => {
    const calls = await replayCalls()
    const answer = await api.get(`/api/user-stats/${USER}`)
    expect(answer.body.data).toEqual({
      address: USER,
      resolvedPositions: calls.get(USER)!.calls,
      correctPositions: calls.get(USER)!.correct,
      accuracy: accuracyText(calls.get(USER)),
      rank: 5,
      volume: "3460.081414",
      tradeCount: 24,
      realizedPnl: "192.271063"
    })
    const nobody = await api.get(`/api/user-stats/${NOBODY}`)
    expect(nobody.body.data).toEqual({
      address: NOBODY,
      resolvedPositions: 0,
      correctPositions: 0,
      accuracy: null,
      rank: null,
      volume: "0.000000",
      tradeCount: 0,
      realizedPnl: "0.000000"
    })
  })

  it("gives the accuracy of the user's resolved calls", async () => {
    const calls = await replayCalls()
    const answer = await api.get(`/api/users/${USER}/accuracy`)
    expect(answer.body.data).toEqual({
      address: USER,
      resolvedPositions: calls.get(USER)!.calls,
      correctPositions: calls.get(USER)!.correct,
      accuracy: accuracyText(calls.get(USER))
    })
    expect(answer.body.data.accuracy).toBe("0.500000")
  })

  it("lists the user's positions in closed markets, latest closed first, with their calls", async () => {
    const rows = await api.sql(
      `select m.id::text as id, m.outcome from position p join market m on m.id = p.market_id
        where p.user_address = $1 and (m.is_resolved or m.refund_mode) order by m.resolved_at desc nulls last, m.id desc`,
      [USER]
    )
    const answer = await api.get(`/api/users/${USER}/resolved-positions?limit=100`)
    expect(answer.body.data.map((p: any) => p.marketId)).toEqual(rows.map((r) => r["id"]))
    const calls = answer.body.data.filter((p: any) => p.call !== null)
    expect(calls.length).toBe(10)
    expect(calls.filter((p: any) => p.correct).length).toBe(5)
    for (const p of answer.body.data) {
      if (p.resolutionType === "REFUND") expect(p).toMatchObject({ outcome: null, call: null, correct: null })
      else if (p.call !== null) expect(p.correct).toBe((p.call === "YES") === p.outcome)
    }
    expect((await api.get(`/api/users/${NOBODY}/resolved-positions`)).body.data).toEqual([])
  })

  it("lists the user's maker fills newest first, filterable by market", async () => {
    const rows = await api.sql(
      `select tx_hash, log_index, market_id::text as m from order_match where maker = $1 order by block_number desc, log_index desc`,
      [USER]
    )
    const answer = await api.get(`/api/users/${USER}/maker-fills`)
    expect(answer.body.meta.count).toBe(rows.length)
    expect(answer.body.data.map((f: any) => [f.txHash, f.logIndex])).toEqual(rows.map((r) => [r["tx_hash"], r["log_index"]]))
    expect(answer.body.data.every((f: any) => f.maker === USER)).toBe(true)
    const inMarket = await api.get(`/api/users/${USER}/maker-fills?marketId=${rows[0]!["m"]}`)
    expect(inMarket.body.data.every((f: any) => f.marketId === rows[0]!["m"])).toBe(true)
    const bad = await api.get(`/api/users/${USER}/maker-fills?marketId=zero`)
    expect(bad.body.error).toBe("InvalidMarketId")
  })
})
