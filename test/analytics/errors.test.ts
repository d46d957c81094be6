/**
 * Exports that cannot be right fail with a typed error that names the problem, and leave the
 * previous snapshot and no temporary file behind: a value too large for its column; undo rows
 * of a table the exporter cannot roll back (the tip export still works); a database with
 * nothing indexed.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs/promises"
import * as Path from "node:path"
import { exportSnapshot } from "../../src/analytics/export.js"
import { pgClientLayer } from "../../src/db/database.js"
import { runMigrations } from "../../src/db/migrations.js"
import { fixtureDatabaseUrl } from "../support/fixture-db.js"
import { migratedDatabaseUrl, query, tempDir } from "../support/postgres.js"

describe("export errors", () => {
  it.scoped(
    "are typed, name the problem, and leave the previous file alone",
    () =>
      Effect.gen(function* () {
        const { url } = yield* fixtureDatabaseUrl
        const dir = yield* tempDir("predix-export")
        const out = Path.join(dir, "snapshot.duckdb")
        yield* exportSnapshot(url, { out })
        const digest = () =>
          Effect.promise(async () =>
            createHash("sha256")
              .update(await fs.readFile(out))
              .digest("hex")
          )
        const before = yield* digest()
        const files = () => Effect.promise(() => fs.readdir(dir))

        // 10^40 raw units do not fit DECIMAL(38,6).
        yield* query(url, `update market set volume = 10::numeric ^ 40 where id = (select min(id) from market)`)
        const tooBig = yield* Effect.flip(exportSnapshot(url, { out, full: true }))
        expect(tooBig._tag).toBe("ValueOutOfRange")
        expect(tooBig).toMatchObject({ table: "market", column: "volume", value: `1${"0".repeat(40)}` })
        expect(tooBig.message).toMatch(/market\.volume = 10{40} does not fit DECIMAL\(38,6\) \(more than 38 digits\)/)
        yield* query(url, `update market set volume = 0 where id = (select min(id) from market)`)

        // Undo images of a table nobody taught the exporter to read: no finalized export.
        const block = (yield* query<{ n: string }>(url, `select block_number::text as n from indexer_checkpoint`)).rows[0]!.n
        yield* query(url, `insert into undo_log values ($1, 'mystery', '1', null)`, [block])
        const unknown = yield* Effect.flip(exportSnapshot(url, { out }))
        expect(unknown._tag).toBe("UnknownUndoTable")
        expect(unknown.message).toMatch(/table mystery .* --include-unfinalized/)
        const tip = yield* exportSnapshot(url, { out: Path.join(dir, "tip.duckdb"), includeUnfinalized: true })
        expect(tip.point.includesUnfinalized).toBe(true)

        expect(yield* digest()).toBe(before)
        expect((yield* files()).filter((f) => f.includes(".tmp-"))).toEqual([])

        // Nothing indexed yet.
        const empty = yield* migratedDatabaseUrl
        yield* Effect.provide(runMigrations(), pgClientLayer(Redacted.make(empty)))
        const nothing = yield* Effect.flip(exportSnapshot(empty, { out: Path.join(dir, "empty.duckdb") }))
        expect(nothing._tag).toBe("SnapshotSourceError")
        expect(nothing.message).toMatch(/indexed nothing yet/)
        const unreachable = yield* Effect.flip(exportSnapshot("postgres://postgres@127.0.0.1:1/none", { out: Path.join(dir, "x.duckdb") }))
        expect(unreachable._tag).toBe("SnapshotSourceError")
        expect(unreachable.message).toMatch(/cannot open a snapshot of postgres:\/\/postgres@127\.0\.0\.1:1\/none/)
      }),
    120_000
  )
})
