/**
 * A database caught mid-chain, with a window of unfinalized blocks full of events on top of the
 * finalized block: the default export holds exactly the state at the finalized block (what the
 * pipeline's own revert to that block leaves in Postgres), mutable tables included, read while
 * the tip rows are still there; `includeUnfinalized` holds the tables as they stand.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import * as Path from "node:path"
import { revertTo } from "../../pipeline/sink.js"
import { exportSnapshot } from "../../src/analytics/export.js"
import { pgClientLayer } from "../../src/db/database.js"
import { scratchDatabaseUrl, tempDir } from "../support/postgres.js"
import { duckRows, duckTable, exportedTables, fixtureChain, indexTo, pgTable, withDuck, withPg } from "./support.js"

const pgTables = (url: string, tables: ReadonlyArray<string>) =>
  withPg(url, async (client) => {
    const out: Record<string, unknown> = {}
    for (const t of tables) out[t] = await pgTable(client, t)
    return out
  })

const duckTables = (path: string) =>
  withDuck(path, async (db) => {
    const out: Record<string, unknown> = {}
    for (const t of await exportedTables(db)) out[t] = await duckTable(db, t)
    return out
  })

describe("finalized snapshots", () => {
  it.scoped(
    "read mutable tables as of the finalized block through the undo log, and the tip on request",
    () =>
      Effect.gen(function* () {
        const url = yield* scratchDatabaseUrl
        const dir = yield* tempDir("predix-export")
        const fixture = yield* fixtureChain
        yield* indexTo(url, fixture, 344)

        const state = yield* withPg(url, async (client) => ({
          checkpoint: (await client.query(`select block_number::int as block, block_hash as hash from indexer_checkpoint`)).rows[0],
          lowest: (
            await client.query(
              `select number::int - 1 as block, parent_hash as hash, parent_digest as digest from indexed_block order by number limit 1`
            )
          ).rows[0],
          undone: (await client.query(`select distinct table_name from undo_log order by 1`)).rows.map((r) => r.table_name as string),
          appendedAbove: Number(
            (await client.query(`select count(*) from trade where block_number > (select min(number) - 1 from indexed_block)`)).rows[0]
              .count
          )
        }))
        // The case worth testing: unfinalized blocks that traded, so mutable rows differ from
        // their finalized state and append-only rows exist above it.
        expect(state.lowest.block).toBeLessThan(state.checkpoint.block)
        expect(state.appendedAbove).toBeGreaterThan(0)
        expect(state.undone).toEqual(
          expect.arrayContaining(["market", "position", "user_stats", "protocol_stats", "token_holder", "candle"])
        )

        const tip = yield* exportSnapshot(url, { out: Path.join(dir, "tip.duckdb"), includeUnfinalized: true })
        const finalized = yield* exportSnapshot(url, { out: Path.join(dir, "finalized.duckdb") })
        expect([tip.point.block, tip.point.hash]).toEqual([state.checkpoint.block, state.checkpoint.hash])
        expect([finalized.point.block, finalized.point.hash]).toEqual([state.lowest.block, state.lowest.hash])

        const tables = Object.keys(yield* duckTables(Path.join(dir, "tip.duckdb")))
        expect(yield* duckTables(Path.join(dir, "tip.duckdb"))).toEqual(yield* pgTables(url, tables))

        // Now let the pipeline itself undo the window, and compare with what was exported before.
        yield* Effect.provide(
          revertTo({ chainId: 130, block: state.lowest.block, hash: state.lowest.hash, digest: state.lowest.digest }),
          pgClientLayer(Redacted.make(url))
        )
        const reverted = yield* pgTables(url, tables)
        const exported = yield* duckTables(Path.join(dir, "finalized.duckdb"))
        for (const table of tables) expect({ table, rows: exported[table] }).toEqual({ table, rows: reverted[table] })
        expect(exported).not.toEqual(yield* duckTables(Path.join(dir, "tip.duckdb")))

        yield* withDuck(Path.join(dir, "finalized.duckdb"), async (db) => {
          expect(
            await duckRows(
              db,
              `select block_number::INTEGER, includes_unfinalized, finalized_block::INTEGER, indexed_block::INTEGER from manifest`
            )
          ).toEqual([[state.lowest.block, false, state.lowest.block, state.checkpoint.block]])
        })
      }),
    120_000
  )
})
