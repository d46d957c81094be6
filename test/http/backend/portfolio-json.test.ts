/**
 * The portfolio answer written from Postgres' marked lines (`readPortfolioJson`) against the read model's portfolio
 * encoded by the schema (`readPortfolio`, `toPosition`, `totals`, `Schema.encodeSync(BackendPortfolio)`):
 * the same JSON text, byte for byte, for every holder of the indexed fixture, and for rows made to
 * reach every branch the fixture may not: market ids past BIGINT and at 2^256 - 1, questions with
 * quotes, backslashes, bars ("|", the lines' separator), control characters and non-ASCII text, balances of 70 digits, negative P&L,
 * closed positions (P&L only), resolved markets with either outcome or none, refunding, closed and
 * paused markets, and an address with no positions.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { totals, toPosition } from "../../../http/backend/trading/convert.js"
import { readPortfolioJson } from "../../../http/backend/trading/portfolio-json.js"
import { readPortfolio } from "../../../http/read/portfolio.js"
import { BackendPortfolio } from "../../../schema/backend-trading.js"
import { MARKET_MODULE_ID } from "../../../schema/market-status.js"
import type { Address } from "../../../schema/primitives.js"
import { onFixtureDb } from "../../support/fixture-db.js"

const bySchema = Schema.encodeSync(BackendPortfolio)

/** The portfolio as the read model and the schema write it. */
const schemaJson = (address: Address) =>
  Effect.map(readPortfolio(address), ({ data: p }) =>
    JSON.stringify(bySchema({ address, openPositions: p.openPositions, ...totals(p), positions: p.positions.map(toPosition) }))
  )

/** Both answers for every address that holds a position row, and for `extra` addresses. */
const compareAll = (extra: ReadonlyArray<Address>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const holders = (yield* sql<{ user_address: Address }>`select distinct user_address from position order by 1`).map(
      (row) => row.user_address
    )
    const addresses = [...holders, ...extra]
    let positions = 0
    for (const address of addresses) {
      const expected = yield* schemaJson(address)
      const actual = yield* readPortfolioJson(address)
      expect(actual, address).toBe(expected)
      positions += (JSON.parse(actual) as { positions: ReadonlyArray<unknown> }).positions.length
    }
    return { addresses: addresses.length, positions }
  })

const MADE = "0x00000000000000000000000000000000000000ab" as Address
const NOBODY = "0x00000000000000000000000000000000000000cd" as Address

/**
 * Markets copied from an indexed one with what the branches need changed, and positions of `MADE`
 * in them (and in every indexed market, so statuses and prices of real rows are reached too).
 */
const makeRows = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const made: ReadonlyArray<{
    id: bigint
    question: string
    resolved: boolean
    outcome: boolean | null
    refund: boolean
    ended: boolean
    price: bigint
  }> = [
    {
      id: 2n ** 63n - 1n,
      question: 'quote " backslash \\ slash / tab \t nl \n bar | pipe || end |',
      resolved: false,
      outcome: null,
      refund: false,
      ended: false,
      price: 0n
    },
    {
      id: 2n ** 63n,
      question: "control \u0001\u001f del \u007f",
      resolved: true,
      outcome: true,
      refund: false,
      ended: true,
      price: 1_000_000n
    },
    { id: 2n ** 256n - 1n, question: "é ☃ 𝄞 \u2028 sep", resolved: true, outcome: false, refund: false, ended: true, price: 3n },
    { id: 0xabcdef0123456789abcdefn, question: "", resolved: true, outcome: null, refund: true, ended: true, price: 999_999n },
    { id: 10n ** 70n, question: "refunding", resolved: false, outcome: null, refund: true, ended: false, price: 500_000n },
    { id: 10n ** 70n + 1n, question: "closed", resolved: false, outcome: null, refund: false, ended: true, price: 123_457n }
  ]
  yield* sql`create temporary table made_market as select * from market order by id limit 1`
  for (const m of made) {
    yield* sql`update made_market set id = ${m.id.toString()}::numeric, question = ${m.question}, is_resolved = ${m.resolved},
      outcome = ${m.outcome}, refund_mode = ${m.refund}, end_time = ${m.ended ? "0" : (2n ** 255n).toString()}::numeric,
      yes_price = ${m.price.toString()}::numeric`
    yield* sql`insert into market select * from made_market`
  }
  const huge = (10n ** 70n + 7n).toString()
  // Balances of every size (a closed one too), costs, and P&L of either sign, in the made and the indexed markets.
  yield* sql`insert into position (user_address, market_id, yes_balance, no_balance, yes_cost, no_cost, realized_pnl)
    select ${MADE}, id,
      case n % 4 when 0 then 0 when 1 then ${huge}::numeric else n * 1000003 end,
      case n % 3 when 0 then 0 else n * 7 end,
      n * 11, case n % 2 when 0 then ${huge}::numeric else 0 end,
      case n % 2 when 0 then -n * 999999 else n end
    from (select id, row_number() over (order by id) as n from market) m`
})

describe("the portfolio answer written from Postgres' lines", () => {
  it.live(
    "is the schema's encoding of the read model's portfolio, byte for byte",
    () =>
      onFixtureDb(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const indexed = yield* compareAll([NOBODY])
          expect(indexed.addresses, "the fixture has holders").toBeGreaterThan(5)
          expect(indexed.positions, "and open positions").toBeGreaterThan(10)

          yield* makeRows
          const made = yield* compareAll([])
          expect(JSON.parse(yield* readPortfolioJson(MADE)).positions.length, "the made positions are listed").toBeGreaterThan(20)
          expect(made.addresses).toBe(indexed.addresses)

          // Everything paused: every market that would be active is paused.
          yield* sql`insert into pause_state (scope, paused, account, updated_at, updated_block)
                values (${MARKET_MODULE_ID}, true, null, 0, 0)
                on conflict (scope) do update set paused = true`
          const paused = yield* readPortfolioJson(MADE)
          expect(paused).toContain('"marketStatus":"paused"')
          yield* compareAll([])
        })
      ),
    120_000
  )
})
