/**
 * The byte reader of header batches (`headers-answer.ts`) against the general path it stands in
 * for (JSON.parse, answers matched by id, then `parseHeader` on each result): on any input it
 * must give the same headers or give way (undefined), and it must not give way on the answers
 * nodes send.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { readHeadersAnswer } from "../../pipeline/source/headers-answer.js"
import { type BlockHeader, parseHeader } from "../../pipeline/source/rpc.js"

/** What the general path makes of `text` as the answer to requests `ids`, or "refused". */
const generalPath = (text: string, ids: ReadonlyArray<number>): Array<BlockHeader> | "refused" => {
  try {
    const json = JSON.parse(text) as unknown
    const answers = (Array.isArray(json) ? json : [json]) as Array<{ id?: unknown; result?: unknown; error?: unknown }>
    const byId = new Map(answers.map((a) => [a.id, a]))
    return ids.map((id) => {
      const answer = byId.get(id)
      if (answer === undefined || answer.error !== undefined || !("result" in answer) || answer.result === null) throw new Error("refused")
      return parseHeader(answer.result)
    })
  } catch {
    return "refused"
  }
}

/** The reader agrees with the general path: same headers, or it gives way. Returns what it read. */
const agrees = (text: string, ids: ReadonlyArray<number>) => {
  const read = readHeadersAnswer(Buffer.from(text, "utf8"), ids)
  if (read !== undefined) expect(read).toStrictEqual(generalPath(text, ids))
  return read
}

const hexDigits = (n: number) =>
  fc.array(fc.constantFrom(..."0123456789abcdefABCDEF"), { minLength: n, maxLength: n }).map((d) => d.join(""))
const hash = hexDigits(64).map((d) => `0x${d}`)
const quantity = fc.integer({ min: 0, max: 2 ** 40 }).map((n) => `0x${n.toString(16)}`)
const bloom = fc.oneof(
  hexDigits(512).map((d) => `0x${d}`),
  fc.constant(`0x${"0".repeat(512)}`),
  // Not a bloom parseBloom keeps: none then.
  fc.constantFrom("0x", null, 7, `0X${"0".repeat(512)}`)
)
/** Whatever else a node puts in a header: nested lists and objects, numbers, literals. */
const other = fc.oneof(
  quantity,
  fc.array(hash, { maxLength: 5 }),
  fc.array(fc.record({ index: quantity, address: hexDigits(40).map((d) => `0x${d}`), amount: quantity }), { maxLength: 3 }),
  fc.constantFrom(null, true, false, 0, -1, 1.5, 2e-7, 12345678901234, "", "0x", { nested: [[], {}, [1, [2, { a: null }]]] })
)

/** A header as nodes write it: any key order, the bloom maybe absent, extra fields. */
const rawHeader = fc
  .record({
    number: quantity,
    hash,
    parentHash: hash,
    timestamp: quantity,
    logsBloom: fc.option(bloom, { nil: undefined }),
    transactions: other,
    miner: other,
    withdrawals: other,
    extraData: other
  })
  .chain((h) => fc.shuffledSubarray(Object.keys(h), { minLength: Object.keys(h).length }).map((order) => ({ h, order })))
  .map(({ h, order }) =>
    Object.fromEntries(
      order.filter((k) => (h as Record<string, unknown>)[k] !== undefined).map((k) => [k, (h as Record<string, unknown>)[k]])
    )
  )

/** A batch answer to requests `firstId`.. (one per header), in `order` of the answers. */
const batch = fc
  .record({ headers: fc.array(rawHeader, { minLength: 1, maxLength: 5 }), firstId: fc.nat(1_000_000), space: fc.constantFrom(0, 1, 2) })
  .chain((b) =>
    fc
      .shuffledSubarray(
        b.headers.map((_, i) => i),
        { minLength: b.headers.length }
      )
      .map((order) => ({ ...b, order }))
  )
  .map(({ headers, firstId, space, order }) => ({
    ids: headers.map((_, i) => firstId + i),
    text: JSON.stringify(
      order.map((i) => ({ jsonrpc: "2.0", id: firstId + i, result: headers[i] })),
      null,
      space
    )
  }))

