/**
 * Rewards and social on the indexed fixture, over real HTTP: points, quests, leaderboard and
 * traders equal an independent model of the rules over the raw rows (support/rewards-model.ts);
 * referral codes apply once at sign-in (first wins, never oneself); tags count the indexed
 * markets; the session endpoints need a session and never share a cached answer between users.
 */
import { readFile } from "node:fs/promises"
import type { LocalAccount } from "viem"
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { POINT_RULES, rulesTable } from "../../../schema/protocol/point-rules.js"
import { DEVNET_MNEMONIC } from "../../../tools/devnet/anvil.js"
import { FIXTURE_METADATA } from "../../../src/display-metadata.js"
import { startHarness, type Harness } from "./support/harness.js"
import { asModelRows, loadChainRows, modelBoard, modelPoints } from "./support/rewards-model.js"

let h: Harness
const account = (index: number) => mnemonicToAccount(DEVNET_MNEMONIC, { addressIndex: index })
/** Anvil accounts that trade in the fixture; #8 is its busiest on-chain referrer, #4 referred #8 on chain, #7 referred #9. */
const R = account(8)
const A4 = account(4)
const A7 = account(7)
const A9 = account(9)
const lower = (a: { address: string }) => a.address.toLowerCase()

beforeAll(async () => {
  h = await startHarness()
}, 120_000)
afterAll(async () => {
  await h?.close()
})

const cookieOf = (answer: { headers: Headers }) =>
  answer.headers
    .getSetCookie()
    .find((c) => c.startsWith("predix_session="))
    ?.slice("predix_session=".length)
    .split(";")[0]

/** Challenge, sign, verify (with `?ref=` when given): the verify answer, its cookie, and a replay of the same signature. */
const signIn = async (who: LocalAccount, ref?: string) => {
  const challenge = await h.get(`/api/auth/challenge?address=${who.address}`)
  expect(challenge.status).toBe(200)
  const signature = await who.signMessage({ message: challenge.body.data.message })
  const body = { address: who.address, signature, nonce: challenge.body.data.nonce }
  const verify = await h.call("POST", `/api/auth/verify${ref === undefined ? "" : `?ref=${encodeURIComponent(ref)}`}`, { body })
  return { verify, cookie: cookieOf(verify), again: () => h.call("POST", "/api/auth/verify", { body }) }
}

const as = (cookie: string | undefined) => ({ headers: { cookie: `predix_session=${cookie}` } })
const links = async () =>
  (await h.sql<{ referee: string; referrer: string }>(`select referee, referrer from referral_link order by referee`)).map((l) => [
    l.referee,
    l.referrer
  ])

describe("session endpoints", () => {
  it("need a session (AUTH_REQUIRED), say so in OpenAPI, and public ones do not", async () => {
    for (const path of ["/api/point", "/api/rewards", "/api/referral"]) {
      const answer = await h.get(path)
      expect(answer.status, path).toBe(401)
      expect(answer.body.code).toBe("AUTH_REQUIRED")
      expect(h.document.paths[path]!["get"]!["security" as never], path).toEqual([{ session: [] }])
    }
    for (const path of ["/api/leaderboard", "/api/traders", "/api/tags"]) {
      expect((await h.get(path)).status, path).toBe(200)
      expect(h.document.paths[path]!["get"]!["security" as never] ?? [], path).toEqual([])
    }
    // The rules table is in the OpenAPI document and, verbatim, in docs/rewards.md.
    expect(h.document.paths["/api/point"]!["get"]!["description" as never]).toContain(rulesTable())
    expect(await readFile(new URL("../../../docs/rewards.md", import.meta.url), "utf8")).toContain(rulesTable())
  })

  it("bad parameters are VALIDATION_FAILED naming them, never a 5xx", async () => {
    const { cookie } = await signIn(A4)
    for (const [path, name] of [
      ["/api/leaderboard?period=1y", "period"],
      ["/api/leaderboard?sortBy=trades", "sortBy"],
      ["/api/leaderboard?limit=101", "limit"],
      ["/api/traders?sortBy=accuracy", "sortBy"],
      ["/api/tags?x=1", "x"],
      ["/api/referral?offset=-1", "offset"]
    ] as const) {
      const answer = await h.get(path, as(cookie))
      expect(answer.status, path).toBe(400)
      expect(answer.body.code, path).toBe("VALIDATION_FAILED")
      expect(JSON.stringify(answer.body), path).toContain(name)
    }
  })
})

