import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { classify, isTransient, RangeTooLarge } from "../../pipeline/source/errors.js"
import { grow, initialRange, shrink } from "../../pipeline/source/ranges.js"

describe("classifying provider failures by shape", () => {
  it.each([
    ["Infura", { code: -32005, message: "query returned more than 10000 results" }, {}],
    [
      "Alchemy",
      {
        code: -32602,
        message:
          "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters and the response size limit, this block range should work: [0xc5dc00, 0xc614a7]"
      },
      { suggested: { from: 0xc5dc00, to: 0xc614a7 }, maxBlocks: 2000 }
    ],
    ["QuickNode", { code: -32614, message: "eth_getLogs is limited to a 10,000 range" }, { maxBlocks: 10_000 }],
    ["Ankr", { code: -32600, message: "block range is too wide" }, {}],
    [
      "a node with max results",
      { code: -32005, message: "query exceeds max results 20000, retry with the range 24383075-24383096" },
      { suggested: { from: 24383075, to: 24383096 } }
    ],
    ["a gateway", { httpStatus: 400, message: "exceed maximum block range: 5000" }, { maxBlocks: 5000 }],
    ["Chainstack", { code: -32000, message: "ranges over 10000 blocks are not supported on freemium" }, { maxBlocks: 10_000 }]
  ])("%s range errors are RangeTooLarge with what they suggest", (_name, failure, extra) => {
    const error = classify(failure)
    expect(error._tag).toBe("RangeTooLarge")
    expect(error).toMatchObject(extra)
    expect(isTransient(error)).toBe(false)
  })

  it.each([
    [{ httpStatus: 429, message: "Too Many Requests" }, "RateLimited"],
    [{ code: -32005, message: "You have exceeded your request limit" }, "RateLimited"],
    [{ code: 429, message: "Your app has exceeded its compute units per second capacity" }, "RateLimited"],
    [{ httpStatus: 503, message: "Service Unavailable" }, "ServerError"],
    [{ code: -32603, message: "internal error" }, "ServerError"],
    [{ httpStatus: 504, message: "Gateway Timeout" }, "Timeout"],
    [{ code: -32000, message: "header not found" }, "UnknownBlock"],
    [{ code: -32602, message: "invalid argument 0: hex string has length 3, want 40 for common.Address" }, "RequestRejected"]
  ])("%o is %s", (failure, tag) => {
    expect(classify(failure)._tag).toBe(tag)
  })
})

describe("adaptive ranges", () => {
  const rangeError = (extra: Partial<ConstructorParameters<typeof RangeTooLarge>[0]> = {}) =>
    new RangeTooLarge({ message: "too big", ...extra })

  it("doubles on success, halves on a plain range error, and stops at one block", () => {
    let state = initialRange({ initial: 1000, max: 100_000, forgetAfter: 16, targetLogs: 5_000 })
    state = grow(state)
    expect(state.size).toBe(2000)
    state = shrink(state, 2000, rangeError())!
    expect(state.size).toBe(1000)
    expect(shrink({ ...state, size: 1 }, 1, rangeError())).toBeUndefined()
  })

  it("sizes ranges by log density: down to about targetLogs after a dense answer, holding near it, doubling when sparse", () => {
    const policy = { initial: 1000, max: 100_000, forgetAfter: 16, targetLogs: 5_000 }
    let state = initialRange(policy)
    state = grow(state, policy, 20_000, 1000)
    expect(state.size).toBe(250)
    state = grow(state, policy, 3_000, 250)
    expect(state.size).toBe(250)
    state = grow(state, policy, 100, 250)
    expect(state.size).toBe(500)
  })

  it("uses a suggested range only when smaller, and never grows past a stated cap", () => {
    const state = initialRange({ initial: 4000, max: 100_000, forgetAfter: 16, targetLogs: 5_000 })
    expect(shrink(state, 4000, rangeError({ suggested: { from: 10, to: 109 } }))!.size).toBe(100)
    expect(shrink(state, 4000, rangeError({ suggested: { from: 10, to: 9009 } }))!.size).toBe(2000)
    let capped = shrink(state, 4000, rangeError({ maxBlocks: 3000 }))!
    expect(capped.size).toBe(3000)
    for (let i = 0; i < 100; i++) capped = grow(capped)
    expect(capped.size).toBe(3000)
  })

  it("always makes progress: any sequence of outcomes keeps the size in [1, max] and below a stated cap", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(fc.constant("ok" as const), fc.record({ max: fc.option(fc.integer({ min: 1, max: 50_000 }), { nil: undefined }) }))
        ),
        (steps) => {
          let state = initialRange()
          for (const step of steps) {
            if (step === "ok") state = grow(state)
            else {
              const next = shrink(state, state.size, rangeError(step.max === undefined ? {} : { maxBlocks: step.max }))
              if (next === undefined) {
                expect(state.size).toBe(1)
                state = initialRange()
                continue
              }
              expect(next.size).toBeLessThan(state.size)
              state = next
            }
            expect(state.size).toBeGreaterThanOrEqual(1)
            expect(state.size).toBeLessThanOrEqual(100_000)
            if (state.statedCap !== undefined) expect(state.size).toBeLessThanOrEqual(state.statedCap)
          }
        }
      )
    )
  })
})
