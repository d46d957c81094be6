import * as fc from "fast-check"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { findAncestor, reconcile, ReorgTooDeep, Window, type Header } from "../../pipeline/reorg.js"

const hash = (n: number, fork: number) => `0x${fork.toString(16).padStart(8, "0")}${n.toString(16).padStart(56, "0")}`
/** Blocks from..to of `fork`, branching off fork 0 at `base` (fork 0 below it). */
const chain = (from: number, to: number, fork = 0, base = 0): Array<Header> =>
  Array.from({ length: to - from + 1 }, (_, i) => {
    const n = from + i
    const f = n > base ? fork : 0
    const pf = n - 1 > base ? fork : 0
    return { number: n, hash: hash(n, f), parentHash: hash(n - 1, pf), timestamp: n }
  })

const windowOf = (headers: Array<Header>) => headers.slice(1).reduce((w, h) => w.push(h), new Window(headers[0]!))

describe("head reconciliation", () => {
  const w = windowOf(chain(100, 110))
  it("tells the five cases apart", () => {
    expect(reconcile(w, chain(110, 110)[0]!)._tag).toBe("Duplicate")
    expect(reconcile(w, chain(105, 105)[0]!)._tag).toBe("Behind")
    expect(reconcile(w, chain(111, 111)[0]!)._tag).toBe("Next")
    expect(reconcile(w, chain(115, 115)[0]!)).toEqual({ _tag: "Gap", from: 111, to: 114 })
    expect(reconcile(w, chain(111, 111, 1, 108)[0]!)._tag).toBe("Reorg")
    expect(reconcile(w, chain(109, 109, 1, 107)[0]!)._tag).toBe("Reorg") // a shorter branch
  })

  it("finds the common ancestor of any branch within the window, and refuses deeper ones naming depth and window", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 100, max: 110 }), fc.integer({ min: 0, max: 5 }), async (forkPoint, extra) => {
        const branch = chain(forkPoint + 1, Math.max(110 + extra, forkPoint + 1), 1, forkPoint)
        const head = branch[branch.length - 1]!
        const byHash = new Map(branch.map((h) => [h.hash, h]))
        const parentOf = (h: Header) => Effect.succeed(byHash.get(h.parentHash)!)
        const { ancestor, branch: replayed } = await Effect.runPromise(findAncestor(w, head, parentOf))
        expect(ancestor.number).toBe(forkPoint)
        expect(replayed.map((h) => h.number)).toEqual(branch.map((h) => h.number))
        // After rewinding, the branch extends the window block by block.
        replayed.reduce((win, h) => win.push(h), w.rewindTo(ancestor.number))
      })
    )
    const deep = chain(100, 112, 2, 99)
    const byHash = new Map(deep.map((h) => [h.hash, h]))
    const error = await Effect.runPromise(
      Effect.flip(findAncestor(w, deep[deep.length - 1]!, (h) => Effect.succeed(byHash.get(h.parentHash)!)))
    )
    expect(error).toBeInstanceOf(ReorgTooDeep)
    expect(error.message).toMatch(/finalized block 100 .*10 in the window/)
  })

  it("finalizing drops what can no longer change", () => {
    const f = w.finalize(105)
    expect(f.finalized.number).toBe(105)
    expect(f.headers.map((h) => h.number)).toEqual([106, 107, 108, 109, 110])
    expect(f.at(104)).toBeUndefined()
    expect(w.finalize(200).tip.number).toBe(110)
  })
})
