/**
 * The portfolio's hand-written encoder (`encodePortfolio`) against the schema's: the same JSON,
 * byte for byte, over every branch a position has (marked or not, each status and outcome,
 * negative and zero amounts, huge balances) and an empty portfolio.
 */
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { encodePortfolio, toPosition, totals } from "../../../http/backend/trading/convert.js"
import type { PortfolioPositionRecord } from "../../../http/read/portfolio.js"
import { MARKET_STATUSES } from "../../../schema/market-status.js"
import { BackendPortfolio } from "../../../schema/backend-trading.js"
import type { Address } from "../../../schema/primitives.js"

const address = "0x00000000000000000000000000000000000000ab" as Address

const position = (i: number): PortfolioPositionRecord => {
  const resolved = i % 3 === 0
  return {
    marketId: BigInt(i) * 0xfedcba9876543210n,
    user: address,
    yesBalance: i % 4 === 0 ? 0n : 10n ** BigInt(i % 40) + BigInt(i),
    noBalance: BigInt(i * 1_000_003),
    yesCost: BigInt(i * 7),
    noCost: 0n,
    realizedPnl: i % 2 === 0 ? -BigInt(i * 999_999) : BigInt(i),
    question: `Will "${i}" happen?\n\\ é ☃ \u0001`,
    marketStatus: MARKET_STATUSES[i % MARKET_STATUSES.length]!,
    outcome: resolved ? i % 2 === 0 : null,
    markPrice: resolved ? null : BigInt((i * 37_123) % 1_000_001),
    value: BigInt(i * 11),
    unrealizedPnl: -BigInt(i * 5) + 3n
  }
}

const portfolio = (positions: ReadonlyArray<PortfolioPositionRecord>) => ({
  address,
  openPositions: positions.length,
  ...totals({ value: 5n, cost: 1_000_000n, unrealizedPnl: -999_995n, realizedPnl: -1n, totalPnl: -999_996n }),
  positions: positions.map(toPosition)
})

describe("encodePortfolio", () => {
  const bySchema = Schema.encodeSync(BackendPortfolio)

  it.each([0, 1, 60])("gives the schema's JSON for %i positions", (n) => {
    const value = portfolio(Array.from({ length: n }, (_, i) => position(i + 1)))
    expect(JSON.stringify(encodePortfolio(value))).toBe(JSON.stringify(bySchema(value)))
  })
})
