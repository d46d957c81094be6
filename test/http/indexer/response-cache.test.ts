/** The per-head answer cache on its own: what it keeps, for how long, and how much. */
import { describe, expect, it } from "vitest"
import { HeadCache } from "../../../http/indexer/response-cache.js"

const head = (block: number, hash = `0x${block.toString(16).padStart(64, "0")}`) => ({ block, hash })
const bytes = (text: string) => new TextEncoder().encode(text)

describe("HeadCache", () => {
  it("serves an answer only while the head it was stored under stands", () => {
    const cache = new HeadCache(10, 1_000)
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
    const cache = new HeadCache(10, 1_000)
    cache.get(head(7), "/warm")
    cache.set(head(6), "/late", bytes("computed before block 7"))
    expect(cache.get(head(7), "/late")).toBeUndefined()
  })

  it("keeps at most maxEntries answers of at most maxBytes, the oldest going first", () => {
    const cache = new HeadCache(3, 8)
    const h = head(1)
    cache.get(h, "/")
    for (const key of ["/1", "/2", "/3", "/4"]) cache.set(h, key, bytes(key))
    expect(cache.size).toBe(3)
    expect(cache.get(h, "/1")).toBeUndefined()
    expect(cache.get(h, "/4")).toEqual(bytes("/4"))
    cache.set(h, "/big", bytes("123456789"))
    expect(cache.get(h, "/big")).toBeUndefined()
  })
})
