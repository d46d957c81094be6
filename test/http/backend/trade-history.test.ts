/**
 * A user's trade history reconciles with the P&L (issue 27, item 7): on the indexed fixture, for
 * every user, the backend's history (`/api/trading/:address/trades`) lists every share move its
 * portfolio counts, so per market the shares sum to the position's balances and, over all
 * markets, the USDC sums to realized P&L minus the cost basis held. CLOB fills appear in it, on
 * the taker's and on the maker's side.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startHarness, type Harness } from "./support/harness.js"

let h: Harness

beforeAll(async () => {
  h = await startHarness()
}, 180_000)

afterAll(async () => {
  await h?.close()
})

/** Every entry of a user's history, page by page. */
const history = async (address: string) => {
  const entries: Array<any> = []
  for (;;) {
    const page = await h.get(`/api/trading/${address}/trades?limit=100&offset=${entries.length}`)
    expect(page.status).toBe(200)
    entries.push(...page.body.data)
    if (entries.length >= page.body.meta.pagination.total) return entries
  }
}

describe("a user's trade history", () => {
  it("sums, for every user, to the positions and P&L the portfolio reports, CLOB fills included", async () => {
    const users = await h.sql<{ user_address: string }>("select distinct user_address from position order by user_address")
    expect(users.length).toBeGreaterThan(5)
    const sources = new Map<string, number>()
    for (const { user_address: address } of users) {
      const entries = await history(address)
      const byMarket = new Map<string, { yes: bigint; no: bigint }>()
      let usdc = 0n
      for (const e of entries) {
        sources.set(e.source, (sources.get(e.source) ?? 0) + 1)
        const sums = byMarket.get(e.marketId) ?? { yes: 0n, no: 0n }
        sums.yes += BigInt(e.yesShares.raw)
        sums.no += BigInt(e.noShares.raw)
        byMarket.set(e.marketId, sums)
        usdc += BigInt(e.usdc.raw)
      }
      const portfolio = (await h.get(`/api/trading/${address}/portfolio`)).body.data
      const pnl = (await h.get(`/api/trading/${address}/pnl`)).body.data
      for (const p of portfolio.positions) {
        const sums = byMarket.get(p.marketId) ?? { yes: 0n, no: 0n }
        expect([address, p.marketId, sums.yes.toString(), sums.no.toString()]).toEqual([
          address,
          p.marketId,
          p.yesBalance.raw,
          p.noBalance.raw
        ])
        byMarket.delete(p.marketId)
      }
      // Markets the user no longer holds: everything that came in went out.
      for (const [marketId, sums] of byMarket) expect([address, marketId, sums.yes, sums.no]).toEqual([address, marketId, 0n, 0n])
      expect([address, usdc.toString()]).toEqual([address, (BigInt(pnl.realizedPnl.raw) - BigInt(pnl.cost.raw)).toString()])
    }
    // The fixture's CLOB activity is in the histories, on both sides, beside router trades and settlements.
    for (const source of ["router", "clob_taker", "clob_maker", "split", "redeem", "transfer"])
      expect(sources.get(source) ?? 0).toBeGreaterThan(0)
  }, 300_000)

  it("lists a limit order's fill and a maker's fills with their transactions", async () => {
    const [taker] = await h.sql<{ owner: string; tx_hash: string; market_id: string }>(
      `select o.owner, m.tx_hash, m.market_id from order_match m join exchange_order o on o.id = m.taker_order_id order by m.block_number, m.log_index limit 1`
    )
    const takerEntries = await history(taker!.owner)
    expect(takerEntries.find((e) => e.txHash === taker!.tx_hash && e.source === "clob_taker")).toMatchObject({
      marketId: `0x${BigInt(taker!.market_id).toString(16).padStart(64, "0")}`
    })
    const [maker] = await h.sql<{ maker: string; n: string }>(
      "select maker, count(*) as n from order_match where maker is not null group by maker order by count(*) desc, maker limit 1"
    )
    const makerEntries = await history(maker!.maker)
    const fills = makerEntries.filter((e) => e.source === "clob_maker")
    expect(fills.length).toBeGreaterThan(0)
    for (const fill of fills) {
      expect(fill.tradeType).toMatch(/^(BUY|SELL)_(YES|NO)$/)
      expect(fill.price).not.toBeNull()
    }
  }, 120_000)
})
