/** The derived market slug (`schema/market-slug.ts`): deterministic, unique by id, within the metadata alphabet and length. */
import { describe, expect, it } from "vitest"
import { derivedMarketSlug, derivedSlugId, marketSlug } from "../../schema/market-slug.js"

const SLUG = /^[a-z0-9]+(-[a-z0-9]+)*$/

describe("derived market slugs", () => {
  it("are the question's words plus the id, the same on every call", () => {
    expect(derivedMarketSlug("Live market #3: will it go up?", 31n)).toBe("live-market-3-will-it-go-up-31")
    expect(derivedMarketSlug("Live market #3: will it go up?", 31n)).toBe(derivedMarketSlug("Live market #3: will it go up?", 31n))
    expect(derivedMarketSlug("Sẽ có tuyết ở Hà Nội?", 7n)).toBe("se-co-tuyet-o-ha-noi-7")
    expect(derivedMarketSlug("???", 9n)).toBe("market-9")
  })

  it("differ for one question asked twice (the id), and give the id back", () => {
    const a = derivedMarketSlug("Will it rain?", 40n)
    const b = derivedMarketSlug("Will it rain?", 41n)
    expect(a).not.toBe(b)
    expect(derivedSlugId(a)).toBe(40n)
    expect(derivedSlugId(b)).toBe(41n)
    expect(derivedSlugId("eth-above-4000")).toBe(4000n)
    expect(derivedSlugId("no-digits-here")).toBeUndefined()
  })

  it("stay within 64 characters, cut at a word boundary, in the metadata alphabet", () => {
    const long = "Will the committee of the international federation approve the new regulation before the end of the season?"
    const slug = derivedMarketSlug(long, 123456n)
    expect(slug.length).toBeLessThanOrEqual(64)
    expect(slug).toMatch(SLUG)
    expect(slug.endsWith("-123456")).toBe(true)
    expect(long.toLowerCase().replace(/[^a-z0-9]+/g, "-")).toContain(slug.slice(0, -"-123456".length))
  })

  it("give way to a metadata slug", () => {
    expect(marketSlug({ id: 1n, question: "Q?", metadata: { slug: "described" } })).toBe("described")
    expect(marketSlug({ id: 1n, question: "Q?", metadata: null })).toBe("q-1")
  })
})
