/**
 * The per-market endpoints (trades, prices, candles, price-delta, volume-window, orderbook,
 * positions, amm-state, liquidity) against the indexed fixture. Expected values come from other
 * tables than the one each endpoint reads (candles from price snapshots and trades, the book from
 * the orders, positions from ERC-20 balances, the AMM price from the hook's own events), or from
 * the raw rows by arithmetic written here.
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

/** Six-decimal text of raw base units, by string arithmetic (independent of the server's formatter). */
const six = (raw: bigint | string | number): string => {
  const value = BigInt(raw)
  const negative = value < 0n
  const digits = (negative ? -value : value).toString().padStart(7, "0")
  return `${negative ? "-" : ""}${digits.slice(0, -6)}.${digits.slice(-6)}`
}

const ids = (answer: { body: { data: Array<Record<string, unknown>> } }, key: string) => answer.body.data.map((row) => row[key])

describe("GET /api/markets/{id}/trades", () => {
  it("lists the router trades of a market newest first, with amounts, split and per-share price", async () => {
    const rows = await api.sql(
      `select tx_hash, block_number::int, log_index, trade_type, amount_in::text, amount_out::text, clob_filled::text, amm_filled::text
         from trade where market_id = 11 order by block_number desc, log_index desc`
    )
    const answer = await api.get("/api/markets/11/trades?source=router&limit=100")
    expect(answer.body.meta).toEqual({ limit: 100, offset: 0, count: rows.length })
    expect(rows.length).toBe(7)
    answer.body.data.forEach((trade: any, i: number) => {
      const row = rows[i]!
      const buy = row["trade_type"] === 0 || row["trade_type"] === 2
      const [usdc, shares] = buy ? [row["amount_in"], row["amount_out"]] : [row["amount_out"], row["amount_in"]]
      expect(trade).toMatchObject({
        source: "router",
        txHash: row["tx_hash"],
        blockNumber: row["block_number"],
        logIndex: row["log_index"],
        marketId: "11",
        tradeType: ["BUY_YES", "SELL_YES", "BUY_NO", "SELL_NO"][row["trade_type"]],
        isBuy: buy,
        amountIn: six(row["amount_in"]),
        amountOut: six(row["amount_out"]),
        clobFilled: six(row["clob_filled"]),
        ammFilled: six(row["amm_filled"]),
        price: six((BigInt(usdc) * 1_000_000n) / BigInt(shares)),
        matchCount: null
      })
    })
    // The trade with a CLOB leg: its TakerFilled is that leg, not another trade.
    const legged = answer.body.data.find((t: any) => t.clobFilled !== "0.000000")
    expect(legged).toBeDefined()
    const fills = await api.sql(`select count(*)::int as n from taker_fill where tx_hash = $1`, [legged.txHash])
    expect(fills[0]!["n"]).toBe(1)
  })

  it("lists a limit order's crosses as clob fills of its taker, and a router trade's CLOB leg only as that trade", async () => {
    const [orphans] = await api.sql(
      `select count(*)::int as n from taker_fill f where not exists (select 1 from trade t where t.tx_hash = f.tx_hash and t.market_id = f.market_id)`
    )
    expect(orphans!["n"]).toBe(0)
    const crosses = await api.sql(
      `select m.tx_hash, m.log_index, m.taker from order_match m where m.market_id = 11 and m.taker_order_id <> $1 order by m.block_number desc, m.log_index desc`,
      [`0x${"0".repeat(64)}`]
    )
    const clob = await api.get("/api/markets/11/trades?source=clob&limit=100")
    expect(clob.body.data.map((t: any) => [t.txHash, t.logIndex, t.trader])).toEqual(
      crosses.map((c) => [c["tx_hash"], c["log_index"], c["taker"]])
    )
    const all = await api.get("/api/markets/11/trades?limit=100")
    expect(all.body.meta.count).toBe(7 + crosses.length)
  })

  it("filters by trader and pages", async () => {
    const trader = "0xa0ee7a142d267c1f36714e4a8f75612f20a79720"
    const [{ n }] = (await api.sql(
      `select ((select count(*) from trade where market_id = 11 and trader = $1) + (select count(*) from order_match where market_id = 11 and taker = $1 and taker_order_id <> $2))::int as n`,
      [trader, `0x${"0".repeat(64)}`]
    )) as [{ n: number }]
    const answer = await api.get(`/api/markets/11/trades?trader=${trader.toUpperCase().replace("0X", "0x")}`)
    expect(answer.body.meta.count).toBe(n)
    expect(answer.body.data.every((t: any) => t.trader === trader)).toBe(true)
    const page1 = await api.get("/api/markets/11/trades?limit=3")
    const page2 = await api.get("/api/markets/11/trades?limit=3&offset=3")
    const all = await api.get("/api/markets/11/trades?limit=6")
    expect([...ids(page1, "txHash"), ...ids(page2, "txHash")]).toEqual(ids(all, "txHash"))
  })

  it("answers 404 for an unknown market and 400 for bad parameters", async () => {
    expect((await api.get("/api/markets/404/trades")).body.error).toBe("MarketNotFound")
    const badTrader = await api.get("/api/markets/11/trades?trader=0x1234")
    expect(badTrader.status).toBe(400)
    expect(badTrader.body.error).toBe("InvalidAddress")
    expect(badTrader.body.message).toContain('"trader"')
    expect((await api.get("/api/markets/11/trades?source=amm")).body.error).toBe("InvalidParameter")
  })
})

