/**
 * The sink's COPY path (pipeline/copy-in.ts) against a real Postgres: every kind of value comes
 * back exactly as written, text that looks like COPY syntax included (tabs, newlines, carriage
 * returns, backslashes, `\N`, `\.`), and a COPY that fails (a duplicate key) fails the
 * transaction with a typed SqlError, leaving nothing behind.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { copyIn, copyInText, copyText, CopyText } from "../../pipeline/copy-in.js"
import { copyLineOf, encodeRow, type AnyRow } from "../../pipeline/rows-sink.js"
import { APPEND_TABLES, codecs, KEYED_TABLES, type Codec } from "../../pipeline/tables.js"
import { withScratchDb } from "../support/postgres.js"

const nasty = ["tab\there", "line\nbreak", "carriage\rreturn", "back\\slash", "\\N", "\\.", "end\\", "ünïcødé ✓", "", "  spaced  "]

describe("COPY into the sink's tables", () => {
  it("encodes nulls, booleans, numbers, JSON and escapes text", () => {
    expect(copyText([["a\tb", null, 7, true, false, { k: "x\ny" }]])).toBe('a\\tb\t\\N\t7\tt\tf\t{"k":"x\\\\ny"}\n')
  })

  it("a table's compiled COPY line is the text of its encoded row, for every table and kind of value", () => {
    const sample = (codec: Codec, i: number): unknown => {
      switch (codec) {
        case codecs.big:
          return i % 2 === 0 ? 10n ** 70n + BigInt(i) : -BigInt(i)
        case codecs.count:
          return BigInt(i)
        case codecs.int8:
          return 1_750_000_000 + i
        case codecs.int4:
        case codecs.int2:
          return -i
        case codecs.text:
          return nasty[i % nasty.length]
        case codecs.bool:
          return i % 2 === 0
        case codecs.bigList:
          return [BigInt(i), 10n ** 60n]
        default:
          return { label: nasty[i % nasty.length], list: ["1", "2"] }
      }
    }
    for (const def of [...Object.values(KEYED_TABLES), ...Object.values(APPEND_TABLES)]) {
      const full: AnyRow = Object.fromEntries(def.columns.map((c, i) => [c.field, sample(c.codec, i)]))
      const empty: AnyRow = Object.fromEntries(def.columns.map((c) => [c.field, null]))
      for (const row of [full, empty]) expect(copyLineOf(def)(row), def.sql).toBe(copyText([encodeRow(def, row)]))
    }
  })

  it.live("round-trips every value through Postgres, and a failed COPY rolls its transaction back", () =>
    withScratchDb(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql.unsafe(`create table copy_probe (id integer primary key, label text, amount numeric(78,0), flag boolean, doc jsonb)`)
        const rows = nasty.map(
          (label, i) => [i, label, (10n ** 70n + BigInt(i)).toString(), i % 2 === 0, i === 3 ? null : { label, list: ["1", "2"] }] as const
        )
        yield* sql.withTransaction(copyIn("copy_probe", ["id", "label", "amount", "flag", "doc"], rows))
        const back = yield* sql.unsafe<{ id: number; label: string; amount: string; flag: boolean; doc: unknown }>(
          `select * from copy_probe order by id`
        )
        expect(back.map((r) => [r.id, r.label, r.amount, r.flag, r.doc])).toEqual(rows.map((r) => [...r]))

        const failed = yield* Effect.flip(
          sql.withTransaction(
            Effect.zipRight(
              sql.unsafe(`insert into copy_probe (id, label, amount, flag) values (100, 'before', 1, true)`),
              copyIn(
                "copy_probe",
                ["id", "label", "amount", "flag", "doc"],
                [
                  [101, "new", "1", true, null],
                  [0, "duplicate", "1", true, null]
                ]
              )
            )
          )
        )
        expect(failed._tag).toBe("SqlError")
        expect(failed.message).toMatch(/COPY into copy_probe failed: duplicate key/)
        const count = yield* sql.unsafe<{ n: string }>(`select count(*) as n from copy_probe`)
        expect(count[0]!.n).toBe(String(rows.length))
      })
    )
  )

  it.live("COPY text built in pooled buffers: many lines, multi-byte text, a failed COPY, then the buffers reused", () =>
    withScratchDb(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql.unsafe(`create table copy_text_probe (id integer primary key, label text)`)
        // Enough lines for many writes into the buffer and a few moves to a bigger one; labels with
        // two-, three- and four-byte characters (a surrogate pair) and COPY's own escapes.
        const labelOf = (i: number) => `${nasty[i % nasty.length]}·${"€".repeat(i % 7)}${"😀".repeat(i % 3)}${i}`
        const text = (from: number, to: number) => {
          const t = new CopyText()
          for (let i = from; i < to; i++) t.add(copyText([[i, labelOf(i)]]))
          return t
        }
        expect(new CopyText().empty).toBe(true)
        yield* sql.withTransaction(copyInText("copy_text_probe", ["id", "label"], text(0, 40_000)))
        const failed = yield* Effect.flip(sql.withTransaction(copyInText("copy_text_probe", ["id", "label"], text(39_990, 40_010))))
        expect(failed.message).toMatch(/COPY into copy_text_probe failed: duplicate key/)
        // Buffers released by the first COPY (and not the failed one's) serve these.
        for (const [from, to] of [
          [40_000, 45_000],
          [45_000, 45_001],
          [45_001, 60_000]
        ] as const) {
          yield* sql.withTransaction(copyInText("copy_text_probe", ["id", "label"], text(from, to)))
        }
        yield* sql.withTransaction(copyInText("copy_text_probe", ["id", "label"], new CopyText()))
        const back = yield* sql.unsafe<{ id: number; label: string }>(`select id, label from copy_text_probe order by id`)
        expect(back.length).toBe(60_000)
        for (const row of back) if (row.label !== labelOf(row.id)) expect(row).toEqual({ id: row.id, label: labelOf(row.id) })
      })
    )
  )
})
