/**
 * The committed fixture, indexed into a real Postgres and exported to a real DuckDB file and
 * Parquet files: every table equals Postgres's row for row (at the finalized block, which covers
 * every event of the fixture), the headline sums agree to the raw unit, the Parquet files read
 * back with the same rows, and the file is typed and ordered for analysis.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Path from "node:path"
import { exportSnapshot } from "../../src/analytics/export.js"
import { EXPORTED_DERIVED, EXPORTED_SHARED } from "../../src/analytics/exported-tables.js"
import { fixtureDatabaseUrl } from "../support/fixture-db.js"
import { tempDir } from "../support/postgres.js"
import { duckRows, duckTable, exportedTables, pgTable, withDuck, withPg } from "./support.js"

/** Sums as raw integers (Postgres numeric text; DuckDB DECIMAL(38,6) times 1e6). */
const PG_SUMS = `select
  (select coalesce(sum(volume), 0)::text from market) as market_volume,
  (select coalesce(sum(total_collateral), 0)::text from market) as collateral,
  (select coalesce(sum(trade_count), 0)::text from market) as market_trades,
  (select count(*)::text from trade) as trades,
  (select coalesce(sum(amount_in), 0)::text from trade) as trade_amount_in,
  (select coalesce(sum(clob_filled), 0)::text from trade) as clob_filled,
  (select coalesce(sum(amm_filled), 0)::text from trade) as amm_filled,
  (select total_volume::text from protocol_stats) as protocol_volume,
  (select total_trades::text from protocol_stats) as protocol_trades,
  (select coalesce(sum(volume), 0)::text from candle where timeframe = '1d') as candle_volume,
  (select coalesce(sum(realized_pnl), 0)::text from position) as realized_pnl`

const duckSums = (from: (table: string) => string) => `select
  (select (coalesce(sum(volume), 0) * 1000000)::HUGEINT::VARCHAR from ${from("market")}),
  (select (coalesce(sum(total_collateral), 0) * 1000000)::HUGEINT::VARCHAR from ${from("market")}),
  (select coalesce(sum(trade_count), 0)::VARCHAR from ${from("market")}),
  (select count(*)::VARCHAR from ${from("trade")}),
  (select (coalesce(sum(amount_in), 0) * 1000000)::HUGEINT::VARCHAR from ${from("trade")}),
  (select (coalesce(sum(clob_filled), 0) * 1000000)::HUGEINT::VARCHAR from ${from("trade")}),
  (select (coalesce(sum(amm_filled), 0) * 1000000)::HUGEINT::VARCHAR from ${from("trade")}),
  (select (total_volume * 1000000)::HUGEINT::VARCHAR from ${from("protocol_stats")}),
  (select total_trades::VARCHAR from ${from("protocol_stats")}),
  (select (coalesce(sum(volume), 0) * 1000000)::HUGEINT::VARCHAR from ${from("candle")} where timeframe = '1d'),
  (select (coalesce(sum(realized_pnl), 0) * 1000000)::HUGEINT::VARCHAR from ${from("position")})`