describe("referrals", () => {
  it("a code applies once at sign-in: first wins, never oneself, unknown codes change nothing; on-chain referrals are listed with their volume", async () => {
    const referrer = await signIn(R)
    expect(referrer.verify.status).toBe(200)
    const mine = await h.get("/api/referral", as(referrer.cookie))
    expect(mine.status).toBe(200)
    const code: string = mine.body.data.code
    expect(code).toMatch(/^[a-z0-9]{8}$/)
    expect((await h.get("/api/referral", as(referrer.cookie))).body.data.code).toBe(code) // stable
    // #8 was referred on chain by #4 (its earliest Hook_ReferralRecorded as trader).
    expect(mine.body.data.referredBy).toEqual({ address: lower(A4), via: "on-chain" })
    // The users #8 referred on chain, with the volume of those swaps, from the indexed referral table.
    const chain = await h.sql<{ trader: string; swaps: string; volume: string }>(
      `select trader, count(*) as swaps, sum(usdc_volume)::text as volume from referral where referrer = $1 and trader <> referrer group by trader order by trader`,
      [lower(R)]
    )
    expect(chain.length).toBeGreaterThan(2)
    expect(mine.body.data.referredUsers).toBe(chain.length)
    expect(
      [...mine.body.data.referred]
        .sort((a: any, b: any) => (a.address < b.address ? -1 : 1))
        .map((r: any) => [r.address, r.via, String(r.swaps), r.referredVolume.raw, r.countsForPoints])
    ).toEqual(chain.map((c) => [c.trader, "on-chain", c.swaps, c.volume, true]))
    expect(mine.body.data.referredVolume.raw).toBe(chain.reduce((sum, c) => sum + BigInt(c.volume), 0n).toString())

    // Oneself, unknown and malformed codes: VALIDATION_FAILED on `ref`, and the challenge is still unused.
    const before = await links()
    for (const [who, ref] of [
      [R, code],
      [A9, "zzzzzzzz"],
      [A9, "NOT-A-CODE"]
    ] as const) {
      const attempt = await signIn(who, ref)
      expect(attempt.verify.status, ref).toBe(400)
      expect(attempt.verify.body.code).toBe("VALIDATION_FAILED")
      expect(attempt.verify.body.details).toEqual([{ path: "ref", message: expect.any(String) }])
      expect(attempt.cookie).toBeUndefined()
      expect((await attempt.again()).status, "the refused sign-in left its challenge usable").toBe(200)
    }
    expect(await links()).toEqual(before)

    // #9 (referred on chain by #7) signs in with #8's code: the sign-in referral wins over the chain's.
    const referee = await signIn(A9, code)
    expect(referee.verify.status).toBe(200)
    expect(await links()).toEqual([[lower(A9), lower(R)]])
    // A later code changes nothing (first wins).
    const code4 = (await h.get("/api/referral", as((await signIn(A4)).cookie))).body.data.code
    expect((await signIn(A9, code4)).verify.status).toBe(200)
    expect(await links()).toEqual([[lower(A9), lower(R)]])
    // No loop: #8 signing in with the code of #9, whom it referred, links nothing.
    const code9 = (await h.get("/api/referral", as(referee.cookie))).body.data.code
    expect((await signIn(R, code9)).verify.status).toBe(200)
    expect(await links()).toEqual([[lower(A9), lower(R)]])

    const nine = (await h.get("/api/referral", as(referee.cookie))).body.data
    expect(nine.referredBy).toEqual({ address: lower(R), via: "sign-in" })
    const after = (await h.get("/api/referral", as(referrer.cookie))).body.data
    expect(after.referredUsers).toBe(chain.length + 1)
    expect(after.referred[0]).toMatchObject({ address: lower(A9), via: "sign-in", swaps: 0, countsForPoints: true }) // newest first
    // #7 still lists #9 from the chain, but #9 no longer counts for #7's points.
    const seven = (await h.get("/api/referral", as((await signIn(A7)).cookie))).body.data
    expect(seven.referred.find((r: any) => r.address === lower(A9))).toMatchObject({ via: "on-chain", countsForPoints: false })
    // Paging the referred users.
    const page = (await h.get("/api/referral?limit=2&offset=1", as(referrer.cookie))).body.data
    expect(page.referred.map((r: any) => r.address)).toEqual(after.referred.slice(1, 3).map((r: any) => r.address))
    expect(page.referredUsers).toBe(after.referredUsers)
  })
})

