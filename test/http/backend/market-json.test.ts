/**
 * The market record written directly (`marketJson`) against the schema's encoding
 * (`JSON.stringify(Schema.encodeSync(BackendMarket)(...))`): the same JSON text, byte for byte, for
 * every market of the indexed fixture (with its display metadata: slugs, categories, icons,
 * translated titles) in every locale, binary and multi records alike, and for records made to
 * reach every branch the fixture may not: null slug, category, icon, prices and times, either
 * outcome, every status, text that JSON must escape, ids and amounts at their largest, negative
 * amounts, and the kinds no market has today (written by the schema's encoder).
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { marketJson } from "../../../http/backend/markets/market-json.js"
import { readEventMembers } from "../../../http/backend/markets/repository.js"
import { toBackendMarket } from "../../../http/backend/markets/records.js"
import { LOCALES } from "../../../http/backend/locale.js"
import { MARKET_COLUMNS, MARKET_FROM, toMarket } from "../../../http/read/markets.js"
import { BackendMarket, MARKET_STATUSES } from "../../../schema/backend-markets.js"
import { MAX_UINT256, money, type Address } from "../../../schema/primitives.js"
import { seedDisplayMetadataFrom } from "../../../src/display-metadata.js"
import { onFixtureDb } from "../../support/fixture-db.js"

const bySchema = (market: BackendMarket) => JSON.stringify(Schema.encodeSync(BackendMarket)(market))

const expectSame = (market: BackendMarket) => expect(marketJson(market), market.marketId).toBe(bySchema(market))

const ADDRESS = "0x00000000000000000000000000000000000000ab" as Address

describe("the market record written directly", () => {
  it.live(
    "is the schema's encoding of every indexed market, in every locale",
    () =>
      onFixtureDb(
        Effect.gen(function* () {
          yield* seedDisplayMetadataFrom()
          const sql = yield* SqlClient.SqlClient
          const markets = (yield* sql.unsafe(`select ${MARKET_COLUMNS} from ${MARKET_FROM} order by m.id`)).map(toMarket)
          const byEvent = yield* readEventMembers([...new Set(markets.flatMap((m) => (m.eventId === null ? [] : [m.eventId])))])
          const kinds = new Set<string>()
          let titled = 0
          for (const locale of LOCALES) {
            for (const market of markets) {
              const record = toBackendMarket(market, locale, market.eventId === null ? undefined : byEvent.get(market.eventId.toString()))
              kinds.add(record.kind)
              if (market.metadata !== null) titled++
              expectSame(record)
            }
          }
          expect(markets.length, "the fixture has markets").toBeGreaterThan(10)
          expect([...kinds].sort(), "binary and multi records").toEqual(["binary", "multi"])
          expect(titled, "with display metadata").toBeGreaterThan(0)
        })
      ),
    120_000
  )

  it("is the schema's encoding of records made for every branch", () => {
    const text = 'quote " backslash \\ tab \t nl \n control \u0001\u001f del \u007f é ☃ 𝄞 \u2028'
    const base = {
      marketId: `0x${MAX_UINT256.toString(16)}` as const,
      id: MAX_UINT256,
      slug: null,
      title: { key: `market.${MAX_UINT256}.title`, fallback: text },
      question: text,
      category: null,
      featured: false,
      icon: null,
      status: "active" as const,
      endTime: 0,
      createdAt: 9_007_199_254_740_991,
      createdBlock: 0,
      creator: ADDRESS,
      oracle: ADDRESS,
      volume: money(10n ** 70n, 6, "USDC"),
      openInterest: money(-1n, 6, "USDC"),
      tradeCount: 0,
      lastTradeAt: null,
      outcome: null,
      resolvedAt: null,
      capabilities: { trade: false, redeem: false, refund: false }
    }
    const prices = { yesToken: ADDRESS, noToken: ADDRESS, yesPrice: null, noPrice: null }
    const records: Array<BackendMarket> = []
    for (const status of MARKET_STATUSES) {
      for (const outcome of [null, "YES", "NO"] as const) {
        records.push({
          kind: "binary",
          ...base,
          status,
          outcome,
          slug: "a-slug",
          category: 'Crypto "x"',
          icon: "https://x/\u00e9.png",
          featured: true,
          lastTradeAt: 1,
          resolvedAt: 2,
          capabilities: { trade: status === "active", redeem: status === "resolved", refund: status === "refunding" },
          binary: { ...prices, yesPrice: 1_000_000n, noPrice: 0n }
        })
      }
    }
    records.push({ kind: "binary", ...base, binary: prices })
    records.push({
      kind: "multi",
      ...base,
      multi: { eventId: MAX_UINT256, index: 0, ...prices, yesPrice: 3n, noPrice: 999_997n, members: [] }
    })
    records.push({
      kind: "multi",
      ...base,
      multi: {
        eventId: 1n,
        index: 1,
        ...prices,
        members: MARKET_STATUSES.map((status, index) => ({
          marketId: `0x${BigInt(index + 1)
            .toString(16)
            .padStart(64, "0")}` as const,
          index,
          title: { key: `market.${index}.title`, fallback: index === 0 ? text : "" },
          yesPrice: index % 2 === 0 ? null : BigInt(index * 123_457),
          volume: money(BigInt(index) * 10n ** 40n, 6, "USDC"),
          status
        }))
      }
    })
    records.push({ kind: "scalar", ...base, scalar: { lowerBound: "0", upperBound: "100", unit: "USD", yesPrice: 5n } })
    records.push({ kind: "grouped", ...base, grouped: { groupId: text, members: [base.marketId] } })
    for (const record of records) expectSame(record)
  })
})
