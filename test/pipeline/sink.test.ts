/**
 * The sink on a real Postgres: a reverted reorg leaves exactly the state before it, and the
 * replacing branch ends in the same tables as indexing the final chain from scratch.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, LogLevel } from "effect"
import { readFile } from "node:fs/promises"
import type { DomainEvent } from "../../schema/domain-events.js"
import { applyBatch, type LocatedEvent } from "../../pipeline/batch.js"
import { revertTo } from "../../pipeline/sink.js"
import { APPEND_ONLY_TABLES, MUTABLE_TABLES } from "../../pipeline/tables.js"
import { dumpTables } from "./dump.js"
import { withScratchDb } from "../support/postgres.js"
import { reorgEqualsScratch } from "./reorg-check.js"

const A = (n: number) => `0x${n.toString(16).padStart(40, "0")}`
const H = (n: number) => `0x${n.toString(16).padStart(64, "0")}`
const ROUTER = A(0xf00d)
const protocol = { has: (a: string) => a === ROUTER, isVenue: (a: string) => a === ROUTER }
const ev = (block: number, logIndex: number, event: DomainEvent, address = A(0xd1a)): LocatedEvent => ({
  event,
  at: { block, timestamp: 1_700_000_000 + block, txHash: H(block * 100 + logIndex), logIndex, address }
})
const trade = (recipient: string, tradeType: 0 | 1 | 2 | 3, amountIn: bigint, amountOut: bigint): DomainEvent => ({
  _tag: "Trade",
  marketId: 1n,
  trader: recipient,
  recipient,
  tradeType,
  amountIn,
  amountOut,
  clobFilled: 0n,
  ammFilled: amountOut,
  builder: null
})

const block10 = [
  ev(10, 0, {
    _tag: "MarketCreated",
    marketId: 1n,
    creator: A(1),
    oracle: A(9),
    yesToken: A(10),
    noToken: A(11),
    endTime: 2_000_000_000n,
    question: "Q?"
  }),
  ev(10, 1, { _tag: "PositionSplit", marketId: 1n, user: A(1), amount: 100_000_000n })
]
const block11 = [
  ev(11, 0, trade(A(2), 0, 10_000_000n, 18_000_000n)),
  ev(11, 1, {
    _tag: "Hook_MarketTraded",
    marketId: 1n,
    trader: A(2),
    isBuy: true,
    usdcVolume: 10_000_000n,
    yesVolume: 18_000_000n,
    yesPrice: 560_000n,
    noPrice: 440_000n
  })
]
const block12 = [
  ev(12, 0, trade(A(3), 2, 7_000_000n, 12_000_000n)),
  ev(12, 1, { _tag: "PositionSplit", marketId: 1n, user: A(3), amount: 5_000_000n })
]
const block11b = [ev(11, 0, trade(A(4), 0, 3_000_000n, 5_000_000n))]

/**
 * Blocks touching every table beyond markets, positions, users and trades: holders, orders (matched before placed,
 * cancelled), book, event groups, oracles, admin history, pause state, AMM, candles.
 */
const YES = A(10)
const NO = A(11)
const ZERO = A(0)
const MANUAL = A(0x0c1)
const FEED = A(0x0c2)
const POOL = H(0x9001)
const O = (n: number) => H(0xa000 + n)
const transfer = (block: number, logIndex: number, token: string, from: string, to: string, value: bigint) =>
  ev(block, logIndex, { _tag: "Transfer", from, to, value }, token)
const lp = (block: number, logIndex: number, delta: bigint) =>
  ev(block, logIndex, {
    _tag: "ModifyLiquidity",
    id: POOL,
    sender: A(7),
    tickLower: -600,
    tickUpper: 600,
    liquidityDelta: delta,
    salt: H(0)
  })
const place = (block: number, logIndex: number, id: string, owner: string, side: 0 | 1, price: bigint, amount: bigint) =>
  ev(block, logIndex, { _tag: "OrderPlaced", orderId: id, marketId: 1n, owner, side, price, amount, builder: null })
const match = (block: number, logIndex: number, maker: string, taker: string, amount: bigint) =>
  ev(block, logIndex, {
    _tag: "OrderMatched",
    makerOrderId: maker,
    takerOrderId: taker,
    marketId: 1n,
    matchType: 0,
    amount,
    price: 550_000n,
    makerBuilder: null,
    takerBuilder: null
  })

