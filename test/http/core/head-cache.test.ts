/**
 * The one head cache on its own (`http/core/head-cache.ts`), as both APIs configure it: the
 * indexer's (entries per head, URL aliases in an eighth of the bytes) and the backend's (hot
 * entries per head, warm ones for their 60 s across heads but not across a reorg); what it keeps,
 * for how long, how much, and one computation per key and head at a time.
 */
import { Deferred, Effect, Exit, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { backendCache } from "../../../http/backend/edge/cache.js"
import { HeadCache } from "../../../http/core/head-cache.js"
import { indexerCache } from "../../../http/indexer/response-cache.js"

const head = (block: number, hash = `0x${block.toString(16).padStart(64, "0")}`) => ({ block, hash })
const bytes = (text: string) => new TextEncoder().encode(text)
const answer = (data: string) => ({ data })

describe("untiered (the indexer's)", () => {
  it("serves an answer only while the head it was stored under stands", () => {
    const cache = indexerCache(100_000, 1_000)
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
    const cache = indexerCache(100_000, 1_000)
    cache.get(head(7), "/warm")
    cache.set(head(6), "/late", bytes("computed before block 7"))
    expect(cache.get(head(7), "/late")).toBeUndefined()
  })

  it("keeps answers of at most maxEntryBytes within maxBytes in all, the oldest going first", () => {
    // 7/8 of 8 KiB for answers: each 1,000-byte answer costs about 1,140 bytes, so six fit.
    const cache = indexerCache(8 * 1024, 1_000)
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

  it("a flood of aliases stays within its eighth and evicts no answer; aliases go with their head", () => {
    const cache = indexerCache(64 * 1024)
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
    expect(cache.aliasOf(head(2), `/api/markets?n=${"%31".repeat(9_999 % 300)}9999`)).toBeUndefined()
  })
})

describe("tiered (the backend's)", () => {
  it("hot entries go with their head, warm ones last their time across heads", () => {
    let now = 0
    const cache = backendCache(1 << 20, 1 << 16, () => now)
    cache.get(head(5), "")
    cache.set(head(5), "/market", answer("m5"), "hot")
    cache.set(head(5), "/leaderboard", answer("l5"), "warm")
    expect(cache.get(head(5), "/market")).toEqual(answer("m5"))
    expect(cache.get(head(6), "/market")).toBeUndefined()
    expect(cache.get(head(6), "/leaderboard")).toEqual(answer("l5"))
    now = 59_999
    expect(cache.get(head(9), "/leaderboard")).toEqual(answer("l5"))
    now = 60_000
    expect(cache.get(head(9), "/leaderboard")).toBeUndefined()
  })

  it("a hot entry lasts 2 s even under its own head", () => {
    let now = 0
    const cache = backendCache(1 << 20, 1 << 16, () => now)
    cache.get(head(5), "")
    cache.set(head(5), "/market", answer("m5"), "hot")
    now = 1_999
    expect(cache.get(head(5), "/market")).toEqual(answer("m5"))
    now = 2_000
    expect(cache.get(head(5), "/market")).toBeUndefined()
  })

  it("a head that does not move forward (a reorg) drops warm entries too", () => {
    const cache = backendCache(1 << 20, 1 << 16, () => 0)
    cache.get(head(5), "")
    cache.set(head(5), "/stats", answer("s"), "warm")
    expect(cache.get(head(5, `0x${"e".repeat(64)}`), "/stats")).toBeUndefined()
    cache.set(head(5, `0x${"e".repeat(64)}`), "/stats", answer("s"), "warm")
    expect(cache.get(head(4), "/stats")).toBeUndefined()
  })

  it("keeps no answer computed under a head that has moved on", () => {
    const cache = backendCache(1 << 20, 1 << 16, () => 0)
    cache.get(head(7), "")
    cache.set(head(6), "/late", answer("computed at 6"), "warm")
    expect(cache.get(head(7), "/late")).toBeUndefined()
  })

  it("holds at most maxBytes of keys and answers, the oldest going first, and no answer over maxEntryBytes", () => {
    const cache = backendCache(64 * 1024, 4_096, () => 0)
    const h = head(1)
    cache.get(h, "")
    for (let i = 0; i < 1_000; i++) {
      cache.set(h, `/markets?offset=${i}`, answer("x".repeat(1_000)), i % 2 === 0 ? "hot" : "warm")
      expect(cache.bytes).toBeLessThanOrEqual(64 * 1024)
    }
    expect(cache.size).toBeGreaterThan(20)
    expect(cache.size).toBeLessThan(40)
    expect(cache.get(h, "/markets?offset=0")).toBeUndefined()
    expect(cache.get(h, "/markets?offset=999")).toBeDefined()
    cache.set(h, "/big", answer("x".repeat(2_049)), "warm")
    expect(cache.get(h, "/big")).toBeUndefined()
  })
})

describe("the byte cap", () => {
  it("counts bytes, not entries: a few large values fill it, many small ones fit", () => {
    const cache = new HeadCache<string>({ maxBytes: 10_000, maxEntryBytes: 10_000, valueBytes: (v) => v.length * 2 })
    const h = head(1)
    cache.get(h, "")
    for (let i = 0; i < 5; i++) cache.set(h, `big${i}`, "x".repeat(2_000)) // ~4,136 bytes each: two fit
    expect(cache.size).toBe(2)
    expect([cache.get(h, "big3"), cache.get(h, "big4")]).toEqual(["x".repeat(2_000), "x".repeat(2_000)])
    for (let i = 0; i < 60; i++) cache.set(h, `s${i}`, "y") // ~134 bytes each: 74 would fit in all
    expect(cache.size).toBe(60)
    expect(cache.get(h, "big3")).toBeUndefined() // the oldest made room
    expect(cache.bytes).toBeLessThanOrEqual(10_000)
  })
})

describe("single flight", () => {
  const h = head(3)

  /** A computation that counts its runs and finishes when `gate` is opened. */
  const gated = (gate: Deferred.Deferred<void>, runs: { n: number }, value: string) =>
    Effect.zipRight(
      Effect.sync(() => void runs.n++),
      Effect.as(Deferred.await(gate), value)
    )

  it("concurrent misses of one key under one head run one computation; the others share its value as hits", async () => {
    const cache = backendCache(1 << 20, 1 << 16, () => 0)
    const runs = { n: 0 }
    const outcomes = await Effect.runPromise(
      Effect.gen(function* () {
        const gate = yield* Deferred.make<void>()
        const compute = Effect.map(gated(gate, runs, "q"), answer)
        const fibers = yield* Effect.forEach(Array.from({ length: 10 }), () =>
          Effect.fork(cache.through(h, "/quote", compute, (a) => a, { tier: "hot" }))
        )
        yield* Effect.yieldNow()
        expect(cache.computing).toBe(1)
        yield* Deferred.succeed(gate, undefined)
        return yield* Effect.forEach(fibers, Fiber.join)
      })
    )
    expect(runs.n).toBe(1)
    expect(outcomes.filter((o) => o._tag === "Miss")).toHaveLength(1)
    expect(outcomes.filter((o) => o._tag === "Hit").map((o) => (o._tag === "Hit" ? o.value : undefined))).toEqual(
      Array.from({ length: 9 }, () => answer("q"))
    )
    expect(cache.computing).toBe(0)
    expect(cache.get(h, "/quote")).toEqual(answer("q"))
  })

  it("another key, or the same key under another head, is a computation of its own", async () => {
    const cache = indexerCache(1 << 20)
    const runs = { n: 0 }
    await Effect.runPromise(
      Effect.gen(function* () {
        const gate = yield* Deferred.make<void>()
        const compute = Effect.map(gated(gate, runs, "v"), bytes)
        const a = yield* Effect.fork(cache.through(h, "/a", compute, (b) => b))
        const b = yield* Effect.fork(cache.through(h, "/b", compute, (b) => b))
        const c = yield* Effect.fork(cache.through(head(4), "/a", compute, (b) => b))
        yield* Effect.yieldNow()
        expect(cache.computing).toBe(3)
        yield* Deferred.succeed(gate, undefined)
        yield* Effect.forEach([a, b, c], Fiber.join)
      })
    )
    expect(runs.n).toBe(3)
  })

  it("when the computation fails, or gives nothing to keep, each waiter computes its own", async () => {
    const cache = backendCache(1 << 20, 1 << 16, () => 0)
    const runs = { n: 0 }
    const exits = await Effect.runPromise(
      Effect.gen(function* () {
        const gate = yield* Deferred.make<void>()
        const failing = Effect.zipRight(gated(gate, runs, ""), Effect.fail("indexer down" as const))
        const leader = yield* Effect.fork(cache.through(h, "/m", failing, (a) => a, { tier: "hot" }))
        yield* Effect.yieldNow()
        const waiters = yield* Effect.forEach(Array.from({ length: 3 }), () =>
          Effect.fork(cache.through(h, "/m", failing, (a) => a, { tier: "hot" }))
        )
        yield* Effect.yieldNow()
        expect(runs.n).toBe(1)
        yield* Deferred.succeed(gate, undefined)
        return yield* Effect.forEach([leader, ...waiters], Fiber.await)
      })
    )
    expect(exits.every(Exit.isFailure)).toBe(true)
    expect(runs.n).toBe(4)

    // A value the caller does not keep (say an error answer) is not shared either.
    const notKept = { n: 0 }
    const outcomes = await Effect.runPromise(
      Effect.gen(function* () {
        const gate = yield* Deferred.make<void>()
        const compute = gated(gate, notKept, "404")
        const fibers = yield* Effect.forEach(Array.from({ length: 3 }), () =>
          Effect.fork(cache.through(h, "/n", compute, () => undefined, { tier: "hot" }))
        )
        yield* Effect.yieldNow()
        yield* Deferred.succeed(gate, undefined)
        return yield* Effect.forEach(fibers, Fiber.join)
      })
    )
    expect(notKept.n).toBe(3)
    expect(outcomes.every((o) => o._tag === "Miss")).toBe(true)
    expect(cache.size).toBe(0)
  })

  it("without lookup (the backend's open breaker) nothing held is served, and the value is still stored", async () => {
    const cache = backendCache(1 << 20, 1 << 16, () => 0)
    cache.get(h, "")
    cache.set(h, "/p", answer("old"), "warm")
    const served = await Effect.runPromise(cache.through(h, "/p", Effect.succeed(answer("new")), (a) => a, { tier: "warm", lookup: false }))
    expect(served).toEqual({ _tag: "Miss", result: answer("new") })
    expect(cache.get(h, "/p")).toEqual(answer("new"))
  })
})