describe("readHeadersAnswer", () => {
  it("reads the batches nodes send exactly as the general path does, in request order whatever the answers' order", () => {
    fc.assert(
      fc.property(batch, ({ ids, text }) => {
        expect(agrees(text, ids)).toBeDefined()
      }),
      { numRuns: 300 }
    )
  })

  it("gives way or agrees on anything else: cut, spliced or altered answers", () => {
    fc.assert(
      fc.property(
        batch,
        fc.nat(),
        fc.constantFrom(
          "",
          "\\",
          '"',
          "\\u0030",
          "1",
          "-",
          ".",
          "e",
          "null",
          "}",
          "]",
          ",",
          ":",
          "G",
          "\u00e9",
          " ",
          "[",
          "{",
          "0x",
          "true"
        ),
        fc.boolean(),
        ({ ids, text }, position, insert, cut) => {
          const at = position % (text.length + 1)
          agrees(cut ? text.slice(0, at) : text.slice(0, at) + insert + text.slice(at), ids)
        }
      ),
      { numRuns: 2000 }
    )
  })

  it("gives way on answers the general path must judge", () => {
    const header = {
      number: "0x10",
      hash: `0x${"02".repeat(32)}`,
      parentHash: `0x${"01".repeat(32)}`,
      timestamp: "0x5",
      logsBloom: `0x${"00".repeat(256)}`,
      transactions: [`0x${"03".repeat(32)}`]
    }
    const answers = (...results: Array<unknown>) => JSON.stringify(results.map((result, i) => ({ jsonrpc: "2.0", id: i + 1, result })))
    const cases: Array<[string, string]> = [
      ["a block the node does not have", answers(header, null)],
      [
        "an error answer",
        JSON.stringify([
          { jsonrpc: "2.0", id: 1, result: header },
          { jsonrpc: "2.0", id: 2, error: { code: -32000, message: "header not found" } }
        ])
      ],
      ["one answer for the whole batch", JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "batch too large" } })],
      ["an answer missing", answers(header)],
      ["an id twice", answers(header, header).replace('"id":2', '"id":1')],
      ["an id not asked for", answers(header, header).replace('"id":2', '"id":3')],
      ["a short hash", answers(header, { ...header, hash: "0x02" })],
      ["a number for a quantity", answers(header, { ...header, timestamp: 5 })],
      ["a missing parent hash", answers(header, { ...header, parentHash: undefined })],
      ["an escaped digit", answers(header, header).replace('"0x10"', '"0x1\\u0030"')],
      ["a duplicate key", answers(header, header).replace('"number":"0x10"', '"number":"0x10","number":"0x11"')],
      ["a malformed number elsewhere", answers(header, { ...header, transactions: [] }).replace('"transactions":[]', '"transactions":01')],
      ["trailing bytes", `${answers(header, header)}x`],
      ["a quantity beyond 2^52", answers(header, { ...header, number: "0x1fffffffffffffff" })]
    ]
    for (const [what, text] of cases) expect(readHeadersAnswer(Buffer.from(text), [1, 2]), what).toBeUndefined()
  })

  it("lowercases hashes and keeps the bloom as sent, as parseHeader does", () => {
    const result = {
      number: "0X1A",
      hash: `0x${"AB".repeat(32)}`,
      parentHash: `0X${"Cd".repeat(32)}`,
      timestamp: "0xA",
      logsBloom: `0x${"Ff".repeat(256)}`
    }
    const text = JSON.stringify([{ jsonrpc: "2.0", id: 7, result }])
    const read = agrees(text, [7])
    expect(read).toEqual([
      { number: 26, hash: `0x${"ab".repeat(32)}`, parentHash: `0x${"cd".repeat(32)}`, timestamp: 10, logsBloom: `0x${"Ff".repeat(256)}` }
    ])
  })
})
