/**
 * NUMERIC values decoded from real Postgres binary COPY output equal the numbers sent, for
 * random integers and decimals of any size and sign; a value with more fraction digits than
 * asked for, or past the limit, is refused rather than rounded.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import { CopyTuples } from "../../src/analytics/copy-tuples.js"
import { numericScaled, numericText, OutOfRange } from "../../src/analytics/pg-binary.js"
import { openSnapshot } from "../../src/analytics/snapshot.js"
import { EXTERNAL_URL } from "../support/postgres.js"

/** Each text as a Postgres numeric, decoded by `decode` from the binary COPY of one column. */
const roundTrip = <A>(texts: ReadonlyArray<string>, decode: (buf: Buffer, at: number) => A) =>
  Effect.scoped(
    Effect.gen(function* () {
      const [db] = yield* openSnapshot(EXTERNAL_URL)
      const out: Array<A | Error> = []
      const values = texts.map((t, i) => `(${i}, '${t}')`).join(", ")
      const tuples = new CopyTuples(1, (buf, fields) => {
        try {
          out.push(decode(buf, fields[0]!))
        } catch (error) {
          out.push(error as Error)
        }
      })
      yield* Effect.promise(() => db!.copyOut(`select x::numeric from (values ${values}) v(i, x) order by i`, (payload) => tuples.feed(payload)))
      expect(tuples.complete).toBe(true)
      return out
    })
  )

const LIMIT = 10n ** 80n

describe("binary NUMERIC decoding", () => {
  it.live("integers of any size and sign, around the fast path's edge", () =>
    Effect.gen(function* () {
      const samples = fc.sample(fc.bigInt({ min: -(10n ** 60n), max: 10n ** 60n }), 300)
      const edges = [0n, 1n, -1n, 9999n, 10000n, 999_999_999_999n, 1_000_000_000_000n, 10n ** 38n - 1n, -(10n ** 38n) + 1n, 2n ** 160n, 1_500_000n, 10n ** 12n * 7n]
      const values = [...edges, ...samples]
      const decoded = yield* roundTrip(values.map(String), (buf, at) => numericScaled(buf, at, 0, LIMIT))
      expect(decoded).toEqual(values)
      const texts = yield* roundTrip(values.map(String), numericText)
      expect(texts).toEqual(values.map(String))
    })
  )

  it.live("decimals scale exactly, and refuse what would round", () =>
    Effect.gen(function* () {
      const texts = ["1.5", "-0.000001", "123.456789", "0.1234567", "100", "0.00", "1e-3", "5.0000010"]
      const decoded = yield* roundTrip(texts, (buf, at) => numericScaled(buf, at, 6, LIMIT))
      expect(decoded.slice(0, 2)).toEqual([1_500_000n, -1n])
      expect(decoded[2]).toBe(123_456_789n)
      expect(decoded[3]).toBeInstanceOf(OutOfRange)
      expect(decoded.slice(4, 8)).toEqual([100_000_000n, 0n, 1000n, 5_000_001n])
      expect(yield* roundTrip(texts, numericText)).toEqual(["1.5", "-0.000001", "123.456789", "0.1234567", "100", "0.00", "0.001", "5.0000010"])
    })
  )

  it.live("tuples split anywhere across payloads are framed the same", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const [db] = yield* openSnapshot(EXTERNAL_URL)
        const payloads: Array<Buffer> = []
        yield* Effect.promise(() =>
          db!.copyOut(`select g::bigint, repeat('x', g % 7), case when g % 3 = 0 then null else g * 1000 end::numeric from generate_series(1, 200) g`, (p) =>
            payloads.push(Buffer.from(p))
          )
        )
        const whole = Buffer.concat(payloads)
        const read = (pieces: ReadonlyArray<Buffer>) => {
          const rows: Array<ReadonlyArray<string | null>> = []
          const tuples = new CopyTuples(3, (buf, f) =>
            rows.push([0, 1, 2].map((c) => (f[2 * c + 1]! < 0 ? null : buf.subarray(f[2 * c]!, f[2 * c]! + f[2 * c + 1]!).toString("hex"))))
          )
          pieces.forEach((piece) => tuples.feed(piece))
          expect(tuples.complete).toBe(true)
          return rows
        }
        const expected = read(payloads)
        expect(expected).toHaveLength(200)
        fc.assert(
          fc.property(fc.array(fc.integer({ min: 1, max: whole.length - 1 }), { maxLength: 40 }), (cuts) => {
            const at = [0, ...[...new Set(cuts)].sort((a, b) => a - b), whole.length]
            expect(read(at.slice(1).map((end, i) => whole.subarray(at[i]!, end)))).toEqual(expected)
          }),
          { numRuns: 100 }
        )
      })
    )
  )

  it.live("values past the limit and non-numbers are refused", () =>
    Effect.gen(function* () {
      const decoded = yield* roundTrip([String(10n ** 38n), String(-(10n ** 38n)), "NaN"], (buf, at) => numericScaled(buf, at, 0, 10n ** 38n))
      expect(decoded.map((d) => d instanceof OutOfRange && d.why)).toEqual(["more than 38 digits", "more than 38 digits", "not a finite number"])
    })
  )
})