describe("referrals, concurrently", () => {
  it("ten simultaneous sign-ins of one user with ten codes link it once", async () => {
    const referrers = Array.from({ length: 10 }, () => privateKeyToAccount(generatePrivateKey()))
    const codes = await Promise.all(
      referrers.map(async (r) => (await h.get("/api/referral", as((await signIn(r)).cookie))).body.data.code as string)
    )
    const referee = privateKeyToAccount(generatePrivateKey())
    const signed = await Promise.all(
      codes.map(async () => {
        const challenge = await h.get(`/api/auth/challenge?address=${referee.address}`)
        return {
          address: referee.address,
          signature: await referee.signMessage({ message: challenge.body.data.message }),
          nonce: challenge.body.data.nonce
        }
      })
    )
    const answers = await Promise.all(signed.map((body, i) => h.call("POST", `/api/auth/verify?ref=${codes[i]}`, { body })))
    expect(answers.map((a) => a.status)).toEqual(codes.map(() => 200))
    const linked = await h.sql<{ referrer: string }>(`select referrer from referral_link where referee = $1`, [lower(referee)])
    expect(linked.length).toBe(1)
    expect(referrers.map(lower)).toContain(linked[0]!.referrer)
  })
})

describe("points", () => {
  it("/api/point and /api/rewards equal the model of the rules for each signed-in user, and are never served to another user from the cache", async () => {
    const sessions = await Promise.all([R, A9, A4].map(async (who) => ({ who, cookie: (await signIn(who)).cookie })))
    const rows = await loadChainRows(h.sql)
    const model = modelPoints(rows, null, true)
    const everybody = [...model.values()].reduce((sum, p) => sum + p.points, 0)
    const totals = new Set<number>()
    for (const { who, cookie } of sessions) {
      const expected = model.get(lower(who))!
      for (let i = 0; i < 2; i++) {
        // The second answer comes from the cache: it must still be this user's.
        const point = await h.get("/api/point", as(cookie))
        expect(point.status).toBe(200)
        expect(point.headers.get("x-cache")).toBe(i === 0 ? "MISS" : "HIT")
        expect(point.body.data.address).toBe(lower(who))
        expect(point.body.data.total).toBe(expected.points)
        expect(Object.fromEntries(point.body.data.breakdown.map((l: any) => [l.rule, l.count]))).toEqual(expected.counts)
        expect(point.body.data.share).toMatch(/^\d+\.\d{6}$/)
        expect(BigInt(point.body.data.share.replace(".", ""))).toBe((BigInt(expected.points) * 1_000_000n) / BigInt(everybody))
      }
      totals.add(expected.points)
      const rewards = (await h.get("/api/rewards", as(cookie))).body.data
      expect(rewards.total).toBe(expected.points)
      expect(rewards.quests.reduce((sum: number, q: any) => sum + q.earned, 0)).toBe(expected.points)
      expect(rewards.quests.find((q: any) => q.rule === "connect")).toMatchObject({ completed: true, earned: POINT_RULES.connect.points })
    }
    expect(totals.size).toBe(3) // three different answers: a shared cache entry would have shown
    // #8's referral gates: users it referred (on chain, and #9 at sign-in) who traded.
    expect(model.get(lower(R))!.counts.referralJoined).toBeGreaterThan(1)
  })
})