const wide10 = [
  ...block10,
  transfer(10, 2, YES, ZERO, A(1), 100_000_000n),
  transfer(10, 3, NO, ZERO, A(1), 100_000_000n),
  ev(10, 4, { _tag: "Hook_PoolRegistered", marketId: 1n, poolId: POOL, yesToken: YES, quoteToken: A(0x20), yesIsCurrency0: true }),
  ev(10, 5, {
    _tag: "Initialize",
    id: POOL,
    currency0: YES,
    currency1: A(0x20),
    fee: 0x800000,
    tickSpacing: 60,
    hooks: A(0x30),
    sqrtPriceX96: 1n << 96n,
    tick: 0
  }),
  lp(10, 6, 1_000n),
  place(10, 7, O(1), A(1), 1, 550_000n, 10_000_000n),
  ev(10, 8, { _tag: "EventCreated", eventId: 1n, creator: A(1), endTime: 2_000_000_000n, name: "E", marketIds: [1n, 2n], oracle: null }),
  ev(10, 9, { _tag: "OracleApproved", oracle: MANUAL }),
  ev(10, 10, { _tag: "MarketRegistered", marketId: 1n, feed: A(0xfeed), threshold: -7n, gte: true, snapshotAt: 1_900_000_000n }, FEED)
]
const wide11 = [
  ...block11,
  transfer(11, 2, YES, A(1), A(2), 30_000_000n),
  match(11, 3, O(1), O(2), 4_000_000n),
  place(11, 4, O(2), A(2), 0, 600_000n, 6_000_000n),
  ev(11, 5, {
    _tag: "Swap",
    id: POOL,
    sender: ROUTER,
    amount0: -5n,
    amount1: 6n,
    sqrtPriceX96: (1n << 96n) + 1000n,
    liquidity: 1_000n,
    tick: 1,
    fee: 10_000
  }),
  lp(11, 6, 500n),
  ev(11, 7, { _tag: "ChallengeDelayUpdated", previous: 0n, current: 60n }, MANUAL),
  ev(11, 8, { _tag: "OutcomeReported", marketId: 1n, outcome: true, reporter: A(3) }, MANUAL),
  ev(11, 9, { _tag: "RoleGranted", role: H(5), account: A(3), sender: A(1) }),
  ev(11, 10, { _tag: "GlobalPaused", account: A(1) }),
  ev(11, 11, { _tag: "ModulePaused", moduleId: H(6), account: A(1) }),
  ev(11, 12, {
    _tag: "DiamondCut",
    cuts: [{ facetAddress: A(0xfa), action: 1, functionSelectors: ["0xabcdef01"] }],
    init: ZERO,
    data: "0x"
  }),
  ev(11, 13, { _tag: "MarketCreationFeeUpdated", previousFee: 0n, newFee: 5n }),
  ev(11, 14, { _tag: "Hook_UpgradeProposed", implementation: A(0x1e), readyAt: 1_700_100_000n }),
  ev(11, 15, { _tag: "EventResolved", eventId: 1n, winningIndex: 0n, resolver: A(1) }),
  ev(11, 16, {
    _tag: "TakerFilled",
    marketId: 1n,
    taker: A(2),
    recipient: A(2),
    takerSide: 0,
    totalFilled: 4_000_000n,
    totalCost: 2_200_000n,
    matchCount: 1n
  }),
  ev(11, 17, { _tag: "FeeCollected", marketId: 1n, amount: 9n }),
  ev(11, 18, { _tag: "Hook_ReferralRecorded", marketId: 1n, referrer: A(5), trader: A(2), usdcVolume: 10_000_000n })
]
const wide12 = [
  ...block12,
  ev(12, 2, { _tag: "OrderCancelled", orderId: O(2) }),
  transfer(12, 3, YES, A(2), A(1), 10_000_000n),
  lp(12, 4, -1_500n),
  ev(12, 5, { _tag: "OutcomeRevoked", marketId: 1n, admin: A(1) }, MANUAL),
  ev(12, 6, { _tag: "PriceFeedMarketResolved", marketId: 1n, price: -9n, outcome: false }, FEED),
  ev(12, 7, { _tag: "OracleRevoked", oracle: MANUAL }),
  ev(12, 8, { _tag: "GlobalUnpaused", account: A(1) }),
  ev(12, 9, { _tag: "Hook_Upgraded", implementation: A(0x1e) }),
  ev(12, 10, { _tag: "Hook_PauseStatusChanged", paused: true }),
  ev(12, 11, { _tag: "Hook_ReferralRecorded", marketId: 1n, referrer: A(5), trader: A(3), usdcVolume: 7_000_000n })
]
const wide11b = [
  ...block11b,
  ev(11, 1, { _tag: "OrderCancelled", orderId: O(1) }),
  transfer(11, 2, NO, A(1), A(4), 100_000_000n),
  ev(11, 3, { _tag: "GlobalPaused", account: A(1) }),
  ev(11, 4, { _tag: "EventRefundModeEnabled", eventId: 1n, enabler: A(1) }),
  lp(11, 5, -1_000n),
  ev(11, 6, { _tag: "Hook_ReferralRecorded", marketId: 1n, referrer: A(6), trader: A(4), usdcVolume: 3_000_000n })
]

