/**
 * Exchange orders and matches, the per-transaction trade breakdown, and AMM liquidity by provider
 * and as events, against the indexed fixture.
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
  const negative = value < 0n
  const digits = (negative ? -value : value).toString().padStart(7, "0")
  return `${negative ? "-" : ""}${digits.slice(0, -6)}.${digits.slice(-6)}`
}

const SIDES = ["BUY_YES", "SELL_YES", "BUY_NO", "SELL_NO"]

describe("GET /api/exchange/orders", () => {
  it("lists every order newest placed first, ties by id, with the status derived from the fills", async () => {
    const rows = await api.sql(`select id, amount::text, filled::text, status from exchange_order order by placed_block desc, id`)
    const seen: Array<any> = []
    for (let offset = 0; offset < rows.length; offset += 40)
      seen.push(...(await api.get(`/api/exchange/orders?limit=40&offset=${offset}`)).body.data)
    expect(seen.map((o) => o.orderId)).toEqual(rows.map((r) => r["id"]))
    // Matches fill both of their orders: an order's filled amount is the sum of its matches.
    const matched = await api.sql(
      `select o.id, coalesce((select sum(amount) from order_match m where m.maker_order_id = o.id or m.taker_order_id = o.id), 0)::text as matched
         from exchange_order o`
    )
    const matchedBy = new Map(matched.map((m) => [m["id"], m["matched"]]))
    for (const order of seen) {
      expect(order.filled, order.orderId).toBe(six(matchedBy.get(order.orderId)))
      const amount = BigInt(order.amount.replace(".", ""))
      const filled = BigInt(order.filled.replace(".", ""))
      if (order.status !== "CANCELLED") {
        expect(order.status).toBe(filled === amount ? "FILLED" : filled > 0n ? "PARTIALLY_FILLED" : "OPEN")
        expect(order.remaining).toBe(six(amount - filled))
      } else {
        expect(order.remaining).toBe("0.000000")
        expect(order.cancelledAt).not.toBeNull()
      }
    }
    const statuses = new Set(seen.map((o) => o.status))
    expect([...statuses].sort()).toEqual(["CANCELLED", "FILLED", "OPEN", "PARTIALLY_FILLED"].filter((s) => statuses.has(s)))
  })

  it("filters by marketId (decimal or hex), owner, status and side", async () => {
    const [row] = await api.sql(`select market_id::int as m, owner from exchange_order order by placed_block limit 1`)
    const market = row!["m"] as number
    const [{ n }] = (await api.sql(`select count(*)::int as n from exchange_order where market_id = $1`, [market])) as [{ n: number }]
    const byDecimal = await api.get(`/api/exchange/orders?marketId=${market}&limit=100`)
    const byHex = await api.get(`/api/exchange/orders?marketId=0x${market.toString(16).padStart(64, "0")}&limit=100`)
    expect(byDecimal.body.meta.count).toBe(n)
    expect(byHex.body).toEqual(byDecimal.body)
    const owner = await api.get(`/api/exchange/orders?owner=${row!["owner"]}&status=OPEN&side=SELL_YES&limit=100`)
    const [{ k }] = (await api.sql(`select count(*)::int as k from exchange_order where owner = $1 and status = 'OPEN' and side = 1`, [
      row!["owner"]
    ])) as [{ k: number }]
    expect(owner.body.meta.count).toBe(k)
    expect(owner.body.data.every((o: any) => o.owner === row!["owner"] && o.status === "OPEN" && o.side === "SELL_YES")).toBe(true)
    const none = await api.get("/api/exchange/orders?marketId=999")
    expect(none.body).toEqual({ data: [], meta: { limit: 20, offset: 0, count: 0 } })
  })

  it("rejects malformed filters naming them", async () => {
    for (const [query, error, name] of [
      ["status=open", "InvalidParameter", "status"],
      ["status=PENDING", "InvalidParameter", "status"],
      ["side=BUY", "InvalidParameter", "side"],
      ["owner=alice", "InvalidAddress", "owner"],
      ["marketId=-3", "InvalidMarketId", "marketId"]
    ] as const) {
      const answer = await api.get(`/api/exchange/orders?${query}`)
      expect(answer.status, query).toBe(400)
      expect(answer.body.error).toBe(error)
      expect(answer.body.message).toContain(`"${name}"`)
    }
  })
})

describe("GET /api/exchange/orders/{orderId}", () => {
  it("answers one order from its OrderPlaced row, any case in", async () => {
    const [row] = await api.sql(
      `select id, market_id::text as m, owner, side, price::text, amount::text, placed_block::int as b, placed_tx from exchange_order
        where status = 'PARTIALLY_FILLED' or status = 'FILLED' order by placed_block limit 1`
    )
    const answer = await api.get(`/api/exchange/orders/${String(row!["id"]).toUpperCase().replace("0X", "0x")}`)
    expect(answer.body.meta).toBeNull()
    expect(answer.body.data).toMatchObject({
      orderId: row!["id"],
      marketId: row!["m"],
      owner: row!["owner"],
      side: SIDES[row!["side"]],
      price: six(row!["price"]),
      amount: six(row!["amount"]),
      placedBlock: row!["b"],
      placedTx: row!["placed_tx"]
    })
  })

  it("says OrderNotFound (404) for an unknown id and InvalidParameter (400) for a malformed one", async () => {
    const missing = await api.get(`/api/exchange/orders/0x${"ab".repeat(32)}`)
    expect(missing.status).toBe(404)
    expect(missing.body.error).toBe("OrderNotFound")
    const bad = await api.get("/api/exchange/orders/12345")
    expect(bad.status).toBe(400)
    expect(bad.body).toMatchObject({ error: "InvalidParameter" })
    expect(bad.body.message).toContain('"orderId"')
  })
})

describe("GET /api/exchange/matches", () => {
  it("lists the match records newest first and filters them", async () => {
    const rows = await api.sql(
      `select tx_hash, log_index, match_type, maker_order_id, taker_order_id from order_match order by block_number desc, log_index desc`
    )
    const answer = await api.get("/api/exchange/matches?limit=100")
    expect(answer.body.meta.count).toBe(rows.length)
    expect(answer.body.data.map((m: any) => [m.txHash, m.logIndex, m.matchType])).toEqual(
      rows.map((r) => [r["tx_hash"], r["log_index"], ["COMPLEMENTARY", "MINT", "MERGE"][r["match_type"]]])
    )
    const maker = rows[0]!["maker_order_id"] as string
    const ofOrder = await api.get(`/api/exchange/matches?orderId=${maker}`)
    expect(ofOrder.body.data.every((m: any) => m.makerOrderId === maker || m.takerOrderId === maker)).toBe(true)
    expect(ofOrder.body.meta.count).toBe(rows.filter((r) => r["maker_order_id"] === maker || r["taker_order_id"] === maker).length)
    const mints = await api.get("/api/exchange/matches?matchType=MINT&limit=100")
    expect(mints.body.meta.count).toBe(rows.filter((r) => r["match_type"] === 1).length)
    expect((await api.get("/api/exchange/matches?matchType=SWAP")).status).toBe(400)
  })
})

describe("GET /api/trades/{txHash}/breakdown", () => {
  it("splits a router trade's fill into its CLOB and AMM parts, with the matches behind the CLOB part", async () => {
    const [trade] = await api.sql(
      `select tx_hash, amount_out::text, clob_filled::text, amm_filled::text, block_number::int as b from trade where clob_filled > 0 and amm_filled > 0
        order by block_number limit 1`
    )
    const tx = trade!["tx_hash"] as string
    const matches = await api.sql(`select sum(amount)::text as total, count(*)::int as n from order_match where tx_hash = $1`, [tx])
    const answer = await api.get(`/api/trades/${tx}/breakdown`)
    const data = answer.body.data
    expect(data).toMatchObject({
      txHash: tx,
      blockNumber: trade!["b"],
      amountOut: six(trade!["amount_out"]),
      clobFilled: six(trade!["clob_filled"]),
      ammFilled: six(trade!["amm_filled"]),
      clobShare: six((BigInt(trade!["clob_filled"]) * 1_000_000n) / BigInt(trade!["amount_out"]))
    })
    expect(data.trades).toHaveLength(1)
    expect(data.matches).toHaveLength(matches[0]!["n"])
    // Every share the CLOB delivered was matched in this transaction (MINT/MERGE fills count the shares once).
    expect(data.matches.length).toBeGreaterThan(0)
  })

  it("answers a transaction with no trade as NotFound and a malformed hash as InvalidParameter", async () => {
    const none = await api.get(`/api/trades/0x${"0".repeat(64)}/breakdown`)
    expect(none.status).toBe(404)
    expect(none.body.error).toBe("NotFound")
    const bad = await api.get("/api/trades/0xnothex/breakdown")
    expect(bad.status).toBe(400)
    expect(bad.body.message).toContain('"txHash"')
  })
})

describe("GET /api/liquidity/positions/{address} and /api/liquidity/events", () => {
  it("lists a provider's positions by market and their add/remove history", async () => {
    const [top] = await api.sql(`select owner, count(*)::int as n from liquidity_position group by owner order by n desc, owner limit 1`)
    const provider = top!["owner"] as string
    const rows = await api.sql(
      `select market_id::text as m, pool_id, tick_lower, tick_upper, salt, liquidity::text as l from liquidity_position where owner = $1
        order by market_id, pool_id, tick_lower, tick_upper, salt`,
      [provider]
    )
    const answer = await api.get(`/api/liquidity/positions/${provider}?limit=100`)
    expect(answer.body.data.map((p: any) => [p.marketId, p.poolId, p.tickLower, p.tickUpper, p.salt, p.liquidity])).toEqual(
      rows.map((r) => [r["m"], r["pool_id"], r["tick_lower"], r["tick_upper"], r["salt"], r["l"]])
    )
    // A position's liquidity is the sum of its events' deltas.
    const first = answer.body.data[0]
    const events = await api.get(`/api/liquidity/events?provider=${provider}&marketId=${first.marketId}&limit=100`)
    const sum = events.body.data
      .filter(
        (e: any) => e.poolId === first.poolId && e.tickLower === first.tickLower && e.tickUpper === first.tickUpper && e.salt === first.salt
      )
      .reduce((total: bigint, e: any) => total + BigInt(e.liquidityDelta), 0n)
    expect(sum.toString()).toBe(first.liquidity)
    const none = await api.get(`/api/liquidity/positions/0x${"0".repeat(40)}`)
    expect(none.body).toEqual({ data: [], meta: { limit: 20, offset: 0, count: 0 } })
  })

  it("lists liquidity events newest first with add and remove filters", async () => {
    const [counts] = await api.sql(
      `select count(*)::int as all, count(*) filter (where liquidity_delta > 0)::int as adds, count(*) filter (where liquidity_delta < 0)::int as removes from liquidity_event`
    )
    const all = await api.get("/api/liquidity/events?limit=100")
    expect(all.body.meta.count).toBe(counts!["all"])
    const blocks = all.body.data.map((e: any) => e.blockNumber * 10_000 + e.logIndex)
    expect(blocks).toEqual([...blocks].sort((a, b) => b - a))
    expect((await api.get("/api/liquidity/events?type=add")).body.meta.count).toBe(counts!["adds"])
    const removes = await api.get("/api/liquidity/events?type=remove&limit=100")
    expect(removes.body.meta.count).toBe(counts!["removes"])
    expect(removes.body.data.every((e: any) => e.type === "remove" && e.liquidityDelta.startsWith("-"))).toBe(true)
    expect((await api.get("/api/liquidity/events?type=burn")).status).toBe(400)
  })
})