describe("GET /api/markets/{id}/prices", () => {
  it("lists the price snapshots oldest first with noPrice = 1 - yesPrice and the open interest", async () => {
    const rows = await api.sql(
      `select block_number::int, log_index, timestamp::int, yes_price::text, source, open_interest::text
         from price_snapshot where market_id = 5 order by block_number, log_index`
    )
    const answer = await api.get("/api/markets/5/prices?limit=100")
    expect(answer.body.meta.count).toBe(rows.length)
    expect(answer.body.data).toEqual(
      rows.map((r) => ({
        blockNumber: r["block_number"],
        logIndex: r["log_index"],
        timestamp: r["timestamp"],
        yesPrice: six(r["yes_price"]),
        noPrice: six(1_000_000n - BigInt(r["yes_price"])),
        source: r["source"],
        openInterest: six(r["open_interest"])
      }))
    )
  })

  it("filters by source and time range; from after to is a 400 naming from", async () => {
    const hook = await api.get("/api/markets/5/prices?source=hook_amm&limit=100")
    expect(hook.body.data.every((p: any) => p.source === "hook_amm")).toBe(true)
    const [{ first, last }] = (await api.sql(
      `select min(timestamp)::int as first, max(timestamp)::int as last from price_snapshot where market_id = 5`
    )) as [{ first: number; last: number }]
    const window = await api.get(`/api/markets/5/prices?from=${first + 1}&to=${last - 1}&limit=100`)
    expect(window.body.data.every((p: any) => p.timestamp > first && p.timestamp < last)).toBe(true)
    const none = await api.get(`/api/markets/5/prices?from=${last + 1}`)
    expect(none.body).toEqual({ data: [], meta: { limit: 20, offset: 0, count: 0 } })
    const reversed = await api.get("/api/markets/5/prices?from=20&to=10")
    expect(reversed.status).toBe(400)
    expect(reversed.body.message).toContain('"from"')
  })
})