const cp = (block: number, fork = 0) => ({ chainId: 130, block, hash: H(block + fork * 1000), digest: H(block), head: 20 })

const dump = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const out: Record<string, unknown> = { ...(yield* dumpTables) }
  out["checkpoint"] = yield* sql.unsafe(`select block_number, block_hash from indexer_checkpoint`)
  return out
})

const withDb = <A, E>(body: Effect.Effect<A, E, SqlClient.SqlClient>) => withScratchDb(body, LogLevel.Warning)

describe("sink", () => {
  it.live("a reorg is undone to the common ancestor exactly, and the new branch equals indexing it from scratch", () =>
    Effect.gen(function* () {
      const reorged = yield* reorgEqualsScratch({ protocol, dump, blocks: { b10: block10, b11: block11, b12: block12, b11b: block11b } })
      expect((reorged["protocol_stats"] as Array<Record<string, string>>)[0]).toMatchObject({ total_trades: "1", total_volume: "3000000" })
    })
  )

  it.live(
    "undo entries of markets, positions, users and protocol totals written before migration 0019 are converted, so a reorg across the upgrade restores exactly",
    () =>
      Effect.gen(function* () {
        const { atAncestor, reverted } = yield* withDb(
          Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            yield* applyBatch(block10, cp(10), protocol, undefined)
            const atAncestor = yield* dump
            yield* applyBatch(block11, cp(11), protocol, 11)
            // Block 11's entries as the code before 0019 wrote them: the reducer's key text, and the
            // reducer's row (camelCase fields, bigints as decimal strings) as the image.
            const camel = (image: Record<string, unknown> | null) =>
              image === null
                ? null
                : Object.fromEntries(
                    Object.entries(image)
                      .filter(([k]) => k !== "id" || image["total_markets"] === undefined)
                      .map(([k, v]) => [k === "user_address" ? "user" : k.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()), v])
                  )
            const oldKey = (table: string, key: Record<string, string | number>) =>
              table === "position" ? `${key["user_address"]}:${key["market_id"]}` : String(key["id"] ?? key["address"])
            const entries = yield* sql.unsafe<{ table_name: string; row_key: string; image: Record<string, unknown> | null }>(
              `select table_name, row_key, image from undo_log where block_number = 11 and table_name in ('market', 'position', 'user_stats', 'protocol_stats')`
            )
            expect(new Set(entries.map((e) => e.table_name))).toEqual(new Set(["market", "position", "user_stats", "protocol_stats"]))
            yield* sql.unsafe(
              `delete from undo_log where block_number = 11 and table_name in ('market', 'position', 'user_stats', 'protocol_stats')`
            )
            for (const e of entries) {
              yield* sql.unsafe(`insert into undo_log values (11, $1, $2, $3::jsonb)`, [
                e.table_name,
                oldKey(e.table_name, JSON.parse(e.row_key)),
                e.image === null ? null : JSON.stringify(camel(e.image))
              ])
            }
            // Block 12 by the new code, on top of block 11's old-format entries; then the upgrade.
            yield* applyBatch(block12, cp(12), protocol, 12)
            const migration = yield* Effect.promise(() =>
              readFile(new URL("../../migrations/0019_one_undo_format.sql", import.meta.url), "utf8")
            )
            for (const statement of migration.replace(/--.*$/gm, "").split(";")) if (statement.trim() !== "") yield* sql.unsafe(statement)
            const mixed = yield* sql.unsafe<{ row_key: string }>(`select row_key from undo_log where row_key not like '{%'`)
            expect(mixed).toEqual([])
            yield* revertTo({ chainId: 130, block: 10, hash: H(10), digest: H(10) })
            return { atAncestor, reverted: yield* dump }
          })
        )
        expect(reverted).toEqual(atAncestor)
      })
  )

  it.live("every table of the later reducers is restored exactly by a revert, and the new branch equals indexing it from scratch", () =>
    Effect.gen(function* () {
      const reorged = yield* withDb(
        Effect.gen(function* () {
          yield* applyBatch(wide10, cp(10), protocol, undefined)
          const atAncestor = yield* dump
          yield* applyBatch(wide11, cp(11), protocol, 11)
          const at11 = yield* dump
          yield* applyBatch(wide12, cp(12), protocol, 12)
          // Every new table changed on the way, so the revert below has something to undo in each.
          const at12 = yield* dump
          for (const t of [...MUTABLE_TABLES, ...APPEND_ONLY_TABLES].map((d) => d.sql)) {
            if (["manual_oracle"].includes(t)) continue // only block 11 changes it
            expect.soft(at12[t], t).not.toEqual(atAncestor[t])
          }
          yield* revertTo({ chainId: 130, block: 11, hash: H(11), digest: H(11) })
          expect(yield* dump).toEqual(at11)
          yield* revertTo({ chainId: 130, block: 10, hash: H(10), digest: H(10) })
          expect(yield* dump).toEqual(atAncestor)
          yield* applyBatch(wide11b, cp(11, 1), protocol, 11)
          return yield* dump
        })
      )
      const scratch = yield* withDb(
        Effect.gen(function* () {
          yield* applyBatch(wide10, cp(10), protocol, undefined)
          yield* applyBatch(wide11b, cp(11, 1), protocol, undefined)
          return yield* dump
        })
      )
      expect(reorged).toEqual(scratch)
      // Spot checks of the written rows.
      expect(scratch["exchange_order"]).toEqual([expect.objectContaining({ id: O(1), status: "CANCELLED", filled: "0" })])
      expect(scratch["order_book_level"]).toEqual([])
      expect(scratch["token_holder"]).toEqual([
        { token: YES, holder: A(1), market_id: "1", side: "YES", balance: "100000000" },
        { token: NO, holder: A(4), market_id: "1", side: "NO", balance: "100000000" }
      ])
      expect(scratch["outcome_token"]).toEqual([
        { address: YES, market_id: "1", side: "YES", supply: "100000000", holders: "1" },
        { address: NO, market_id: "1", side: "NO", supply: "100000000", holders: "1" }
      ])
      expect(scratch["liquidity_position"]).toEqual([])
      expect(scratch["event_group"]).toEqual([expect.objectContaining({ state: "REFUND", market_ids: ["1", "2"] })])
      expect(scratch["pause_state"]).toEqual([expect.objectContaining({ scope: "global", paused: true })])
      // The referrals of the reorged-out blocks are gone; the replacing branch's one is there once.
      expect(scratch["referral"]).toEqual([
        {
          block_number: "11",
          log_index: 6,
          tx_hash: H(1106),
          timestamp: "1700000011",
          market_id: "1",
          referrer: A(6),
          trader: A(4),
          usdc_volume: "3000000"
        }
      ])
    })
  )

  it.live("matched before placed reaches Postgres as one partially filled order on the book", () =>
    Effect.gen(function* () {
      const tables = yield* withDb(
        Effect.gen(function* () {
          yield* applyBatch(wide10, cp(10), protocol, undefined)
          yield* applyBatch(wide11, cp(11), protocol, 11)
          const sql = yield* SqlClient.SqlClient
          const tables: Record<string, unknown> = {
            ...(yield* dump),
            market_pause: yield* sql.unsafe(`select * from market_pause`),
            market_holder_count: yield* sql.unsafe(`select * from market_holder_count`)
          }
          return tables
        })
      )
      expect(tables["exchange_order"]).toEqual([
        expect.objectContaining({ id: O(1), filled: "4000000", status: "PARTIALLY_FILLED" }),
        expect.objectContaining({ id: O(2), owner: A(2), filled: "4000000", status: "PARTIALLY_FILLED" })
      ])
      expect(tables["order_book_level"]).toEqual([
        { market_id: "1", side: 0, price: "600000", amount: "2000000", orders: "1" },
        { market_id: "1", side: 1, price: "550000", amount: "6000000", orders: "1" }
      ])
      expect(tables["order_match"]).toEqual([expect.objectContaining({ maker: A(1), taker: A(2), amount: "4000000" })])
      expect(tables["manual_report"]).toEqual([expect.objectContaining({ state: "REPORTED", finalizes_at: String(1_700_000_011 + 60) })])
      // Views: the pause state as markets see it, and holder counts per market.
      expect(tables["market_pause"]).toEqual([
        { market_id: "1", global_paused: true, module_paused: false, amm_paused: false, paused: true }
      ])
      expect(tables["market_holder_count"]).toEqual([{ market_id: "1", yes_holders: "2", no_holders: "1", holders: "2" }])
    })
  )
})
