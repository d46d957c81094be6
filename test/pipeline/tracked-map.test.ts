/**
 * TrackedMap, the in-place fold's record of what it touched: while tracking, the first use of a
 * key (get, has, set or delete) records the key's value before it, later uses change nothing
 * recorded; untracked, it is a plain Map.
 */
import { describe, expect, it } from "vitest"
import { TrackedMap } from "../../pipeline/row-cache.js"

describe("TrackedMap", () => {
  it("records each key's value before its first use while tracking, and nothing otherwise", () => {
    const map = new TrackedMap<string, { n: number } | null>()
    const a = { n: 1 }
    map.set("a", a)
    map.set("gone", { n: 2 })
    expect(map.touched).toBeUndefined()

    map.touched = new Map()
    expect(map.get("a")).toBe(a)
    map.set("a", { n: 10 })
    expect(map.has("missing")).toBe(false)
    map.set("new", { n: 3 })
    map.set("new", { n: 4 })
    expect(map.delete("gone")).toBe(true)
    map.set("dropped", null)
    expect(map.has("dropped")).toBe(true)

    expect([...map.touched]).toEqual([
      ["a", a],
      ["missing", undefined],
      ["new", undefined],
      ["gone", { n: 2 }],
      ["dropped", undefined]
    ])
    expect(map.get("a")).toEqual({ n: 10 })
    expect(map.get("gone")).toBeUndefined()
    expect(map.size).toBe(3)

    map.touched = undefined
    map.set("later", { n: 5 })
    expect(map.has("later")).toBe(true)
  })
})
