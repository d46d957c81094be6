/**
 * The bloom math against a real node: a transaction on anvil emits a log (from contract creation
 * code: LOG2 with two topics); the block's logsBloom is exactly `bloomOf` its logs, says "maybe"
 * for the log's address and topics and "no" for others. The rpc reads blooms and receipts as
 * the pipeline uses them.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { AddressBits, bloomBits, bloomOf, mayContain, parseBloom } from "../../pipeline/source/bloom.js"
import { makeRpc } from "../../pipeline/source/rpc.js"
import { startAnvil } from "../../tools/devnet/anvil.js"

const call = async <T>(url: string, method: string, params: ReadonlyArray<unknown>): Promise<T> => {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params })
  })
  const body = (await response.json()) as { result?: T; error?: { message: string } }
  if (body.error !== undefined) throw new Error(`${method}: ${body.error.message}`)
  return body.result as T
}

const TOPIC0 = `0x${"ab".repeat(32)}`
const TOPIC1 = `0x${"0".repeat(24)}${"12".repeat(20)}`
/** Creation code that only emits LOG2(TOPIC0, TOPIC1) with empty data, then stops. */
const INIT_CODE = `0x7f${TOPIC1.slice(2)}7f${TOPIC0.slice(2)}60006000a200`

describe("logsBloom", () => {
  it.live(
    "is computed as a real node computes it, and read with headers and receipts",
    () =>
      Effect.gen(function* () {
        const anvil = yield* Effect.acquireRelease(
          Effect.promise(() => startAnvil()),
          (a) => Effect.promise(() => a.stop())
        )
        const [from] = yield* Effect.promise(() => call<Array<string>>(anvil.url, "eth_accounts", []))
        const tx = yield* Effect.promise(() => call<string>(anvil.url, "eth_sendTransaction", [{ from, data: INIT_CODE, gas: "0x100000" }]))
        // Anvil may answer eth_sendTransaction before the automined block is sealed: null until then.
        const receipt = yield* Effect.promise(async () => {
          for (;;) {
            const answer = await call<{ blockHash: string; logs: Array<{ address: string; topics: Array<string> }> } | null>(
              anvil.url,
              "eth_getTransactionReceipt",
              [tx]
            )
            if (answer !== null) return answer
            await new Promise((resolve) => setTimeout(resolve, 50))
          }
        })
        expect(receipt.logs).toHaveLength(1)
        const block = yield* Effect.promise(() => call<{ logsBloom: string }>(anvil.url, "eth_getBlockByHash", [receipt.blockHash, false]))
        expect(block.logsBloom).toBe(bloomOf(receipt.logs))

        const bloom = parseBloom(block.logsBloom)!
        const log = receipt.logs[0]!
        for (const item of [log.address, TOPIC0, TOPIC1]) expect(mayContain(bloom, bloomBits(item)), item).toBe(true)
        const others = Array.from({ length: 50 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, "0")}`)
        expect(others.filter((a) => mayContain(bloom, bloomBits(a))).length).toBeLessThan(3)
        expect(new AddressBits().firstIn(bloom, [...others, log.address])).toBe(log.address)

        const rpc = makeRpc({ url: anvil.url })
        const header = yield* rpc.headerByHash(receipt.blockHash)
        expect(header.logsBloom).toBe(block.logsBloom)
        const logs = yield* rpc.receiptLogs(receipt.blockHash)
        expect(logs.map((l) => l.address)).toEqual([log.address.toLowerCase()])
      }).pipe(Effect.scoped),
    60_000
  )

  it("is unknown when a header has none or not 256 bytes; a malformed digit errs on maybe", () => {
    expect(parseBloom(undefined)).toBeUndefined()
    expect(parseBloom("0x00")).toBeUndefined()
    const empty = parseBloom(`0x${"0".repeat(512)}`)!
    const garbled = parseBloom(`0x${"g".repeat(512)}`)!
    const bits = bloomBits(`0x${"12".repeat(20)}`)
    expect(mayContain(empty, bits)).toBe(false)
    expect(mayContain(garbled, bits)).toBe(true)
    expect(
      mayContain(
        bloomOf([{ address: `0x${"12".repeat(20)}`, topics: [] }])
          .toUpperCase()
          .replace("0X", "0x"),
        bits
      )
    ).toBe(true)
  })
})
