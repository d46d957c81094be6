/** The per-head answer cache on its own: what it keeps, for how long, and how much. */
import { describe, expect, it } from "vitest"
import { HeadCache } from "../../../http/indexer/response-cache.js"

const head = (block: number, hash = `0x${block.toString(16).padStart(64, "0")}`) => ({ block, hash })
const bytes = (text: string) => new TextEncoder().encode(text)

describe("HeadCache", () => {
  it("serves an answer only while the head it was stored under stands", () => {
    const cache = new HeadCache(100_000, 1_000)
    expect(cache.get(head(5), "/a")).toBeUndefined()
    cache.set(head(5), "/a", bytes("five"))
    expect(cache.get(head(5), "/a")).toEqual(bytes("five"))
    // A new block, or the same number with another hash (a reorg), empties it.
    expect(cache.get(head(6), "/a")).toBeUndefined()
    cache.set(head(6), "/a", bytes("six"))
    expect(cache.get(head(6, `0x${"e".repeat(64)}`), "/a")).toBeUndefined()
    expect(cache.size).toBe(0)
  })

  it("drops an answer computed under a head that has moved on meanwhile", () => {
    const cache = new HeadCache(100_000, 1_000)
    cache.get(head(7), "/warm")
    cache.set(head(6), "/late", bytes("computed before block 7"))
    expect(cache.get(head(7), "/late")).toBeUndefined()
  })

  it("keeps answers of at most maxEntryBytes within maxBytes in all, the oldest going first", () => {
    // 7/8 of 8 KiB for answers: each 1,000-byte answer costs about 1,140 bytes, so six fit.
    const cache = new HeadCache(8 * 1024, 1_000)
    const h = head(1)
    cache.get(h, "/")
    for (let i = 1; i <= 10; i++) cache.set(h, `/${i}`, new Uint8Array(1_000))
    expect(cache.size).toBe(6)
    expect(cache.bytes).toBeLessThanOrEqual(8 * 1024)
    expect(cache.get(h, "/4")).toBeUndefined()
    expect(cache.get(h, "/10")).toBeDefined()
    cache.set(h, "/big", new Uint8Array(1_001))
    expect(cache.get(h, "/big")).toBeUndefined()
  })

  it("a flood of aliases stays within its eighth and evicts no answer", () => {
    const cache = new HeadCache(64 * 1024)
    const h = head(1)
    cache.get(h, "/")
    cache.set(h, "key", bytes("answer"))
    for (let i = 0; i < 10_000; i++) cache.setAlias(h, `/api/markets?n=${"%31".repeat(i % 300)}${i}`, "key")
    expect(cache.get(h, "key")).toEqual(bytes("answer"))
    expect(cache.bytes).toBeLessThanOrEqual(64 * 1024)
    expect(cache.aliasOf(h, `/api/markets?n=${"%31".repeat(9_999 % 300)}9999`)).toBe("key")
    // A URL too long to be worth remembering is not.
    cache.setAlias(h, `/${"x".repeat(2_000)}`, "key")
    expect(cache.aliasOf(h, `/${"x".repeat(2_000)}`)).toBeUndefined()
  })
})
