/**
 * Following a synthetic chain head by head, reorgs included (undo rows for every block, revert
 * to the common ancestor on each reorg), ends with the same rows in every derived table as
 * indexing its final canonical chain straight through. The canonical result also holds the
 * protocol's invariants the new tables can check.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, LogLevel } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { applyBatch, type LocatedEvent } from "../../pipeline/batch.js"
import { AddressBook, decodeLog, protocolContracts } from "../../pipeline/decode.js"
import { pruneUndo, revertTo } from "../../pipeline/sink.js"
import type { BlockRecord, Record as RecordLine } from "../../tools/recording/format.js"
import { readRecords } from "../../tools/recording/io.js"
import { generateSynthetic } from "../../tools/recording/synthetic.js"
import { withScratchDb } from "../support/postgres.js"
import { dumpTables } from "./dump.js"

const withDb = <A, E>(body: Effect.Effect<A, E, SqlClient.SqlClient>) => withScratchDb(body, LogLevel.Warning)

const cp = (b: BlockRecord) => ({ chainId: 130, block: b.number, hash: b.hash, digest: b.hash, head: null })

describe("following a chain through reorgs", () => {
  it.live(
    "gives the same tables as indexing the canonical chain, and those tables keep the protocol's invariants",
    () =>
      Effect.gen(function* () {
        const dir = yield* Effect.acquireRelease(
          Effect.promise(() => fs.mkdtemp(Path.join(os.tmpdir(), "predix-reorg-"))),
          (d) => Effect.promise(() => fs.rm(d, { recursive: true, force: true }))
        )
        const out = Path.join(dir, "c.ndjson.gz")
        const summary = yield* Effect.promise(() =>
          generateSynthetic({ out, seed: 21, events: 5_000, users: 25, reorgEvery: 30, maxReorgDepth: 4 })
        )
        expect(summary.reorgs).toBeGreaterThan(3)
        const records = yield* Effect.promise(async () => {
          const all: Array<RecordLine> = []
          for await (const r of readRecords(out)) all.push(r)
          return all
        })
        const deployment = summary.deployment
        const book = new AddressBook(deployment)
        const protocol = protocolContracts(deployment, book)
        const decode = (b: BlockRecord): Array<LocatedEvent> =>
          b.logs.flatMap((log) => {
            const kinds = book.kindsOf(log.address)
            const e = kinds && decodeLog(kinds, log)?.event
            if (!e) return []
            if (e._tag === "MarketCreated") {
              book.watchToken(e.yesToken)
              book.watchToken(e.noToken)
            }
            return [
              {
                event: e,
                at: {
                  block: b.number,
                  timestamp: b.timestamp,
                  txHash: log.transactionHash,
                  logIndex: log.logIndex,
                  address: log.address.toLowerCase()
                }
              }
            ]
          })

        // Head by head: every block unfinalized (undo rows), a reorg reverts to the block before it.
        const followed = yield* withDb(
          Effect.gen(function* () {
            const seen = new Map<number, BlockRecord>()
            let tip = -1
            let reverts = 0
            for (const r of records) {
              if (r.t === "finalized") {
                yield* pruneUndo(r.number)
                continue
              }
              if (r.t !== "block") continue
              if (r.number <= tip) {
                const ancestor = seen.get(r.number - 1)!
                yield* revertTo({ chainId: 130, block: ancestor.number, hash: ancestor.hash, digest: ancestor.hash })
                reverts++
              }
              yield* applyBatch(decode(r), cp(r), protocol, r.number)
              seen.set(r.number, r)
              tip = r.number
            }
            expect(reverts).toBe(summary.reorgs)
            return {
              tables: yield* dumpTables,
              canonical: [...seen.values()].filter((b) => b.number <= tip).sort((a, b) => a.number - b.number)
            }
          })
        )

        // The final canonical chain straight through, in batches of 40 blocks, no undo.
        const straight = yield* withDb(
          Effect.gen(function* () {
            const blocks = followed.canonical
            for (let i = 0; i < blocks.length; i += 40) {
              const chunk = blocks.slice(i, i + 40)
              yield* applyBatch(chunk.flatMap(decode), cp(chunk[chunk.length - 1]!), protocol, undefined)
            }
            const sql = yield* SqlClient.SqlClient
            const invariant = (query: string) => sql.unsafe<Record<string, unknown>>(query)
            return {
              tables: yield* dumpTables,
              // INV-1: for live markets, YES supply == NO supply == totalCollateral.
              supplyMismatch: yield* invariant(
                `select m.id from market m join outcome_token y on y.address = m.yes_token join outcome_token n on n.address = m.no_token
               where not m.is_resolved and not m.refund_mode and (y.supply <> m.total_collateral or n.supply <> m.total_collateral)`
              ),
              // Holder rows sum to each token's supply and count to its holders.
              holderMismatch: yield* invariant(
                `select t.address from outcome_token t left join (select token, sum(balance) s, count(*) c from token_holder group by token) h on h.token = t.address
               where coalesce(h.s, 0) <> t.supply or coalesce(h.c, 0) <> t.holders`
              ),
              // The book is the open remainder of the live orders.
              bookMismatch: yield* invariant(
                `(select market_id, side, price, sum(amount - filled) as amount, count(*) as orders from exchange_order
                where status in ('OPEN', 'PARTIALLY_FILLED') group by 1, 2, 3
                except select market_id, side, price, amount, orders from order_book_level)
               union all
               (select market_id, side, price, amount, orders from order_book_level
                except select market_id, side, price, sum(amount - filled), count(*) from exchange_order
                where status in ('OPEN', 'PARTIALLY_FILLED') group by 1, 2, 3)`
              ),
              // 1m and 1h candles are the price snapshots' OHLC and the router trades' volume.
              candleMismatch: yield* invariant(
                `with tf(name, secs) as (values ('1m', 60), ('1h', 3600)),
               p as (select tf.name, s.market_id, (s.timestamp / tf.secs) * tf.secs as bucket,
                       (array_agg(s.yes_price order by s.block_number, s.log_index))[1] as open, max(s.yes_price) as high, min(s.yes_price) as low,
                       (array_agg(s.yes_price order by s.block_number desc, s.log_index desc))[1] as close
                     from price_snapshot s, tf group by 1, 2, 3),
               v as (select tf.name, t.market_id, (t.timestamp / tf.secs) * tf.secs as bucket,
                       sum(case when t.trade_type in (0, 2) then t.amount_in else t.amount_out end) as volume, count(*) as trade_count
                     from trade t, tf group by 1, 2, 3),
               expected as (select coalesce(p.name, v.name) as timeframe, coalesce(p.market_id, v.market_id) as market_id,
                       coalesce(p.bucket, v.bucket) as bucket, p.open, p.high, p.low, p.close, coalesce(v.volume, 0) as volume, coalesce(v.trade_count, 0) as trade_count
                     from p full join v on p.name = v.name and p.market_id = v.market_id and p.bucket = v.bucket)
               (select * from expected except select timeframe, market_id, bucket, open, high, low, close, volume, trade_count from candle where timeframe in ('1m', '1h'))
               union all
               (select timeframe, market_id, bucket, open, high, low, close, volume, trade_count from candle where timeframe in ('1m', '1h') except select * from expected)`
              )
            }
          })
        )

        expect(followed.tables).toEqual(straight.tables)
        expect(straight.supplyMismatch).toEqual([])
        expect(straight.holderMismatch).toEqual([])
        expect(straight.bookMismatch).toEqual([])
        expect(straight.candleMismatch).toEqual([])
        // The chain exercised the new tables.
        for (const t of [
          "outcome_token",
          "token_holder",
          "exchange_order",
          "order_book_level",
          "order_match",
          "taker_fill",
          "amm_pool",
          "liquidity_position",
          "liquidity_event",
          "candle",
          "role_change",
          "pause_change",
          "pause_state",
          "manual_report",
          "manual_oracle_action"
        ]) {
          expect(straight.tables[t]!.length, t).toBeGreaterThan(0)
        }
      }).pipe(Effect.scoped),
    120_000
  )
})