describe("leaderboard and traders", () => {
  it("every period and sort equals the model over the raw rows; accuracy only from the minimum of resolved markets", async () => {
    const rows = await loadChainRows(h.sql)
    for (const period of ["all", "24h", "7d"] as const) {
      const since = period === "all" ? null : rows.head - (period === "24h" ? 86_400 : 7 * 86_400)
      for (const sort of ["volume", "pnl", "accuracy", "points"] as const) {
        const answer = await h.get(`/api/leaderboard?period=${period}&sortBy=${sort}&limit=100`)
        expect(answer.status).toBe(200)
        const expected = modelBoard(rows, since, sort, 5)
        expect(asModelRows(answer.body.data), `${period} ${sort}`).toEqual(expected)
        expect(answer.body.data.map((r: any) => r.rank)).toEqual(expected.map((_, i) => i + 1))
        expect(answer.body.meta.pagination.total).toBe(expected.length)
      }
    }
    // The fixture has a board, a shorter 24 h board, and an accuracy board shorter than the volume board.
    const all = modelBoard(rows, null, "volume", 5)
    expect(all.length).toBeGreaterThan(10)
    expect(modelBoard(rows, rows.head - 86_400, "volume", 5).length).toBeLessThan(all.length)
    const accurate = modelBoard(rows, null, "accuracy", 5)
    expect(accurate.length).toBeGreaterThan(0)
    expect(accurate.every((r) => r.resolvedMarkets >= 5)).toBe(true)
    expect(all.some((r) => r.resolvedMarkets > 0 && r.resolvedMarkets < 5 && r.accuracy === null)).toBe(true)

    // Pages of 5 make up the whole board, no overlap; a page past the end is empty with the total.
    const pages: Array<any> = []
    for (let offset = 0; offset < all.length; offset += 5)
      pages.push(...(await h.get(`/api/leaderboard?limit=5&offset=${offset}`)).body.data)
    expect(pages.map((r) => r.address)).toEqual(all.map((r) => r.address))
    const past = await h.get(`/api/leaderboard?limit=5&offset=${all.length + 10}`)
    expect(past.body).toMatchObject({ data: [], meta: { pagination: { total: all.length } } })

    // Top traders: all-time, by trades.
    const traders = await h.get("/api/traders?sortBy=trades&limit=100")
    expect(asModelRows(traders.body.data)).toEqual(modelBoard(rows, null, "trades", 5))
    const firstTrade = await h.sql<{ first: string; last: string }>(
      `select min(timestamp) as first, max(timestamp) as last from trade where trader = $1`,
      [traders.body.data[0].address]
    )
    expect([traders.body.data[0].firstTradeAt, traders.body.data[0].lastTradeAt]).toEqual([
      Number(firstTrade[0]!.first),
      Number(firstTrade[0]!.last)
    ])
    // Cached in the warm tier.
    expect((await h.get("/api/traders?sortBy=trades&limit=100")).headers.get("x-cache-tier")).toBe("warm")
  })

  it("the accuracy minimum is configurable", async () => {
    const low = await startHarness({ leaderboardMinResolved: 1 })
    try {
      const rows = await loadChainRows(low.sql)
      const answer = await low.get("/api/leaderboard?sortBy=accuracy&limit=100")
      const expected = modelBoard(rows, null, "accuracy", 1)
      expect(asModelRows(answer.body.data)).toEqual(expected)
      expect(expected.length).toBeGreaterThan(modelBoard(rows, null, "accuracy", 5).length)
    } finally {
      await low.close()
    }
  }, 120_000)
})

describe("tags", () => {
  it("categories and tags count the indexed markets (active at the chain's time) and events", async () => {
    const file = JSON.parse(await readFile(FIXTURE_METADATA, "utf8")) as {
      markets: Array<{ id: string; category: string; tags?: Array<string> }>
      events: Array<{ id: string; category: string }>
    }
    const markets = new Map(
      (
        await h.sql<{ id: string; active: boolean }>(
          `select id::text, (not is_resolved and not refund_mode and end_time > (select timestamp from indexed_block order by number desc limit 1)) as active from market`
        )
      ).map((m) => [m.id, m.active])
    )
    const events = new Set((await h.sql<{ id: string }>(`select id::text from event_group`)).map((e) => e.id))
    const categories = new Map<string, { slug: string; markets: number; activeMarkets: number; events: number }>()
    const tags = new Map<string, { slug: string; markets: number; activeMarkets: number }>()
    for (const m of file.markets) {
      if (!markets.has(m.id)) continue
      const c = categories.get(m.category) ?? { slug: m.category, markets: 0, activeMarkets: 0, events: 0 }
      c.markets++
      if (markets.get(m.id)) c.activeMarkets++
      categories.set(m.category, c)
      for (const tag of m.tags ?? []) {
        const t = tags.get(tag) ?? { slug: tag, markets: 0, activeMarkets: 0 }
        t.markets++
        if (markets.get(m.id)) t.activeMarkets++
        tags.set(tag, t)
      }
    }
    for (const e of file.events) {
      if (!events.has(e.id)) continue
      const c = categories.get(e.category) ?? { slug: e.category, markets: 0, activeMarkets: 0, events: 0 }
      c.events++
      categories.set(e.category, c)
    }
    const byCount = <T extends { slug: string; markets: number }>(a: T, b: T) => b.markets - a.markets || (a.slug < b.slug ? -1 : 1)
    const answer = await h.get("/api/tags")
    expect(answer.status).toBe(200)
    expect(answer.body.data).toEqual({ categories: [...categories.values()].sort(byCount), tags: [...tags.values()].sort(byCount) })
    expect(answer.body.data.tags.length).toBeGreaterThan(10)
    expect(answer.body.data.categories.some((c: any) => c.activeMarkets > 0 && c.activeMarkets < c.markets)).toBe(true)
  })
})
