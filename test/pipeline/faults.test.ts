/**
 * RPC faults do not change what is indexed: the committed fixture (reorgs included, played head
 * by head) followed through a fault-injecting proxy in front of the real replay node ends with
 * the digest and tables of a run against the node directly.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, LogLevel } from "effect"
import { makeIndexer } from "../../pipeline/run.js"
import { makeRpc } from "../../pipeline/source/rpc.js"
import { startFaultProxy } from "../support/fault-proxy.js"
import { withScratchDb } from "../support/postgres.js"
import { dumpTables } from "./dump.js"
import { servedFixture } from "../support/served-chain.js"

const dump = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return {
    ...(yield* dumpTables),
    checkpoint: yield* sql.unsafe(`select block_number, block_hash, digest from indexer_checkpoint`)
  }
})

const withDb = <A, E>(body: Effect.Effect<A, E, SqlClient.SqlClient>) => withScratchDb(body, LogLevel.None)

describe("RPC faults", () => {
  it.live(
    "429s, 5xx, slow answers, range limits, truncated bodies, wrong-block logs and empty answers change nothing",
    () =>
      Effect.gen(function* () {
        const { live, server } = yield* servedFixture
        const proxy = yield* Effect.acquireRelease(
          Effect.promise(() => startFaultProxy(server.url, { seed: 17, rate: 0.25, slowMs: 400 })),
          (p) => Effect.promise(() => p.close())
        )
        const deployment = live.meta.deployment

        const faulty = yield* withDb(
          Effect.gen(function* () {
            // A short timeout so slow answers count as timeouts; retries are what is under test.
            const rpc = makeRpc({ url: proxy.url, timeout: "250 millis", retries: 12 })
            const indexer = yield* makeIndexer({ rpc, deployment, chainId: 130, concurrency: 2 })
            let window = yield* indexer.loadWindow
            let failedSteps = 0
            // Most of the chain at once (a backfill of ranges through the faults), then the rest
            // (its second reorg included) a few heads at a time.
            live.advance(Math.floor(live.remaining * 0.6))
            while (live.remaining > 0 || window.tip.number < live.headNumber) {
              const result = yield* Effect.either(indexer.step(window))
              if (live.remaining > 0) live.advance(15)
              if (result._tag === "Right") window = result.right
              else {
                // What `follow` does: log, then carry on from what the database holds.
                failedSteps++
                window = yield* indexer.loadWindow
              }
            }
            return { tables: yield* dump, failedSteps }
          })
        )
        const clean = yield* withDb(
          Effect.gen(function* () {
            const indexer = yield* makeIndexer({ rpc: makeRpc({ url: server.url }), deployment, chainId: 130 })
            yield* indexer.step(yield* indexer.loadWindow)
            return yield* dump
          })
        )
        for (const fault of [
          "rateLimited",
          "serverError",
          "slow",
          "rangeLimit",
          "truncated",
          "wrongBlock",
          "emptyBody",
          "nullResult"
        ] as const) {
          expect(proxy.injected.get(fault) ?? 0, fault).toBeGreaterThan(0)
        }
        expect(faulty.tables).toEqual(clean)
      }).pipe(Effect.scoped),
    240_000
  )
})
