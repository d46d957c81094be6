/**
 * `/api/portfolio/:address/history` as a historical portfolio (issue 14, point 6), against the
 * indexed fixture: at every listed bucket, value, cost and P&L are recomputed here from raw rows
 * (the user's `position_history` rows carried forward, prices from `price_snapshot`, not the
 * candles the endpoint reads, resolutions from `market`), the last bucket is the snapshot of
 * `/api/portfolio`, and each position's latest history row is its `position` row.
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

const UNIT = 1_000_000n
const raw = (six: string) => BigInt(six.replace(".", "").replace(/^(-?)0+(?=\d)/, "$1"))
const SECONDS = { "1m": 60, "1h": 3_600, "1d": 86_400, "1w": 604_800 } as const
const bucketOf = (seconds: number, t: number) => {
  const offset = seconds === 604_800 ? 4 * 86_400 : 0
  return Math.floor((t - offset) / seconds) * seconds + offset
}

/** Every point of the series, page after page. */
const series = async (address: string, timeframe: string) => {
  const points: Array<any> = []
  for (;;) {
    const answer = await api.get(`/api/portfolio/${address}/history?timeframe=${timeframe}&limit=100&offset=${points.length}`)
    expect(answer.status).toBe(200)
    points.push(...answer.body.data)
    if (points.length >= answer.body.meta.count) return points
  }
}

describe("the position history", () => {
  it("ends, for every position, at the position row", async () => {
    const mismatched = await api.sql(
      `select p.user_address, p.market_id from position p
       left join lateral (select * from position_history h where h.user_address = p.user_address and h.market_id = p.market_id order by minute desc limit 1) h on true
       where h.minute is null or (h.yes_balance, h.no_balance, h.yes_cost, h.no_cost, h.realized_pnl) <> (p.yes_balance, p.no_balance, p.yes_cost, p.no_cost, p.realized_pnl)`
    )
    expect(mismatched).toEqual([])
    const [count] = await api.sql(
      `select count(*)::int as n, count(distinct (user_address, market_id))::int as positions from position_history`
    )
    // Positions move more than once: the table is a history, not a copy of `position`.
    expect(count!["n"]).toBeGreaterThan(count!["positions"])
  })
})

describe("GET /api/portfolio/{address}/history", () => {
  it("serves value, cost and P&L at each bucket, recomputed from the raw rows, and ends at the snapshot", async () => {
    const users = (await api.sql(`select distinct user_address as a from position_history order by 1`)).map((r) => r["a"] as string)
    expect(users.length).toBeGreaterThan(3)
    const markets = new Map(
      (await api.sql(`select id::text as id, is_resolved, outcome, resolved_at, yes_price::text as p from market`)).map((m) => [
        m["id"] as string,
        m
      ])
    )
    const snapshots = await api.sql(
      `select market_id::text as m, timestamp::int as t, yes_price::text as p from price_snapshot order by block_number, log_index`
    )
    /** The market's last price before `end` (unix seconds), as the endpoint should mark it. */
    const priceAt = (market: string, end: number) => {
      let price: bigint | undefined
      for (const s of snapshots) if (s["m"] === market && s["t"] < end) price = BigInt(s["p"])
      if (price !== undefined) return price
      return snapshots.some((s) => s["m"] === market) ? UNIT / 2n : BigInt(markets.get(market)!["p"])
    }
    let checked = 0
    for (const user of users) {
      const history = await api.sql(
        `select market_id::text as m, minute::int as minute, yes_balance::text as yes, no_balance::text as no, yes_cost::text as yc, no_cost::text as nc,
                realized_pnl::text as r from position_history where user_address = $1 order by minute`,
        [user]
      )
      const trades = await api.sql(`select distinct timestamp::int as t from trade where recipient = $1`, [user])
      for (const timeframe of ["1h", "1d"] as const) {
        const seconds = SECONDS[timeframe]
        const points = await series(user, timeframe)
        const buckets = points.map((p) => p.timestamp as number)
        expect(buckets, user).toEqual([...buckets].sort((a, b) => a - b))
        expect(new Set(buckets).size).toBe(buckets.length)
        // Every bucket in which a position moved or a trade arrived is listed.
        for (const h of history) expect(buckets, `${user} ${timeframe}`).toContain(bucketOf(seconds, h["minute"]))
        for (const t of trades) expect(buckets).toContain(bucketOf(seconds, t["t"]))
        for (const point of points) {
          const end = point.timestamp + seconds
          const carried = new Map<string, Record<string, any>>()
          for (const h of history) if (h["minute"] < end) carried.set(h["m"], h)
          let value = 0n
          let cost = 0n
          let realized = 0n
          let open = 0
          for (const [market, h] of carried) {
            realized += BigInt(h["r"])
            const yes = BigInt(h["yes"])
            const no = BigInt(h["no"])
            if (yes === 0n && no === 0n) continue
            open += 1
            cost += BigInt(h["yc"]) + BigInt(h["nc"])
            const m = markets.get(market)!
            if (m["is_resolved"] && m["outcome"] !== null && Number(m["resolved_at"]) < end) value += m["outcome"] ? yes : no
            else {
              const price = priceAt(market, end)
              value += (yes * price) / UNIT + (no * (UNIT - price)) / UNIT
            }
          }
          const at = `${user} ${timeframe} ${point.timestamp}`
          expect(raw(point.value), at).toBe(value)
          expect(raw(point.cost), at).toBe(cost)
          expect(raw(point.realizedPnl), at).toBe(realized)
          expect(raw(point.unrealizedPnl), at).toBe(value - cost)
          expect(raw(point.totalPnl), at).toBe(realized + value - cost)
          expect(point.openPositions, at).toBe(open)
          checked++
        }
        // The last bucket is the portfolio as it stands.
        const now = (await api.get(`/api/portfolio/${user}`)).body.data
        const last = points.at(-1)
        for (const field of ["value", "cost", "unrealizedPnl", "realizedPnl", "totalPnl", "openPositions"])
          expect(last[field], `${user} ${timeframe} ${field}`).toEqual(now[field])
      }
    }
    expect(checked).toBeGreaterThan(users.length * 2)
  }, 600_000)

  it("still serves the cash flow of the user's trades in the buckets that have them", async () => {
    const [user] = (await api.sql(`select recipient as a from trade group by 1 order by count(*) desc limit 1`)).map(
      (r) => r["a"] as string
    )
    const days = await api.sql(
      `select (timestamp / 86400) * 86400 as day, coalesce(sum(amount_in) filter (where trade_type in (0, 2)), 0)::text as bought,
              coalesce(sum(amount_out) filter (where trade_type in (1, 3)), 0)::text as sold, count(*)::int as n
       from trade where recipient = $1 group by 1 order by 1`,
      [user]
    )
    const points = await series(user!, "1d")
    const traded = points.filter((p) => p.tradeCount > 0)
    expect(traded.map((p) => p.timestamp)).toEqual(days.map((d) => Number(d["day"])))
    let running = 0n
    for (const point of points) {
      const day = days.find((d) => Number(d["day"]) === point.timestamp)
      const net = day === undefined ? 0n : BigInt(day["sold"]) - BigInt(day["bought"])
      running += net
      expect(raw(point.netFlow)).toBe(net)
      expect(raw(point.cumulativeNetFlow)).toBe(running)
      if (day === undefined) expect(point).toMatchObject({ tradeCount: 0, marketIds: [], bought: "0.000000", sold: "0.000000" })
    }
  })
})
