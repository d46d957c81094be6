/**
 * The sink on a real Postgres: a reverted reorg leaves exactly the state before it, and the
 * replacing branch ends in the same tables as indexing the final chain from scratch.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Logger, LogLevel, Redacted } from "effect"
import type { DomainEvent } from "../../schema/domain-events.js"
import { applyBatch, type LocatedEvent } from "../../pipeline/batch.js"
import { revertTo } from "../../pipeline/sink.js"
import { pgClientLayer } from "../../src/db/database.js"
import { runMigrations } from "../../src/db/migrations.js"
import { scratchDatabaseUrl } from "../support/postgres.js"

const A = (n: number) => `0x${n.toString(16).padStart(40, "0")}`
const H = (n: number) => `0x${n.toString(16).padStart(64, "0")}`
const ROUTER = A(0xf00d)
const protocol = { has: (a: string) => a === ROUTER }
const ev = (block: number, logIndex: number, event: DomainEvent): LocatedEvent => ({ event, at: { block, timestamp: 1_700_000_000 + block, txHash: H(block * 100 + logIndex), logIndex, address: A(0xd1a) } })
const trade = (recipient: string, tradeType: 0 | 1 | 2 | 3, amountIn: bigint, amountOut: bigint): DomainEvent => ({
  _tag: "Trade", marketId: 1n, trader: recipient, recipient, tradeType, amountIn, amountOut, clobFilled: 0n, ammFilled: amountOut, builder: null
})

const block10 = [
  ev(10, 0, { _tag: "MarketCreated", marketId: 1n, creator: A(1), oracle: A(9), yesToken: A(10), noToken: A(11), endTime: 2_000_000_000n, question: "Q?" }),
  ev(10, 1, { _tag: "PositionSplit", marketId: 1n, user: A(1), amount: 100_000_000n })
]
const block11 = [ev(11, 0, trade(A(2), 0, 10_000_000n, 18_000_000n)), ev(11, 1, { _tag: "Hook_MarketTraded", marketId: 1n, trader: A(2), isBuy: true, usdcVolume: 10_000_000n, yesVolume: 18_000_000n, yesPrice: 560_000n, noPrice: 440_000n })]
const block12 = [ev(12, 0, trade(A(3), 2, 7_000_000n, 12_000_000n)), ev(12, 1, { _tag: "PositionSplit", marketId: 1n, user: A(3), amount: 5_000_000n })]
const block11b = [ev(11, 0, trade(A(4), 0, 3_000_000n, 5_000_000n))]

const cp = (block: number, fork = 0) => ({ chainId: 130, block, hash: H(block + fork * 1000), digest: H(block), head: 20 })

const dump = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const tables = ["market", "position", "user_stats", "protocol_stats", "trade", "price_snapshot"]
  const out: Record<string, unknown> = {}
  for (const t of tables) out[t] = yield* sql.unsafe(`select * from ${t} order by 1, 2`)
  out["checkpoint"] = yield* sql.unsafe(`select block_number, block_hash from indexer_checkpoint`)
  return out
})

const withDb = <A, E>(body: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const url = yield* scratchDatabaseUrl
      return yield* Effect.provide(Effect.zipRight(runMigrations(), body), pgClientLayer(Redacted.make(url)))
    })
  ).pipe(Logger.withMinimumLogLevel(LogLevel.Warning))

describe("sink", () => {
  it.live("a reorg is undone to the common ancestor exactly, and the new branch equals indexing it from scratch", () =>
    Effect.gen(function* () {
      const reorged = yield* withDb(
        Effect.gen(function* () {
          yield* applyBatch(block10, cp(10), protocol, undefined) // finalized: no undo
          const atAncestor = yield* dump
          yield* applyBatch(block11, cp(11), protocol, 11)
          yield* applyBatch(block12, cp(12), protocol, 12)
          yield* revertTo({ chainId: 130, block: 10, hash: H(10), digest: H(10) })
          expect(yield* dump).toEqual(atAncestor)
          yield* applyBatch(block11b, cp(11, 1), protocol, 11)
          return yield* dump
        })
      )
      const scratch = yield* withDb(
        Effect.gen(function* () {
          yield* applyBatch(block10, cp(10), protocol, undefined)
          yield* applyBatch(block11b, cp(11, 1), protocol, undefined)
          return yield* dump
        })
      )
      expect(reorged).toEqual(scratch)
      expect((reorged["protocol_stats"] as Array<Record<string, string>>)[0]).toMatchObject({ total_trades: "1", total_volume: "3000000" })
    })
  )
})
