/**
 * The byte reader of eth_getLogs answers against the general path it stands in for
 * (JSON.parse, then `parseLog` on each log): on any input it must give the same logs or give
 * way (undefined), and it must not give way on the answers real nodes send.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { readLogsAnswer } from "../../pipeline/source/logs-answer.js"
import type { ChainLog } from "../../pipeline/source/chain-log.js"
import { parseLog } from "../../pipeline/source/rpc.js"

/** What the general path makes of `text` as the answer to request `id`, or "refused". */
const generalPath = (text: string, id: number): Array<ChainLog> | "refused" => {
  try {
    const answer = JSON.parse(text) as { id?: unknown; result?: unknown; error?: unknown }
    if (Array.isArray(answer) || answer.error !== undefined || answer.id !== id || !Array.isArray(answer.result)) return "refused"
    return answer.result.map(parseLog)
  } catch {
    return "refused"
  }
}

/** The reader agrees with the general path: same logs, or it gives way. Returns what it read. */
const agrees = (text: string, id: number) => {
  const read = readLogsAnswer(Buffer.from(text, "utf8"), id)
  const general = generalPath(text, id)
  if (read !== undefined) expect(read).toStrictEqual(general)
  return read
}

const hexDigits = (n: number) =>
  fc.array(fc.constantFrom(..."0123456789abcdefABCDEF"), { minLength: n, maxLength: n }).map((d) => d.join(""))
/** Hashes and addresses from a small pool as often as not: consecutive logs share them, as logs of one block or transaction do. */
const hash = fc.oneof(
  hexDigits(64).map((d) => `0x${d}`),
  fc.constantFrom(`0x${"ab".repeat(32)}`, `0x${"AB".repeat(32)}`, `0x${"0a".repeat(32)}`)
)
const address = fc.oneof(
  hexDigits(40).map((d) => `0x${d}`),
  fc.constantFrom(`0x${"cd".repeat(20)}`, `0x${"Cd".repeat(20)}`)
)
const quantity = fc.integer({ min: 0, max: 2 ** 40 }).map((n) => `0x${n.toString(16)}`)

/** A log as nodes write it: any key order, optional blockTimestamp, extra fields. */
const rawLog = fc
  .record({
    address,
    topics: fc.array(hash, { maxLength: 4 }),
    data: fc.array(hexDigits(64), { maxLength: 4 }).map((words) => `0x${words.join("")}`),
    blockNumber: quantity,
    blockHash: hash,
    logIndex: quantity,
    transactionHash: hash,
    transactionIndex: quantity,
    removed: fc.constant(false),
    blockTimestamp: fc.option(quantity, { nil: undefined }),
    logType: fc.option(fc.constantFrom("mined", null, true), { nil: undefined })
  })
  .chain((log) => fc.shuffledSubarray(Object.keys(log), { minLength: Object.keys(log).length }).map((order) => ({ log, order })))
  .map(({ log, order }) =>
    Object.fromEntries(
      order.filter((k) => (log as Record<string, unknown>)[k] !== undefined).map((k) => [k, (log as Record<string, unknown>)[k]])
    )
  )

const answerText = (logs: Array<object>, id: number, space: number) => JSON.stringify({ jsonrpc: "2.0", id, result: logs }, null, space)

describe("readLogsAnswer", () => {
  it("reads the answers nodes send exactly as the general path does", () => {
    fc.assert(
      fc.property(fc.array(rawLog, { maxLength: 6 }), fc.nat(1_000_000), fc.constantFrom(0, 1, 2), (logs, id, space) => {
        const read = agrees(answerText(logs, id, space), id)
        expect(read).toBeDefined()
      }),
      { numRuns: 300 }
    )
  })

  it("gives way or agrees on anything else: cut, spliced or altered answers", () => {
    fc.assert(
      fc.property(
        fc.array(rawLog, { minLength: 1, maxLength: 3 }),
        fc.nat(1000),
        fc.nat(),
        fc.constantFrom("", "\\", '"', "\\u0030", "1", "null", "}", "]", ",", "G", "\u00e9", " ", "[", "{", "0x", "true"),
        fc.boolean(),
        (logs, id, position, insert, cut) => {
          const text = answerText(logs, id, 0)
          const at = position % (text.length + 1)
          agrees(cut ? text.slice(0, at) : text.slice(0, at) + insert + text.slice(at), id)
        }
      ),
      { numRuns: 2000 }
    )
  })

  it("gives way on answers the general path must judge", () => {
    const log = {
      address: `0x${"ab".repeat(20)}`,
      topics: [`0x${"01".repeat(32)}`],
      data: "0x",
      blockNumber: "0x10",
      blockHash: `0x${"02".repeat(32)}`,
      logIndex: "0x0",
      transactionHash: `0x${"03".repeat(32)}`,
      transactionIndex: "0x0"
    }
    const cases: Array<[string, string]> = [
      [
        "an error answer",
        JSON.stringify({ jsonrpc: "2.0", id: 1, error: { code: -32005, message: "query returned more than 10000 results" } })
      ],
      ["another id", answerText([log], 2, 0)],
      ["a batch", JSON.stringify([{ jsonrpc: "2.0", id: 1, result: [log] }])],
      ["a removed log", answerText([{ ...log, removed: true }], 1, 0)],
      ["a short block hash", answerText([{ ...log, blockHash: "0x02" }], 1, 0)],
      ["a number for a quantity", answerText([{ ...log, logIndex: 0 }], 1, 0)],
      ["a missing field", answerText([{ ...log, transactionHash: undefined }], 1, 0)],
      ["a null timestamp", answerText([{ ...log, blockTimestamp: null }], 1, 0)],
      ["an escaped digit", answerText([log], 1, 0).replace('"0x10"', '"0x1\\u0030"')],
      ["a duplicate key", answerText([log], 1, 0).replace('"data":"0x"', '"data":"0x","data":"0x00"')],
      ["trailing bytes", `${answerText([log], 1, 0)}x`],
      ["a quantity beyond 2^52", answerText([{ ...log, blockNumber: "0x1fffffffffffffff" }], 1, 0)]
    ]
    for (const [what, text] of cases) expect(readLogsAnswer(Buffer.from(text), 1), what).toBeUndefined()
    // ...and where the general path accepts one of them, it still reads it the same.
    expect(generalPath(answerText([{ ...log, blockTimestamp: null }], 1, 0), 1)).not.toBe("refused")
  })

  it("lowercases as parseLog does", () => {
    const text = answerText(
      [
        {
          address: `0x${"AB".repeat(20)}`,
          topics: [`0X${"CD".repeat(32)}`],
          data: "0xEF",
          blockNumber: "0X1A",
          blockHash: `0x${"0F".repeat(32)}`,
          logIndex: "0xA",
          transactionHash: `0x${"Aa".repeat(32)}`,
          transactionIndex: "0x0"
        }
      ],
      5,
      0
    )
    const read = agrees(text, 5)
    expect(read?.[0]).toMatchObject({
      address: `0x${"ab".repeat(20)}`,
      topics: [`0x${"cd".repeat(32)}`],
      data: "0xef",
      blockNumber: 26,
      logIndex: 10
    })
  })
})
