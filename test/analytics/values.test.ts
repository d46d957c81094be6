/**
 * Values on their way from Postgres through the CSV COPY into DuckDB, on tables made for the
 * purpose in a scratch database (real Postgres, real DuckDB file): numbers near 38 digits arrive
 * exactly (units: the DECIMAL(38,6)'s stored integer is the raw integer), text of any shape and
 * NULL versus empty stay apart, and a value that does not fit is refused with `ValueOutOfRange`
 * instead of being rounded. Large tables keep the key order Postgres sorts them in while DuckDB
 * reads their file in parallel.
 */
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import * as fs from "node:fs/promises"
import * as Path from "node:path"
import { readCatalog } from "../../src/analytics/catalog.js"
import { copyTable, createTables, type CopyContext } from "../../src/analytics/copy-table.js"
import { DUCKDB_OPTIONS } from "../../src/analytics/duckdb-writer.js"
import type { SnapshotPoint } from "../../src/analytics/point.js"
import { noProgress } from "../../src/analytics/progress.js"
import { openSnapshot } from "../../src/analytics/snapshot.js"
import { query, scratchDatabaseUrl, tempDir } from "../support/postgres.js"
import { duckRows } from "./support.js"

const POINT = { block: 0 } as SnapshotPoint

let files = 0

/** Plans every table of the database at `url` for a new DuckDB file; `copy` copies one. */
const copyAll = (url: string, dir: string) =>
  Effect.gen(function* () {
    const [pg] = yield* openSnapshot(url)
    // Every table: they are made for the test, not the index's (no allow-list applies).
    const plans = yield* Effect.promise(() => readCatalog(pg!, () => true))
    const db = yield* Effect.acquireRelease(
      Effect.promise(async () => {
        const instance = await DuckDBInstance.create(Path.join(dir, `values-${++files}.duckdb`), { ...DUCKDB_OPTIONS })
        return { instance, connection: await instance.connect() }
      }),
      ({ instance, connection }) => Effect.sync(() => (connection.closeSync(), instance.closeSync()))
    )
    const context: CopyContext = {
      point: POINT,
      changed: new Set(),
      after: undefined,
      progress: noProgress,
      csvPath: (p) => Path.join(dir, `${p.name}.csv`)
    }
    yield* Effect.promise(() => createTables(db.connection, plans, undefined))
    const copy = (name: string) =>
      Effect.tryPromise({
        try: () =>
          copyTable(
            pg!,
            db.connection,
            plans.find((p) => p.name === name)!,
            context
          ),
        catch: (error) => error
      })
    return { duck: db.connection, plans, copy }
  })

const rows = (duck: DuckDBConnection, sql: string) => Effect.promise(() => duckRows(duck, sql))

const digits = (n: number) => 10n ** BigInt(n)

