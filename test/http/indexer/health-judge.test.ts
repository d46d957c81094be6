/** The judgement behind /api/health (`health-watch.ts`), as a pure function of what the database and the node said. */
import { describe, expect, it } from "vitest"
import { judge } from "../../../http/indexer/health-watch.js"

const settings = { rpcUrl: "http://127.0.0.1:8545", maxLagBlocks: 5, maxStaleSeconds: 10 }
const now = 1_000_000
const base = {
  chainId: 130,
  progress: { block: 100, recordedHead: 100, indexedAgeSeconds: 1, indexerAgeSeconds: 1 },
  progressAgeMs: 0,
  node: { block: 100, at: now - 500, error: null },
  settings,
  now,
  startedAt: now - 60_000
}

describe("health's judgement", () => {
  it("is ok when the index is at the node's head and both have spoken lately", () => {
    expect(judge(base)).toEqual({
      status: "ok",
      chainId: 130,
      latestIndexedBlock: 100,
      headBlock: 100,
      lagBlocks: 0,
      indexedAgeSeconds: 1,
      indexerAgeSeconds: 1,
      rpcAgeSeconds: 0.5,
      problems: []
    })
  })

  it("compares with the node's head, not the indexer's own record of it", () => {
    const stalled = judge({ ...base, node: { block: 160, at: now - 200, error: null } })
    expect(stalled).toMatchObject({ status: "degraded", headBlock: 160, lagBlocks: 60 })
    expect(stalled.problems).toEqual(["index 60 blocks behind the head (bound 5)"])
    expect(judge({ ...base, node: { block: 105, at: now, error: null } }).status).toBe("ok")
  })

  it("turns degraded when the indexer stops reporting, its age growing since the read", () => {
    const silent = judge({ ...base, progress: { ...base.progress, indexerAgeSeconds: 9 }, progressAgeMs: 1_500 })
    expect(silent.indexerAgeSeconds).toBe(10.5)
    expect(silent.problems).toEqual(["the indexer last reported progress 10.5 s ago (bound 10 s)"])
    const never = judge({ ...base, progress: { ...base.progress, indexerAgeSeconds: null } })
    expect(never.problems).toEqual(["the indexer has not reported progress (bound 10 s)"])
    // Just started: not yet.
    expect(judge({ ...base, progress: { ...base.progress, indexerAgeSeconds: null }, startedAt: now - 2_000 }).status).toBe("ok")
  })

  it("turns degraded when the node stops answering, saying why", () => {
    const dead = judge({ ...base, node: { block: 100, at: now - 12_000, error: "fetch failed" } })
    expect(dead.rpcAgeSeconds).toBe(12)
    expect(dead.problems).toEqual(["the node last answered 12 s ago (bound 10 s): fetch failed"])
    const never = judge({ ...base, node: { block: null, at: null, error: "no answer within 2000 ms" } })
    expect(never).toMatchObject({ status: "degraded", headBlock: 100, rpcAgeSeconds: null })
    expect(never.problems).toEqual(["the node has not answered (bound 10 s): no answer within 2000 ms"])
  })

  it("without a node uses the indexer's record, and without settings judges nothing stale", () => {
    expect(judge({ ...base, node: undefined })).toMatchObject({ status: "ok", headBlock: 100, rpcAgeSeconds: null })
    const old = { ...base, progress: { ...base.progress, indexerAgeSeconds: 5_000 }, node: undefined, settings: undefined }
    expect(judge(old)).toMatchObject({ status: "ok", indexerAgeSeconds: 5_000, problems: [] })
    expect(judge({ ...base, progress: { block: null, recordedHead: null, indexedAgeSeconds: null, indexerAgeSeconds: 1 } })).toMatchObject({
      latestIndexedBlock: null,
      lagBlocks: null
    })
  })
})
