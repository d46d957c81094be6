/**
 * The fixed-layout decoder agrees with viem's decodeEventLog (plus the catalog's toDomain) on
 * every catalog entry for arbitrary arguments, and routes by emitting address.
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { decodeEventLog, encodeAbiParameters, encodeEventTopics, type AbiParameter, type Hex } from "viem"
import { CATALOG, type CatalogEntry } from "../../schema/catalog.js"
import { AddressBook, decodeLog } from "../../pipeline/decode.js"
import { syntheticDeployment } from "../../tools/recording/synthetic.js"
import { arbitraryFor } from "../support/abi-arbitrary.js"

const encode = (entry: CatalogEntry, values: Record<string, unknown>) => {
  const topics = encodeEventTopics({ abi: [entry.abi], eventName: entry.abi.name, args: values } as never) as Array<Hex>
  const plain = entry.abi.inputs.filter((i) => !i.indexed)
  const data = encodeAbiParameters(
    plain as ReadonlyArray<AbiParameter>,
    plain.map((i) => values[i.name ?? ""])
  )
  return { topics, data }
}

describe("fixed-layout decoder", () => {
  it.each(CATALOG.map((e) => [`${e.contract} ${e.variant} ${e.signature} /${1 + e.indexedCount}`, e] as const))(
    "matches viem on %s",
    (_label, entry) => {
      const args = fc.record(
        Object.fromEntries(entry.abi.inputs.map((p) => [p.name ?? "", arbitraryFor(p)])) as Record<string, fc.Arbitrary<unknown>>
      )
      fc.assert(
        fc.property(args, (values) => {
          const log = encode(entry, values)
          const reference = entry.toDomain(
            decodeEventLog({ abi: [entry.abi], topics: log.topics as [Hex, ...Array<Hex>], data: log.data, strict: true }).args as Record<
              string,
              unknown
            >
          )
          const mine = decodeLog([entry.contract], log)
          expect(mine?.entry).toBe(entry)
          expect(mine?.event).toEqual(reference)
        }),
        { numRuns: 30 }
      )
    }
  )

  it("routes by emitting address: the same topic0 means different events on different contracts", () => {
    const deployment = syntheticDeployment(3)
    const book = new AddressBook(deployment)
    const diamondResolved = CATALOG.find((e) => e.contract === "marketFacet" && e.name === "MarketResolved")!
    const log = encode(diamondResolved, { marketId: 5n, outcome: true, resolver: "0x000000000000000000000000000000000000dEaD" })
    expect(decodeLog(book.kindsOf(deployment.diamond)!, log)?.event._tag).toBe("MarketResolved")
    // The price-feed oracle has no event with that topic0 and topic count: unknown, not a crash.
    expect(decodeLog(book.kindsOf(deployment.priceFeedOracle)!, log)).toBeUndefined()
    expect(book.kindsOf("0x1234567890123456789012345678901234567890")).toBeUndefined()
    book.watchToken("0xAbC0000000000000000000000000000000000001")
    expect(book.kindsOf("0xabc0000000000000000000000000000000000001")).toEqual(["outcomeToken"])
  })

  it("rejects a log whose data is shorter than its layout, with a message naming the event", () => {
    const trade = CATALOG.find((e) => e.contract === "router" && e.name === "Trade" && e.variant === "spec")!
    const log = encode(trade, {
      marketId: 1n,
      trader: "0x000000000000000000000000000000000000dEaD",
      recipient: "0x000000000000000000000000000000000000dEaD",
      tradeType: 0,
      amountIn: 1n,
      amountOut: 1n,
      clobFilled: 0n,
      ammFilled: 1n
    })
    expect(() => decodeLog(["router"], { topics: log.topics, data: log.data.slice(0, 66) })).toThrow(/Trade\(.*needs 160/)
  })
})
