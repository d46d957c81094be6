/**
 * The indexer breaker with the real indexer stopped, and cache entries dropped when the indexed
 * head moves (the indexer's NOTIFY). Short breaker timings so the test sees every state.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CircuitBreaker } from "../../../http/backend/edge/breaker.js"
import { encodeIndexedPayload } from "../../../schema/indexed-notify.js"
import { startHarness, type Harness } from "./support/harness.js"

let h: Harness

beforeAll(async () => {
  h = await startHarness({ breakerThreshold: 2, breakerOpenForMs: 60_000, probeEveryMs: 200 })
})

afterAll(async () => {
  await h?.close()
})

const waitFor = async (check: () => Promise<boolean>, ms = 10_000) => {
  const until = Date.now() + ms
  while (Date.now() < until) {
    if (await check()) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error("condition not reached")
}

describe("cache and the indexed head", () => {
  it("a new head (the indexer's NOTIFY) drops the entries of the old one", async () => {
    const path = "/api/markets/1"
    await h.get(path)
    expect((await h.get(path)).headers.get("x-cache")).toBe("HIT")
    const [head] = await h.sql<{ block_number: string }>("select block_number from indexer_checkpoint where chain_id = 130")
    // The payload as the indexer encodes it (a payload that is not one is ignored by every listener).
    const next = { chainId: 130, block: Number(head!.block_number) + 1, hash: `0x${"ab".repeat(32)}`, reverted: false }
    await h.sql("select pg_notify('predix_indexed', $1)", [encodeIndexedPayload(next)])
    await waitFor(async () => (await h.get(path)).headers.get("x-cache") === "MISS")
    expect((await h.get(path)).headers.get("x-cache")).toBe("HIT")
  })
})

describe("breaker", () => {
  it("opens when the indexer stops and answers INDEXER_UNAVAILABLE 503 fast", async () => {
    expect((await h.get("/api/markets")).status).toBe(200)
    await h.stopIndexer()
    await waitFor(async () => (await h.get("/api/markets?limit=1")).status === 503)
    const started = Date.now()
    const answer = await h.get("/api/markets/1/trades")
    expect(Date.now() - started).toBeLessThan(1_000)
    expect(answer.status).toBe(503)
    expect(answer.body).toMatchObject({ error: "INDEXER_UNAVAILABLE", code: "INDEXER_UNAVAILABLE" })
    // Cached answers are not served past an open breaker either.
    expect((await h.get("/api/markets/1")).status).toBe(503)
  })
})

describe("CircuitBreaker states", () => {
  it("closed -> open after the threshold -> half-open trial -> closed or open again", () => {
    let now = 0
    const b = new CircuitBreaker({ threshold: 3, openForMs: 1_000 }, () => now)
    b.failure()
    b.failure()
    expect(b.admit()).toBe(true)
    b.failure()
    expect(b.state).toBe("open")
    expect(b.admit()).toBe(false)
    now = 1_000
    expect(b.admit()).toBe(true)
    expect(b.state).toBe("half-open")
    expect(b.admit()).toBe(false) // one trial at a time
    b.failure()
    expect(b.state).toBe("open")
    now = 2_500
    expect(b.admit()).toBe(true)
    b.success()
    expect(b.state).toBe("closed")
    expect(b.admit()).toBe(true)
  })

  it("a success in between resets the count", () => {
    const b = new CircuitBreaker({ threshold: 2, openForMs: 1_000 }, () => 0)
    b.failure()
    b.success()
    b.failure()
    expect(b.state).toBe("closed")
  })
})
