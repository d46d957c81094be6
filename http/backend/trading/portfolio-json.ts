/**
 * The portfolio answer (`GET /api/trading/:address/portfolio`) assembled by Postgres: one
 * statement whose one value is the JSON text of the answer's `data`, byte for byte what
 * `JSON.stringify(Schema.encodeSync(BackendPortfolio)(...))` makes of the read model's portfolio
 * (`readPortfolio` in `http/read/portfolio.ts`, mapped by `toPosition` and `totals`):
 * test/http/backend/portfolio-json.test.ts compares the two over every holder of the fixture and
 * rows made to reach every branch.
 *
 * Why: a heavy trader holds hundreds of positions, and the page every signed-in user opens was
 * the backend's most expensive uncached request (issue 30): each position's row was parsed by the
 * driver, its amounts made bigints, marked, formatted into eight Money values and encoded again
 * as JSON. Here the same rules run in C over the rows Postgres reads anyway, and the process only
 * wraps the text in the envelope.
 *
 * The rules are those of `http/read/portfolio.ts` (`markPosition`, `summarize`), restated in SQL:
 * - a position is open while it holds a share on either side; only open ones are listed (by
 *   market id) and counted in value and cost, while realized P&L sums every position row;
 * - a resolved market with an outcome marks at 1 per winning share (no mark price); any other
 *   marks YES at the market's YES price and NO at 1 minus it, each rounded down (`div`, as
 *   bigint division does for these non-negative products);
 * - `outcome` is the market's outcome as stored (null until resolved), `marketStatus` the one
 *   status rule (`schema/market-status.ts`);
 * - positions of a market the index has no row for are left out, as the read model's join does.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { PRICE_SCALE, type Address } from "../../../schema/primitives.js"
import { marketStatusSql } from "../../../schema/market-status.js"
import { read } from "../../core/db.js"
import { prepared } from "../../core/prepared.js"
import { jsonText, marketIdHexJson, moneyJson, nullablePriceJson, raw, stringJson } from "../json-sql.js"

const SCALE = PRICE_SCALE.toString()

/** One open position's JSON, over the columns of `marked` below. */
const POSITION_JSON = jsonText([
  ...raw('{"marketId":'),
  ...marketIdHexJson("market_id"),
  ...raw(',"question":'),
  ...stringJson("question"),
  ...raw(',"marketStatus":"'),
  "status",
  ...raw('","outcome":'),
  `(case when outcome then '"YES"' when not outcome then '"NO"' else 'null' end)`,
  ...raw(',"yesBalance":'),
  ...moneyJson("yes_balance", 6, "YES"),
  ...raw(',"noBalance":'),
  ...moneyJson("no_balance", 6, "NO"),
  ...raw(',"yesCost":'),
  ...moneyJson("yes_cost", 6, "USDC"),
  ...raw(',"noCost":'),
  ...moneyJson("no_cost", 6, "USDC"),
  ...raw(',"markPrice":'),
  ...nullablePriceJson("mark_price"),
  ...raw(',"value":'),
  ...moneyJson("value", 6, "USDC"),
  ...raw(',"unrealizedPnl":'),
  ...moneyJson("value - yes_cost - no_cost", 6, "USDC"),
  ...raw(',"realizedPnl":'),
  ...moneyJson("realized_pnl", 6, "USDC"),
  ...raw("}")
])

/** The answer's JSON, over the columns of `totals` below. */
const PORTFOLIO_JSON = jsonText([
  ...raw('{"address":'),
  ...stringJson("$1"),
  ...raw(',"openPositions":'),
  "open_positions",
  ...raw(',"value":'),
  ...moneyJson("value", 6, "USDC"),
  ...raw(',"cost":'),
  ...moneyJson("cost", 6, "USDC"),
  ...raw(',"unrealizedPnl":'),
  ...moneyJson("value - cost", 6, "USDC"),
  ...raw(',"realizedPnl":'),
  ...moneyJson("realized_pnl", 6, "USDC"),
  ...raw(',"totalPnl":'),
  ...moneyJson("realized_pnl + value - cost", 6, "USDC"),
  ...raw(',"positions":['),
  "positions",
  ...raw("]}")
])

/**
 * Every position row of `$1` with its market (`held`), marked (`marked`: open, mark price and
 * value), the open ones written (`listed`), folded in one pass into the totals and the list
 * (`totals`), then written as the answer. Every column written is NOT NULL (migrations 0002 and
 * 0011: the YES price since 0011) except the outcome and the mark price, which are written as
 * `null` explicitly (`concat` would write a null as nothing). A prepared statement: its text is
 * long and the same on every request, so each connection parses and plans it once.
 */
const PORTFOLIO_SQL = prepared(`
  with totals as (
    select coalesce(sum(realized_pnl), 0) as realized_pnl,
           count(*) filter (where open) as open_positions,
           coalesce(sum(value) filter (where open), 0) as value,
           coalesce(sum(yes_cost + no_cost) filter (where open), 0) as cost,
           coalesce(string_agg(json, ',' order by market_id) filter (where open), '') as positions
    from (
      select marked.*, case when open then ${POSITION_JSON} end as json
      from (
        select held.*, held.yes_balance > 0 or held.no_balance > 0 as open,
               case when settled then null else yes_price end as mark_price,
               case when not settled then div(yes_balance * yes_price, ${SCALE}) + div(no_balance * (${SCALE} - yes_price), ${SCALE})
                    when outcome then yes_balance else no_balance end as value
        from (
          select p.market_id, p.yes_balance, p.no_balance, p.yes_cost, p.no_cost, p.realized_pnl,
                 m.question, m.outcome, m.yes_price, m.is_resolved and m.outcome is not null as settled,
                 ${marketStatusSql("m")} as status
          from position p join market m on m.id = p.market_id
          where p.user_address = $1
        ) held
      ) marked
    ) listed
  )
  select ${PORTFOLIO_JSON} as data from totals`)

/** A portfolio answer that came back null (a column the answer needs was null, against the migrations): a defect, answered 500. */
export class PortfolioJsonError extends Error {
  constructor(address: Address) {
    super(`the portfolio of ${address} came back null: a column its rows need is null`)
    this.name = "PortfolioJsonError"
  }
}

/** The JSON text of the portfolio answer's `data` for `address` (lowercase, as `parseAddress` gives it). */
export const readPortfolioJson = (address: Address) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<{ data: string | null }>(PORTFOLIO_SQL, [address])).pipe(
    Effect.flatMap((rows) => {
      const data = rows[0]?.data
      return typeof data === "string" ? Effect.succeed(data) : Effect.die(new PortfolioJsonError(address))
    }),
    read
  )
