/**
 * The backend's tiered cache on its own: hot entries live per head, warm ones for their 60 s
 * across heads but not across a reorg, and the whole holds at most its bytes.
 */
import { describe, expect, it } from "vitest"
import { TieredCache } from "../../../http/backend/cache.js"

const head = (block: number, hash = `0x${block.toString(16).padStart(64, "0")}`) => ({ block, hash })
const answer = (data: string) => ({ data })

describe("TieredCache", () => {
  it("hot entries go with their head, warm ones last their time across heads", () => {
    let now = 0
    const cache = new TieredCache(1 << 20, 1 << 16, () => now)
    cache.get(head(5), "")
    cache.set(head(5), "hot", "/market", answer("m5"))
    cache.set(head(5), "warm", "/leaderboard", answer("l5"))
    expect(cache.get(head(5), "/market")).toEqual(answer("m5"))
    expect(cache.get(head(6), "/market")).toBeUndefined()
    expect(cache.get(head(6), "/leaderboard")).toEqual(answer("l5"))
    now = 59_999
    expect(cache.get(head(9), "/leaderboard")).toEqual(answer("l5"))
    now = 60_000
    expect(cache.get(head(9), "/leaderboard")).toBeUndefined()
  })

  it("a head that does not move forward (a reorg) drops warm entries too", () => {
    const cache = new TieredCache(1 << 20, 1 << 16, () => 0)
    cache.get(head(5), "")
    cache.set(head(5), "warm", "/stats", answer("s"))
    expect(cache.get(head(5, `0x${"e".repeat(64)}`), "/stats")).toBeUndefined()
    cache.set(head(5, `0x${"e".repeat(64)}`), "warm", "/stats", answer("s"))
    expect(cache.get(head(4), "/stats")).toBeUndefined()
  })

  it("keeps no answer computed under a head that has moved on", () => {
    const cache = new TieredCache(1 << 20, 1 << 16, () => 0)
    cache.get(head(7), "")
    cache.set(head(6), "warm", "/late", answer("computed at 6"))
    expect(cache.get(head(7), "/late")).toBeUndefined()
  })

  it("holds at most maxBytes of keys and answers, the oldest going first, and no answer over maxEntryBytes", () => {
    const cache = new TieredCache(64 * 1024, 4_096, () => 0)
    const h = head(1)
    cache.get(h, "")
    for (let i = 0; i < 1_000; i++) {
      cache.set(h, i % 2 === 0 ? "hot" : "warm", `/markets?offset=${i}`, answer("x".repeat(1_000)))
      expect(cache.bytes).toBeLessThanOrEqual(64 * 1024)
    }
    expect(cache.size).toBeGreaterThan(20)
    expect(cache.size).toBeLessThan(40)
    expect(cache.get(h, "/markets?offset=0")).toBeUndefined()
    expect(cache.get(h, "/markets?offset=999")).toBeDefined()
    cache.set(h, "warm", "/big", answer("x".repeat(2_049)))
    expect(cache.get(h, "/big")).toBeUndefined()
  })
})
