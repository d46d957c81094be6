import { describe, expect, it } from "vitest"
import { array, bigint, bool, int, json, nullable, oneOf, rowDecoder, RowDecodeError, text, time } from "../../../http/core/rows.js"

const decode = rowDecoder({
  id: bigint,
  count: int,
  end_time: time,
  name: text(),
  state: oneOf("OPEN", "FILLED"),
  live: bool,
  title: json<Record<string, string>>(),
  ids: array(bigint),
  resolved_at: nullable(int)
})

const row = {
  id: "115792089237316195423570985008687907853269984665640564039457584007913129639935",
  count: "42",
  end_time: "115792089237316195423570985008687907853269984665640564039457584007913129639935",
  name: "q",
  state: "OPEN",
  live: true,
  title: { en: "t" },
  ids: ["1", "2"],
  resolved_at: null,
  total_count: "7"
}

describe("rowDecoder", () => {
  it("converts Postgres values as each column declares, and leaves out undeclared columns", () => {
    expect(decode(row)).toEqual({
      id: 2n ** 256n - 1n,
      count: 42,
      end_time: Number.MAX_SAFE_INTEGER,
      name: "q",
      state: "OPEN",
      live: true,
      title: { en: "t" },
      ids: [1n, 2n],
      resolved_at: null
    })
    expect(decode({ ...row, count: 42, resolved_at: "1700000000" })).toMatchObject({ count: 42, resolved_at: 1_700_000_000 })
  })

  it("fails with a RowDecodeError naming the column for a value of another kind or a missing column", () => {
    const cases: ReadonlyArray<[Record<string, unknown>, string]> = [
      [{ ...row, id: "1.5" }, "column id"],
      [{ ...row, id: null }, "column id"],
      [{ ...row, count: "9007199254740993" }, "column count"],
      [{ ...row, count: "x" }, "column count"],
      [{ ...row, name: 1 }, "column name"],
      [{ ...row, state: "CANCELLED" }, "column state"],
      [{ ...row, live: "true" }, "column live"],
      [{ ...row, ids: "1,2" }, "column ids"],
      [{ ...row, ids: ["1", "a"] }, "column ids"],
      [{ ...row, resolved_at: undefined }, "column resolved_at"]
    ]
    for (const [bad, message] of cases) {
      expect(() => decode(bad), message).toThrow(RowDecodeError)
      expect(() => decode(bad), message).toThrow(message)
    }
  })
})