describe("GET /api/markets/{id}/candles", () => {
  it("gives hourly OHLC equal to the snapshots in each bucket, and router volume", async () => {
    const expected = await api.sql(
      `with s as (select (timestamp / 3600) * 3600 as bucket, yes_price, block_number, log_index from price_snapshot where market_id = 15),
            o as (select bucket, (array_agg(yes_price order by block_number, log_index))[1] as open, max(yes_price) as high,
                         min(yes_price) as low, (array_agg(yes_price order by block_number desc, log_index desc))[1] as close
                  from s group by bucket),
            v as (select (timestamp / 3600) * 3600 as bucket, sum(case when trade_type in (0, 2) then amount_in else amount_out end) as volume,
                         count(*) as trades from trade where market_id = 15 group by 1)
       select coalesce(o.bucket, v.bucket)::int as bucket, o.open::text, o.high::text, o.low::text, o.close::text,
              coalesce(v.volume, 0)::text as volume, coalesce(v.trades, 0)::int as trades
       from o full join v on v.bucket = o.bucket order by 1`
    )
    const answer = await api.get("/api/markets/15/candles?timeframe=1h&limit=100")
    expect(answer.body.meta.count).toBe(expected.length)
    expect(answer.body.data).toEqual(
      expected.map((r) => ({
        timeframe: "1h",
        timestamp: r["bucket"],
        open: r["open"] === null ? null : six(r["open"]),
        high: r["high"] === null ? null : six(r["high"]),
        low: r["low"] === null ? null : six(r["low"]),
        close: r["close"] === null ? null : six(r["close"]),
        volume: six(r["volume"]),
        tradeCount: r["trades"]
      }))
    )
    // One hand-checked bucket of the recording: market 5's single daily candle.
    const daily = await api.get("/api/markets/5/candles?timeframe=1d")
    expect(daily.body.data).toEqual([
      {
        timeframe: "1d",
        timestamp: 1767225600,
        open: "0.543047",
        high: "0.611619",
        low: "0.456599",
        close: "0.568923",
        volume: "1081.534794",
        tradeCount: 8
      }
    ])
  })

  it("starts weekly buckets on Monday 00:00 UTC", async () => {
    const weekly = await api.get("/api/markets/5/candles?timeframe=1w")
    const start = new Date(weekly.body.data[0].timestamp * 1000)
    expect(start.getUTCDay()).toBe(1)
    expect(start.getUTCHours()).toBe(0)
    expect(weekly.body.data[0].timestamp).toBe(Date.UTC(2025, 11, 29) / 1000)
  })

  it("defaults to 1h, filters from/to, and rejects an unknown timeframe naming it", async () => {
    const hourly = await api.get("/api/markets/15/candles?limit=100")
    expect(hourly.body.data.every((c: any) => c.timeframe === "1h")).toBe(true)
    const late = await api.get("/api/markets/15/candles?timeframe=1h&from=1767300000&limit=100")
    expect(late.body.data.every((c: any) => c.timestamp >= 1767300000)).toBe(true)
    const bad = await api.get("/api/markets/15/candles?timeframe=2h")
    expect(bad.status).toBe(400)
    expect(bad.body.message).toContain('"timeframe"')
    expect(bad.body.message).toContain('"1m", "5m", "15m", "1h", "4h", "1d", "1w"')
  })
})

describe("GET /api/markets/{id}/price-delta and /volume-window", () => {
  it("measures the windows back from the indexed head's time", async () => {
    const [{ head }] = (await api.sql(`select max(timestamp)::int as head from indexed_block`)) as [{ head: number }]
    const start = head - 3_600
    const snapshot = async (where: string, order: string) =>
      (
        await api.sql(
          `select yes_price::text as p, timestamp::int as t from price_snapshot where market_id = 15 and ${where} order by ${order} limit 1`
        )
      )[0]
    const latest = await snapshot(`timestamp <= ${head}`, "timestamp desc, block_number desc, log_index desc")
    const baseline =
      (await snapshot(`timestamp <= ${start}`, "timestamp desc, block_number desc, log_index desc")) ??
      (await snapshot(`timestamp > ${start}`, "timestamp, block_number, log_index"))
    const delta = await api.get("/api/markets/15/price-delta?window=1")
    const change = BigInt(latest!["p"]) - BigInt(baseline!["p"])
    expect(delta.body).toEqual({
      data: {
        marketId: "15",
        windowHours: 1,
        windowStart: start,
        windowEnd: head,
        currentYesPrice: six(latest!["p"]),
        previousYesPrice: six(baseline!["p"]),
        absolute: six(change),
        percentBps: Number((change * 10_000n) / BigInt(baseline!["p"])),
        latestAt: latest!["t"],
        baselineAt: baseline!["t"]
      },
      meta: null
    })
    expect(delta.body.data.currentYesPrice).toBe("0.398933")

    const [recent] = await api.sql(
      `select coalesce(sum(case when trade_type in (0, 2) then amount_in else amount_out end), 0)::text as v, count(*)::int as n
         from trade where market_id = 15 and timestamp > $1 and timestamp <= $2`,
      [start, head]
    )
    const volume = await api.get("/api/markets/15/volume-window?window=1")
    expect(volume.body.data).toEqual({
      marketId: "15",
      windowHours: 1,
      windowStart: start,
      windowEnd: head,
      volume: six(recent!["v"]),
      tradeCount: recent!["n"]
    })
    expect(recent!["n"]).toBeGreaterThan(0)
    // The whole history fits in 720 hours: the window volume is the market's volume.
    const all = await api.get("/api/markets/15/volume-window?window=720")
    expect(all.body.data.volume).toBe("1566.000000")
    expect(all.body.data.tradeCount).toBe(13)
  })

  it("defaults to 24 hours, answers zero (never null) without trades, and keeps window within 1..720", async () => {
    const quiet = await api.get("/api/markets/1/volume-window")
    expect(quiet.body.data).toMatchObject({ windowHours: 24, volume: "0.000000", tradeCount: 0 })
    const flat = await api.get("/api/markets/1/price-delta")
    expect(flat.body.data.absolute).toBe("0.000000")
    for (const window of ["0", "721", "-1", "1.5", "24h", ""]) {
      const answer = await api.get(`/api/markets/1/price-delta?window=${encodeURIComponent(window)}`)
      expect(answer.status, window).toBe(400)
      expect(answer.body.message).toContain('"window"')
    }
  })
})