describe("values through the CSV COPY", () => {
  it.scoped(
    "numbers near 38 digits, times, text, JSON and lists arrive exactly; what does not fit is refused",
    () =>
      Effect.gen(function* () {
        const url = yield* scratchDatabaseUrl
        const dir = yield* tempDir("predix-values")
        const edges = [
          0n,
          1n,
          -1n,
          999_999n,
          1_000_000n,
          1_500_000n,
          digits(18) - 1n,
          digits(18),
          digits(32),
          digits(38) - 1n,
          -(digits(38) - 1n),
          2n ** 126n
        ]
        const random = fc.sample(fc.bigInt({ min: -(digits(38) - 1n), max: digits(38) - 1n }), 200)
        const raws = [...edges, ...random]
        // In `market`, volume and yes_price are units, DECIMAL(38,6); id and trade_count DECIMAL(38,0).
        yield* query(
          url,
          `create table market (id numeric(78,0) primary key, volume numeric(78,0), yes_price numeric, trade_count numeric(78,0))`
        )
        yield* query(
          url,
          `insert into market select i, v::numeric, v::numeric, v::numeric from unnest($1::text[]) with ordinality x(v, i)`,
          [raws.map(String)]
        )
        // A whole unconstrained numeric written with zero decimals is the same whole number.
        yield* query(url, `insert into market values (100000, null, 5.000, null)`)
        yield* query(
          url,
          `create table things (k text primary key, t text, j jsonb, ok boolean, created_at bigint, end_time numeric, first_seen timestamptz)`
        )
        const texts = ["", "a,b", 'say "hi"', "two\nlines", "cr\r\nlf", "\\.", "ü € 𝄞", " lead and trail ", "NULL", "\\N"]
        yield* query(
          url,
          `insert into things select 'k' || lpad(i::text, 3, '0'), t, jsonb_build_object('t', t, 'n', i), i % 2 = 0, 1700000000 + i, 1700000000 - i,
                  timestamptz '2024-02-29 12:34:56.789012+00' + i * interval '1 second'
             from unnest($1::text[]) with ordinality x(t, i)`,
          [texts]
        )
        yield* query(url, `insert into things values ('knull', null, null, null, null, null, null)`)
        // `event_group.market_ids` is a list of uint256: DECIMAL(38,0)[].
        yield* query(url, `create table event_group (id numeric(78,0) primary key, market_ids jsonb)`)
        yield* query(
          url,
          `insert into event_group values (1, '["1", "2", "99999999999999999999999999999999999999"]'), (2, '[]'), (3, null)`
        )

        const { duck, plans, copy } = yield* copyAll(url, dir)
        expect(plans.find((p) => p.name === "market")!.columns.map((c) => c.duckType)).toEqual([
          "DECIMAL(38,0)",
          "DECIMAL(38,6)",
          "DECIMAL(38,6)",
          "DECIMAL(38,0)"
        ])
        for (const name of ["market", "things", "event_group"]) yield* copy(name)

        // Units: the stored integer (value * 1e6, computed exactly in DuckDB) is the raw integer.
        const stored = (c: string) => `replace(${c}::VARCHAR, '.', '')::HUGEINT::VARCHAR`
        const market = yield* rows(
          duck,
          `select id::VARCHAR, ${stored("volume")}, ${stored("yes_price")}, trade_count::VARCHAR, typeof(volume) from market`
        )
        expect(market.slice(0, raws.length)).toEqual(raws.map((r, i) => [String(i + 1), String(r), String(r), String(r), "DECIMAL(38,6)"]))
        expect(market[raws.length]).toEqual(["100000", null, "5", null, "DECIMAL(38,6)"])
        const [[units]] = (yield* rows(duck, `select volume::VARCHAR from market where id = 10`)) as [[string]]
        expect(units).toBe("99999999999999999999999999999999.999999")

        const things = (yield* rows(
          duck,
          `select k, t, j::VARCHAR, ok, epoch(created_at)::BIGINT, epoch(end_time)::BIGINT, epoch_us(first_seen) from things`
        )).map((r) => [...r.slice(0, 2), r[2] === null ? null : JSON.parse(String(r[2])), ...r.slice(3)])
        expect(things).toEqual([
          ...texts.map((t, n) => {
            const i = n + 1
            return [
              `k${String(i).padStart(3, "0")}`,
              t,
              { n: i, t },
              i % 2 === 0,
              String(1700000000 + i),
              String(1700000000 - i),
              String(1709210096789012 + i * 1_000_000)
            ]
          }),
          ["knull", null, null, null, null, null, null]
        ])
        expect(yield* rows(duck, `select id::VARCHAR, market_ids::VARCHAR from event_group`)).toEqual([
          ["1", "[1, 2, 99999999999999999999999999999999999999]"],
          ["2", "[]"],
          ["3", null]
        ])
        const [types] = yield* rows(duck, `select typeof(created_at), typeof(end_time), typeof(first_seen), typeof(j) from things limit 1`)
        expect(types).toEqual(["TIMESTAMP", "TIMESTAMP", "TIMESTAMP WITH TIME ZONE", "JSON"])

        // Refused, named, never rounded; no CSV left behind.
        const refused = (sql: string, table: string) =>
          Effect.gen(function* () {
            yield* query(url, sql)
            const again = yield* copyAll(url, dir)
            return yield* Effect.flip(again.copy(table))
          })
        const cases: Array<[string, string, Record<string, string>, RegExp]> = [
          [
            `update market set volume = 10::numeric ^ 38 where id = 1`,
            "market",
            { column: "volume", value: `1${"0".repeat(38)}` },
            /more than 38 digits/
          ],
          [
            `update market set volume = 0, trade_count = -(10::numeric ^ 38) where id = 1`,
            "market",
            { column: "trade_count", value: `-1${"0".repeat(38)}` },
            /more than 38 digits/
          ],
          [
            `update market set trade_count = 0, yes_price = 1.0000005 where id = 1`,
            "market",
            { column: "yes_price", value: "1.0000005" },
            /more than 0 fraction digits/
          ],
          [`update market set yes_price = 'NaN' where id = 1`, "market", { column: "yes_price", value: "NaN" }, /not a finite number/],
          [
            `update things set created_at = 9223372036855 where k = 'k001'`,
            "things",
            { column: "created_at", value: "9223372036855" },
            /beyond TIMESTAMP's range/
          ],
          [
            `update things set created_at = 0, end_time = 1.5 where k = 'k001'`,
            "things",
            { column: "end_time", value: "1.5" },
            /more than 0 fraction digits/
          ],
          [
            `update event_group set market_ids = '["1.5"]' where id = 1`,
            "event_group",
            { column: "market_ids", value: '["1.5"]' },
            /not a list/
          ]
        ]
        for (const [sql, table, named, why] of cases) {
          const error = yield* refused(sql, table)
          expect(error, sql).toMatchObject({ _tag: "ValueOutOfRange", table, ...named })
          expect(String((error as Error).message), sql).toMatch(why)
          expect(String((error as Error).message), sql).toContain(`${table}.${named["column"]} = ${named["value"]} does not fit`)
        }
        expect((yield* Effect.promise(() => fs.readdir(dir))).filter((f) => f.endsWith(".csv"))).toEqual([])
      }),
    120_000
  )

  it.scoped(
    "large tables keep key order while DuckDB reads their CSV in parallel",
    () =>
      Effect.gen(function* () {
        const url = yield* scratchDatabaseUrl
        const dir = yield* tempDir("predix-order")
        // 300,000 rows (about 50 MB of CSV: several of DuckDB's 32 MB reading buffers, several
        // row groups), inserted in a shuffled order so that neither the heap nor the file is in
        // key order by accident.
        const fill = (table: string) =>
          query(
            url,
            `insert into ${table} select md5(g::text), g % 7, 'v' || g, repeat('x', 90 + g % 50), date '2000-01-01' + (g % 9000) from generate_series(1, 300000) g order by random()`
          )
        yield* query(url, `create table by_text (h text, n int, v text, pad text, d date, primary key (h, n))`)
        yield* query(url, `create table by_date (h text, n int, v text, pad text, d date, primary key (d, h))`)
        yield* fill("by_text")
        yield* fill("by_date")
        const { duck, copy } = yield* copyAll(url, dir)
        for (const [table, pgKey] of [
          ["by_text", `h collate "C", n`],
          ["by_date", `d, h collate "C"`]
        ] as const) {
          const count = yield* copy(table)
          expect(count.rows).toBe(300000)
          const expected = (yield* query<{ v: string }>(url, `select v from ${table} order by ${pgKey}`)).rows.map((r) => r.v)
          const actual = (yield* rows(duck, `select v from ${table}`)).map(([v]) => v)
          expect(actual.length).toBe(expected.length)
          const firstDifference = actual.findIndex((v, i) => v !== expected[i])
          expect({ table, firstDifference }).toEqual({ table, firstDifference: -1 })
        }
      }),
    180_000
  )
})
