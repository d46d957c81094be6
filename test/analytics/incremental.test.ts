/**
 * Incremental refresh: a snapshot taken part way through the fixture, refreshed after more of
 * the chain is indexed (finalized blocks moved on, a reorg on the way), equals a full export of
 * the same block, table for table, manifest included; it reads only the new append-only rows.
 * The same holds for a snapshot of the tip refreshed into a finalized one (its tip rows are
 * dropped first), and a file that is not a snapshot is replaced by a full export.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs/promises"
import * as Path from "node:path"
import { exportSnapshot } from "../../src/analytics/export.js"
import { scratchDatabaseUrl, tempDir } from "../support/postgres.js"
import { duckSnapshot, fixtureChain, indexTo, withDuck } from "./support.js"

const snapshotOf = (path: string) => withDuck(path, duckSnapshot)

describe("incremental refresh", () => {
  it.scoped(
    "equals a full export of the same block, and reads only the append-only rows finalized since",
    () =>
      Effect.gen(function* () {
        const url = yield* scratchDatabaseUrl
        const dir = yield* tempDir("predix-export")
        const fixture = yield* fixtureChain
        const refreshed = Path.join(dir, "refreshed.duckdb")
        const fromTip = Path.join(dir, "from-tip.duckdb")

        yield* indexTo(url, fixture, 344)
        const first = yield* exportSnapshot(url, { out: refreshed })
        const firstTip = yield* exportSnapshot(url, { out: fromTip, includeUnfinalized: true })
        expect(first.mode).toBe("full")
        expect(firstTip.point.block).toBeGreaterThan(first.point.block)

        // More of the chain: the fixture's later finalized marks and its reorgs.
        yield* indexTo(url, fixture, 574)
        const second = yield* exportSnapshot(url, { out: refreshed })
        const secondFromTip = yield* exportSnapshot(url, { out: fromTip })
        const full = yield* exportSnapshot(url, { out: Path.join(dir, "full.duckdb") })
        expect(second.point.block).toBeGreaterThan(first.point.block)
        expect([second.mode, secondFromTip.mode, full.mode]).toEqual(["incremental", "incremental", "full"])
        expect(second.point).toEqual(full.point)

        const expected = yield* snapshotOf(Path.join(dir, "full.duckdb"))
        expect(yield* snapshotOf(refreshed)).toEqual(expected)
        expect(yield* snapshotOf(fromTip)).toEqual(expected)

        // Append-only tables: only rows above the previous finalized block were read.
        const byName = (r: typeof second) => Object.fromEntries(r.tables.map((t) => [t.name, t]))
        const [before, after, whole] = [byName(first), byName(second), byName(full)]
        expect(after["trade"]!.rows).toBe(whole["trade"]!.rows)
        expect(after["trade"]!.written).toBe(whole["trade"]!.rows - before["trade"]!.rows)
        expect(after["trade"]!.written).toBeLessThan(whole["trade"]!.rows)
        expect(second.rowsWritten).toBeLessThan(full.rowsWritten)
        // Mutable tables are rewritten whole.
        expect(after["position"]!.written).toBe(whole["position"]!.rows)

        // Nothing new finalized: a refresh changes nothing but the manifest's run fields.
        const third = yield* exportSnapshot(url, { out: refreshed })
        expect(third.mode).toBe("incremental")
        expect(byName(third)["trade"]!.written).toBe(0)
        expect(yield* snapshotOf(refreshed)).toEqual(expected)

        // Not a snapshot: replaced by a full export, and said why.
        const stranger = Path.join(dir, "stranger.duckdb")
        yield* Effect.promise(() => fs.writeFile(stranger, "not a database"))
        const replaced = yield* exportSnapshot(url, { out: stranger })
        expect(replaced.mode).toBe("full")
        expect(replaced.fullBecause).toMatch(/not a readable DuckDB file/)
        expect(yield* snapshotOf(stranger)).toEqual(expected)
      }),
    240_000
  )
})