describe("export of the fixture", () => {
  it.scoped(
    "DuckDB and Parquet hold every table of Postgres, typed, ordered, with the same counts and sums",
    () =>
      Effect.gen(function* () {
        const { url } = yield* fixtureDatabaseUrl
        const dir = yield* tempDir("predix-export")
        const out = Path.join(dir, "snapshot.duckdb")
        const parquet = Path.join(dir, "parquet")
        const result = yield* exportSnapshot(url, { out, parquetDir: parquet })
        expect(result.mode).toBe("full")

        const expected = yield* withPg(url, async (client) => {
          const tables = (
            await client.query<{ name: string }>(`select tablename as name from pg_tables where schemaname = current_schema() order by 1`)
          ).rows
            .map((r) => r.name)
            // The allow-list: the derived tables less the bookkeeping, and display metadata.
            .filter((name) => EXPORTED_DERIVED.has(name) || EXPORTED_SHARED.has(name))
          const rows: Record<string, unknown> = {}
          for (const t of tables) rows[t] = await pgTable(client, t)
          const window = (await client.query(`select number, parent_hash from indexed_block order by number limit 1`)).rows[0]
          const version = (await client.query(`select max(migration_id)::int as v from schema_migrations`)).rows[0].v
          const sums = (await client.query({ text: PG_SUMS, rowMode: "array" })).rows[0]
          return { tables, rows, window, version, sums }
        })
        // The fixture ends with empty blocks, so every event is at or below the finalized block:
        // the finalized snapshot equals the tables as they stand.
        expect(result.point.block).toBe(Number(expected.window.number) - 1)

        yield* withDuck(out, async (db) => {
          expect(await exportedTables(db)).toEqual(expected.tables)
          // Row for row, in primary-key order (the file's own scan order against Postgres's ORDER BY).
          for (const table of expected.tables)
            expect({ table, rows: await duckTable(db, table) }).toEqual({ table, rows: expected.rows[table] })

          const [manifest] = await duckRows(
            db,
            `select chain_id, block_number, block_hash, includes_unfinalized, schema_version from manifest`
          )
          expect(manifest).toEqual(["130", String(result.point.block), expected.window.parent_hash, false, expected.version])
          const counts = await duckRows(db, `select table_name, row_count from manifest_tables order by table_name`)
          expect(Object.fromEntries(counts.map(([t, n]) => [t, Number(n)]))).toEqual(
            Object.fromEntries(expected.tables.map((t) => [t, (expected.rows[t] as Array<unknown>).length]))
          )
          expect((expected.rows["trade"] as Array<unknown>).length).toBeGreaterThan(50)

          expect(
            (
              await duckRows(
                db,
                duckSums((t) => `"${t}"`)
              )
            )[0]
          ).toEqual(expected.sums)

          // Typed for analysis.
          const types = Object.fromEntries(
            (await duckRows(db, `select table_name || '.' || column_name, data_type from information_schema.columns`)).map(([k, v]) => [
              k,
              v
            ])
          )
          expect(types).toMatchObject({
            "market.volume": "DECIMAL(38,6)",
            "market.total_collateral": "DECIMAL(38,6)",
            "market.yes_price": "DECIMAL(38,6)",
            "market.id": "DECIMAL(38,0)",
            "market.end_time": "TIMESTAMP",
            "market.created_at": "TIMESTAMP",
            "market.created_block": "BIGINT",
            "trade.timestamp": "TIMESTAMP",
            "trade.amount_in": "DECIMAL(38,6)",
            "trade.trader": "VARCHAR",
            "candle.bucket": "TIMESTAMP",
            "event_group.market_ids": "DECIMAL(38,0)[]",
            "diamond_cut.cuts": "JSON",
            "amm_pool.sqrt_price_x96": "DECIMAL(38,0)",
            "indexed_deployment.first_indexed": "TIMESTAMP WITH TIME ZONE"
          })
          // Addresses and hashes are lowercase hex text.
          const [upper] = await duckRows(
            db,
            `select (select count(*) from trade where trader <> lower(trader) or recipient <> lower(recipient) or tx_hash <> lower(tx_hash))
                  + (select count(*) from market where creator <> lower(creator) or yes_token <> lower(yes_token))`
          )
          expect(upper).toEqual(["0"])
        })

        // Parquet, read back by DuckDB: same rows for every table, same sums.
        yield* withDuck(":memory:", async (db) => {
          const file = (t: string) => `read_parquet('${Path.join(parquet, `${t}.parquet`)}')`
          for (const table of expected.tables) {
            const [[count]] = (await duckRows(db, `select count(*)::INTEGER from ${file(table)}`)) as [[number]]
            expect({ table, count }).toEqual({ table, count: (expected.rows[table] as Array<unknown>).length })
          }
          expect((await duckRows(db, duckSums(file)))[0]).toEqual(expected.sums)
          expect(await duckRows(db, `select block_number::VARCHAR from ${file("manifest")}`)).toEqual([[String(result.point.block)]])
          expect(await duckRows(db, `select typeof(volume) from ${file("market")} limit 1`)).toEqual([["DECIMAL(38,6)"]])
        })
      }),
    120_000
  )
})
