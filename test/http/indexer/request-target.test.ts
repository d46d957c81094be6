/** The one parse of a request target that routing, decoding and the answer cache share. */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { parseTarget, percentDecode } from "../../../http/core/request-target.js"

describe("parseTarget", () => {
  it("reads origin- and absolute-form targets by their path and query", () => {
    for (const raw of ["/api/health?x=1", "http://example.com/api/health?x=1", "HTTPS://h:8080/api/health?x=1"]) {
      expect(parseTarget(raw)).toEqual({ segments: ["api", "health"], query: [["x", "1"]], url: "/api/health?x=1", utf8: true })
    }
    expect(parseTarget("http://example.com")?.url).toBe("/")
    expect(parseTarget("http://example.com?limit=1")?.url).toBe("/?limit=1")
    expect(parseTarget("*")).toBeUndefined()
    expect(parseTarget("ftp://example.com/api/health")).toBeUndefined()
  })

  it("decodes each segment and pair once, leniently, and encodes them once", () => {
    expect(parseTarget("/api/%6Darkets/%zz")).toEqual({
      segments: ["api", "markets", "%zz"],
      query: [],
      url: "/api/markets/%25zz",
      utf8: true
    })
    expect(parseTarget("/a/1%2F2;x=y")?.segments).toEqual(["a", "1/2;x=y"])
    expect(parseTarget("/a/1%2F2;x=y")?.url).toBe("/a/1%2F2%3Bx%3Dy")
    expect(parseTarget("/a?q=a+b%2Bc&&limit&=v")?.query).toEqual([
      ["q", "a b+c"],
      ["limit", ""],
      ["", "v"]
    ])
    expect(parseTarget("/a?q=a+b%2Bc&&limit&=v")?.url).toBe("/a?q=a%20b%2Bc&limit=&=v")
    // Raw bytes arrive as Latin-1 characters (Node's reading of the request line): UTF-8 decoded.
    expect(parseTarget("/a/\u00c3\u00a4")?.segments).toEqual(["a", "\u00e4"])
    expect(percentDecode("%ff%C3%A4", false)).toBe("\ufffd\u00e4")
    expect(percentDecode("100%", false)).toBe("100%")
    expect(parseTarget("/api/markets/1#frag")?.segments).toEqual(["api", "markets", "1"])
    // Whether every decoded byte sequence was UTF-8 (the backend refuses targets where one was not).
    expect(parseTarget("/a?q=%C3%A4&r=%zz")?.utf8).toBe(true)
    expect(parseTarget("/a?q=%ff")?.utf8).toBe(false)
    expect(parseTarget("/a/%ED%A0%80")?.utf8).toBe(false)
  })

  it("is a fixed point: the canonical URL parses to itself", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 60 }), (text) => {
        const raw = `/${text.replace(/#/g, "")}`.replace(/[\ud800-\udfff]/g, "x")
        const once = parseTarget(raw)!
        const twice = parseTarget(once.url)!
        // The canonical URL holds U+FFFD where the raw one held bytes that are not UTF-8.
        expect({ ...twice, utf8: once.utf8 }).toEqual(once)
      }),
      { numRuns: 2_000, seed: 3 }
    )
  })
})