describe("GET /api/markets/{id}/orderbook", () => {
  it("groups the live orders by side and price, best first", async () => {
    const markets = await api.sql(
      `select distinct market_id::int as id from exchange_order where status in ('OPEN', 'PARTIALLY_FILLED') order by 1`
    )
    expect(markets.length).toBeGreaterThan(0)
    for (const { id } of markets as Array<{ id: number }>) {
      const levels = await api.sql(
        `select side, price::text, sum(amount - filled)::text as open, count(*)::int as orders from exchange_order
          where market_id = $1 and status in ('OPEN', 'PARTIALLY_FILLED') group by side, price
          order by side, case when side in (0, 2) then -price else price end`,
        [id]
      )
      const of = (side: number) =>
        levels
          .filter((l) => l["side"] === side)
          .map((l) => ({ price: six(l["price"]), tick: Number(BigInt(l["price"]) / 10_000n), amount: six(l["open"]), orders: l["orders"] }))
      const answer = await api.get(`/api/markets/${id}/orderbook`)
      expect(answer.body.meta).toBeNull()
      expect(answer.body.data).toEqual({
        marketId: String(id),
        yes: { bids: of(0), asks: of(1) },
        no: { bids: of(2), asks: of(3) },
        bestBidYes: of(0)[0]?.price ?? null,
        bestAskYes: of(1)[0]?.price ?? null,
        bestBidNo: of(2)[0]?.price ?? null,
        bestAskNo: of(3)[0]?.price ?? null
      })
    }
  })

  it("is empty, not missing, for a market without live orders", async () => {
    const [{ id }] = (await api.sql(
      `select min(id)::int as id from market m where not exists (select 1 from order_book_level l where l.market_id = m.id)`
    )) as [{ id: number }]
    const answer = await api.get(`/api/markets/${id}/orderbook`)
    expect(answer.body.data).toMatchObject({ yes: { bids: [], asks: [] }, no: { bids: [], asks: [] }, bestBidYes: null })
  })
})

