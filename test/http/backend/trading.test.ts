/**
 * Trading and portfolio endpoints on the indexed fixture: the indexer's derived values (read
 * through its own API here) in the backend's shapes, and bad input.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startHarness, type Harness } from "./support/harness.js"

let h: Harness
const hex = (id: number | string) => `0x${BigInt(id).toString(16).padStart(64, "0")}`
const indexer = async (path: string) => (await (await fetch(`${h.indexerUrl}${path}`)).json()) as any
let trader: string
/** Token balances per holder and market (ERC-20 transfers), as `b`. */
const BALANCES = `with b as (select holder as user_address, market_id, coalesce(sum(balance) filter (where side = 'YES'), 0) as yes_balance,
  coalesce(sum(balance) filter (where side = 'NO'), 0) as no_balance from token_holder group by holder, market_id)`

beforeAll(async () => {
  h = await startHarness()
  const [row] = await h.sql<{ trader: string }>("select trader from trade group by trader order by count(*) desc, trader limit 1")
  trader = row!.trader
})

afterAll(async () => {
  await h?.close()
})

describe("users and portfolios", () => {
  it("profile is the indexer's user stats, in Money", async () => {
    const profile = (await h.get(`/api/users/${trader.toUpperCase().replace("0X", "0x")}/profile`)).body.data
    const stats = (await indexer(`/api/user-stats/${trader}`)).data
    expect(profile.address).toBe(trader)
    expect(profile.volume.decimal).toBe(stats.volume)
    expect(profile.tradeCount).toBe(stats.tradeCount)
    expect(profile.realizedPnl.decimal).toBe(stats.realizedPnl)
    expect((await h.get("/api/users/0x1234/profile")).body.code).toBe("INVALID_ADDRESS")
    const malformed = (await h.get("/api/trading/0xABZZ/portfolio")).body
    expect(malformed.code, "a malformed address in a path").toBe("INVALID_ADDRESS")
    expect(malformed.message, "the refusal quotes the address as sent, not lowercased").toContain('"0xABZZ"')
  })

  it("portfolio, positions and pnl are the indexer's", async () => {
    const [holder] = await h.sql<{ user_address: string; market_id: string }>(
      "select user_address, market_id from position where yes_balance > 0 or no_balance > 0 order by user_address, market_id limit 1"
    )
    const address = holder!.user_address
    const portfolio = (await h.get(`/api/trading/${address}/portfolio`)).body.data
    const theirs = (await indexer(`/api/portfolio/${address}`)).data
    expect(portfolio.openPositions).toBe(theirs.openPositions)
    expect(portfolio.value.decimal).toBe(theirs.value)
    expect(portfolio.positions.map((p: any) => [p.marketId, p.yesBalance.decimal, p.noBalance.decimal])).toEqual(
      theirs.positions.map((p: any) => [hex(p.marketId), p.yesBalance, p.noBalance])
    )
    const position = (await h.get(`/api/trading/${address}/positions/${holder!.market_id}`)).body.data
    expect(position.marketId).toBe(hex(holder!.market_id))
    expect(position.yesBalance.unit).toBe("YES")
    const pnl = (await h.get(`/api/trading/${address}/pnl`)).body.data
    const theirPnl = (await indexer(`/api/portfolio/${address}/pnl`)).data
    expect([pnl.realizedPnl.decimal, pnl.totalPnl.decimal, pnl.tradeCount]).toEqual([
      theirPnl.realizedPnl,
      theirPnl.totalPnl,
      theirPnl.tradeCount
    ])
    const none = (await h.get(`/api/trading/0x${"0".repeat(39)}1/positions/1`)).body.data
    expect(none.yesBalance.raw).toBe("0")
    expect((await h.get(`/api/trading/${address}/positions/999999`)).body.code).toBe("MARKET_NOT_FOUND")
    expect((await h.get(`/api/trading/${address}/positions/abc`)).body.code).toBe("INVALID_MARKET_ID")
  })

  it("a user's trades: every share move of its positions (the ledger's journal), newest first", async () => {
    const trades = await h.get(`/api/trading/${trader}/trades?limit=100`)
    const [n] = await h.sql<{ n: string }>(`select count(*) as n from position_move where user_address = $1`, [trader])
    expect(trades.body.meta.pagination.total).toBe(Number(n!.n))
    const blocks = trades.body.data.map((t: any) => t.blockNumber)
    expect(blocks).toEqual([...blocks].sort((a, b) => b - a))
    const oneMarket = await h.get(`/api/trading/${trader}/trades?marketId=${trades.body.data[0].marketId}`)
    expect(oneMarket.body.data.every((t: any) => t.marketId === trades.body.data[0].marketId)).toBe(true)
  })

  it("orders and their fills", async () => {
    const [order] = await h.sql<{ id: string; owner: string }>(
      "select o.id, o.owner from exchange_order o where exists (select 1 from order_match m where m.maker_order_id = o.id) order by o.id limit 1"
    )
    const orders = await h.get(`/api/trading/${order!.owner}/orders?limit=100`)
    const theirs = await indexer(`/api/exchange/orders?owner=${order!.owner}&limit=100`)
    expect(orders.body.meta.pagination.total).toBe(theirs.meta.count)
    expect(orders.body.data.map((o: any) => [o.orderId, o.remaining.decimal, o.status])).toEqual(
      theirs.data.map((o: any) => [o.orderId, o.remaining, o.status])
    )
    const fills = await h.get(`/api/orders/${order!.id}/fills`)
    const theirFills = await indexer(`/api/exchange/matches?orderId=${order!.id}`)
    expect(fills.body.meta.pagination.total).toBe(theirFills.meta.count)
    expect(fills.body.data.length).toBeGreaterThan(0)
    expect((await h.get(`/api/orders/0x${"ab".repeat(32)}/fills`)).body.code).toBe("NOT_FOUND")
    expect((await h.get("/api/orders/0x12/fills")).body.code).toBe("VALIDATION_FAILED")
    expect((await h.get(`/api/trading/${order!.owner}/orders?status=LIVE`)).body.code).toBe("VALIDATION_FAILED")
  })

  it("trade breakdown", async () => {
    const [tx] = await h.sql<{ tx_hash: string }>("select tx_hash from trade where clob_filled > 0 order by block_number limit 1")
    const breakdown = (await h.get(`/api/trades/${tx!.tx_hash}/breakdown`)).body.data
    const theirs = (await indexer(`/api/trades/${tx!.tx_hash}/breakdown`)).data
    expect([breakdown.clobFilled, breakdown.ammFilled, breakdown.clobShare]).toEqual([
      theirs.clobFilled,
      theirs.ammFilled,
      theirs.clobShare
    ])
    expect(breakdown.fills.length).toBe(theirs.matches.length)
    expect((await h.get(`/api/trades/0x${"cd".repeat(32)}/breakdown`)).status).toBe(404)
  })

  it("redemption quote: winning side less the fee when resolved, min(YES, NO) in refund mode", async () => {
    const [resolved] = await h.sql<{ user_address: string; market_id: string; yes_balance: string; no_balance: string; outcome: boolean }>(
      `${BALANCES} select b.user_address, b.market_id, b.yes_balance, b.no_balance, m.outcome from b join market m on m.id = b.market_id
       where m.is_resolved and (b.yes_balance > 0 or b.no_balance > 0) order by b.market_id, b.user_address limit 1`
    )
    expect(resolved).toBeDefined()
    if (resolved !== undefined) {
      const quote = (await h.get(`/api/trading/${resolved.user_address}/redemption-quote/${resolved.market_id}`)).body.data
      const winning = BigInt(resolved.outcome ? resolved.yes_balance : resolved.no_balance)
      expect(quote.mode).toBe("redeem")
      expect(BigInt(quote.payout.raw) + BigInt(quote.fee.raw)).toBe(winning)
      expect(BigInt(quote.fee.raw)).toBe((winning * BigInt(quote.feeBps)) / 10_000n)
    }
    const [refunding] = await h.sql<{ user_address: string; market_id: string; yes_balance: string; no_balance: string }>(
      `${BALANCES} select b.user_address, b.market_id, b.yes_balance, b.no_balance from b join market m on m.id = b.market_id
       where m.refund_mode and not m.is_resolved and (b.yes_balance > 0 or b.no_balance > 0) order by b.market_id limit 1`
    )
    expect(refunding).toBeDefined()
    if (refunding !== undefined) {
      const quote = (await h.get(`/api/trading/${refunding.user_address}/redemption-quote/${refunding.market_id}`)).body.data
      const pairs = [BigInt(refunding.yes_balance), BigInt(refunding.no_balance)].sort((a, b) => (a < b ? -1 : 1))[0]!
      expect(quote).toMatchObject({ mode: "refund", payout: { raw: pairs.toString() } })
    }
    const [live] = await h.sql<{ id: string }>("select id from market where not is_resolved and not refund_mode order by id limit 1")
    expect((await h.get(`/api/trading/${trader}/redemption-quote/${live!.id}`)).body.data.mode).toBe("none")
    expect((await h.get(`/api/trading/nope/redemption-quote/1`)).body.code).toBe("INVALID_ADDRESS")
  })
})