describe("GET /api/markets/{id}/positions", () => {
  const user = "0xa0ee7a142d267c1f36714e4a8f75612f20a79720"

  it("gives a known user's position with the balances their ERC-20 transfers left", async () => {
    const [balances] = await api.sql(
      `select coalesce((select balance from token_holder where token = m.yes_token and holder = $1), 0)::text as yes,
              coalesce((select balance from token_holder where token = m.no_token and holder = $1), 0)::text as no
         from market m where m.id = 16`,
      [user]
    )
    const [cost] = await api.sql(
      `select coalesce(sum(amount_in) filter (where trade_type = 0), 0)::text as yes, coalesce(sum(amount_in) filter (where trade_type = 2), 0)::text as no,
              coalesce(sum(amount_out) filter (where trade_type = 0), 0)::text as yes_bought,
              coalesce(sum(amount_out) filter (where trade_type = 2), 0)::text as no_bought,
              count(*) filter (where trade_type in (1, 3))::int as sells
         from trade where market_id = 16 and recipient = $1`,
      [user]
    )
    const answer = await api.get(`/api/markets/16/positions?address=${user}`)
    expect(answer.body.meta).toEqual({ limit: 20, offset: 0, count: 1 })
    expect(cost!["sells"]).toBe(0)
    expect(answer.body.data[0]).toEqual({
      marketId: "16",
      user,
      yesBalance: six(balances!["yes"]),
      noBalance: six(balances!["no"]),
      yesCost: six(cost!["yes"]),
      noCost: six(cost!["no"]),
      realizedPnl: "0.000000"
    })
    // This user only bought through the router here: the balances are what those trades delivered.
    expect(answer.body.data[0]).toMatchObject({ yesBalance: six(cost!["yes_bought"]), noBalance: six(cost!["no_bought"]) })
    expect(answer.body.data[0]).toMatchObject({ yesBalance: "66.228048", noBalance: "878.395700" })
  })

  it("lists every position row, largest holdings first, ties by address, never a negative balance", async () => {
    const rows = await api.sql(
      `select user_address as u from position where market_id = 28 order by yes_balance + no_balance desc, user_address`
    )
    const answer = await api.get("/api/markets/28/positions?limit=100")
    expect(ids(answer, "user")).toEqual(rows.map((r) => r["u"]))
    expect(rows.length).toBeGreaterThan(3)
    expect(answer.body.data.every((p: any) => !p.yesBalance.startsWith("-") && !p.noBalance.startsWith("-"))).toBe(true)
    const nobody = await api.get("/api/markets/21/positions?address=0x000000000000000000000000000000000000dead")
    expect(nobody.body).toEqual({ data: [], meta: { limit: 20, offset: 0, count: 0 } })
  })
})

describe("GET /api/markets/{id}/amm-state and /liquidity", () => {
  it("prices the pool from sqrtPriceX96 exactly as the hook reported after the pool's last swap", async () => {
    const cases = await api.sql(
      `select p.market_id::int as id, s.yes_price::text as hook_price
         from amm_pool p join lateral (select yes_price, block_number from price_snapshot
           where market_id = p.market_id and source = 'hook_amm' order by block_number desc, log_index desc limit 1) s on true
        where s.block_number = p.updated_block`
    )
    expect(cases.length).toBeGreaterThan(5)
    for (const { id, hook_price } of cases as Array<{ id: number; hook_price: string }>) {
      const answer = await api.get(`/api/markets/${id}/amm-state`)
      expect(answer.body.data.yesPrice, `market ${id}`).toBe(six(hook_price))
    }
    const state = await api.get("/api/markets/15/amm-state")
    expect(state.body.data).toMatchObject({
      marketId: "15",
      initialized: true,
      sqrtPriceX96: "50813166777605707339815962975",
      tick: -8884,
      fee: 8388608,
      tickSpacing: 60,
      yesIsCurrency0: true,
      yesPrice: "0.411332"
    })
  })

  it("sums the liquidity positions per tick range", async () => {
    const rows = await api.sql(
      `select pool_id, tick_lower, tick_upper, sum(liquidity)::text as l, count(*)::int as n from liquidity_position where market_id = 8
        group by 1, 2, 3 order by 1, 2, 3`
    )
    const answer = await api.get("/api/markets/8/liquidity")
    expect(answer.body.data.map((r: any) => [r.poolId, r.tickLower, r.tickUpper, r.liquidity, r.positions])).toEqual(
      rows.map((r) => [r["pool_id"], r["tick_lower"], r["tick_upper"], r["l"], r["n"]])
    )
    // Full-range liquidity is always in range.
    expect(answer.body.data.filter((r: any) => r.tickLower === -887220).every((r: any) => r.inRange)).toBe(true)
  })

  it("answers 404 MarketNotFound for an unknown market", async () => {
    expect((await api.get("/api/markets/77/amm-state")).body.error).toBe("MarketNotFound")
    expect((await api.get("/api/markets/77/liquidity")).body.error).toBe("MarketNotFound")
    expect((await api.get("/api/markets/77/orderbook")).status).toBe(404)
    expect((await api.get("/api/markets/77/positions")).status).toBe(404)
    expect((await api.get("/api/markets/77/candles")).status).toBe(404)
    expect((await api.get("/api/markets/77/prices")).status).toBe(404)
    expect((await api.get("/api/markets/77/price-delta")).status).toBe(404)
    expect((await api.get("/api/markets/77/volume-window")).status).toBe(404)
  })
})
