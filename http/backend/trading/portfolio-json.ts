/**
 * The portfolio answer (`GET /api/trading/:address/portfolio`): the JSON text of the answer's
 * `data`, byte for byte what `JSON.stringify(Schema.encodeSync(BackendPortfolio)(...))` makes of
 * the read model's portfolio (`readPortfolio` in `http/read/portfolio.ts`, mapped by `toPosition`
 * and `totals`): test/http/backend/portfolio-json.test.ts compares the two over every holder of the
 * fixture and rows made to reach every branch.
 *
 * Why: a heavy trader holds hundreds of positions, and the page every signed-in user opens was
 * the backend's most expensive uncached request (issue 30). Postgres marks and sums the positions
 * (the rules below, on the rows it reads anyway) and sends each open position as one compact line
 * of text; the process writes the JSON from those texts with no arithmetic and no parsing of
 * amounts. (Postgres wrote the whole JSON before: its NUMERIC scaling and text concatenation cost
 * more of its CPU than the templates here cost the process, on the 1M-event database about 2.5 ms
 * against 0.3 ms per 230-position answer.)
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
 *
 * Why the texts hold: every amount is an integer NUMERIC of scale 0 (NUMERIC(78,0) columns, their
 * sums, differences and `div`), whose text output is plain digits with a leading "-" when negative,
 * as `bigint.toString()` writes it (`formatUnitsText` formats it as `formatUnits` would); the
 * question is written by `to_json(text)`, which escapes `"`, `\`, \b \f \n \r \t and other
 * characters below U+0020 as \u00xx (lowercase hex), as `JSON.stringify` does (Postgres text holds
 * no NUL and no lone surrogate, the only strings the two would write differently). A line is its
 * fields joined by "|", the question last (so a "|" in it needs no escaping), and lines are joined
 * by a newline, which no field holds (`to_json` escapes it).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { marketIdToHex, PRICE_SCALE, type Address } from "../../../schema/primitives.js"
import { marketStatusSql } from "../../../schema/market-status.js"
import { read } from "../../core/db.js"
import { prepared } from "../../core/prepared.js"
import { money6TextJson, units6Text } from "../json-text.js"

const SCALE = PRICE_SCALE.toString()

/** The fields of a position's line, in order; the question (JSON text) follows the last. */
const LINE_FIELDS = 11

/**
 * Every position row of `$1` with its market (`held`: the market by its key, a nested loop of
 * index probes, where a plain join had Postgres hash the whole market table per request), marked
 * (`marked`: open, mark price and value), the open ones written as lines (`listed`), folded in one
 * pass into the totals and the lines (`totals`). Every column written is NOT NULL (migrations 0002
 * and 0011: the YES price since 0011) except the outcome and the mark price, written as "" when
 * null (`concat_ws` would leave a null out). A prepared statement: its text is long and the same on
 * every request, so each connection parses and plans it once.
 */
export const PORTFOLIO_SQL = prepared(`
  with totals as (
    select coalesce(sum(realized_pnl), 0) as realized_pnl,
           count(*) filter (where open) as open_positions,
           coalesce(sum(value) filter (where open), 0) as value,
           coalesce(sum(yes_cost + no_cost) filter (where open), 0) as cost,
           coalesce(string_agg(line, E'\\n' order by market_id) filter (where open), '') as positions
    from (
      select marked.*,
             case when open then concat_ws('|', market_id, yes_balance, no_balance, yes_cost, no_cost, realized_pnl, value,
               value - yes_cost - no_cost, status, case when outcome then 'YES' when not outcome then 'NO' else '' end,
               coalesce(mark_price::text, ''), to_json(question)) end as line
      from (
        select held.*, held.yes_balance > 0 or held.no_balance > 0 as open,
               case when settled then null else yes_price end as mark_price,
               case when not settled then div(yes_balance * yes_price, ${SCALE}) + div(no_balance * (${SCALE} - yes_price), ${SCALE})
                    when outcome then yes_balance else no_balance end as value
        from (
          select p.market_id, p.yes_balance, p.no_balance, p.yes_cost, p.no_cost, p.realized_pnl,
                 m.question, m.outcome, m.yes_price, m.is_resolved and m.outcome is not null as settled,
                 ${marketStatusSql("m")} as status
          from position p cross join lateral (select * from market m where m.id = p.market_id limit 1) m
          where p.user_address = $1
        ) held
      ) marked
    ) listed
  )
  select open_positions::text, value::text, cost::text, (value - cost)::text as unrealized_pnl, realized_pnl::text,
         (realized_pnl + value - cost)::text as total_pnl, positions
  from totals`)

interface TotalsRow {
  readonly open_positions: string
  readonly value: string
  readonly cost: string
  readonly unrealized_pnl: string
  readonly realized_pnl: string
  readonly total_pnl: string
  readonly positions: string
}

const usdc = (raw: string) => money6TextJson(raw, "USDC")

/**
 * The open positions' JSON (the array's items, joined by ","), from their lines (see the module's
 * comment for the format): one cursor over the whole text, each line's fields taken where they
 * stand, and the amounts written by `money6TextJson` (about 2,000 per heavy answer, the largest
 * share of this process's work on it after the socket's).
 */
const positionsJson = (text: string): string => {
  if (text === "") return ""
  const fields = new Array<string>(LINE_FIELDS)
  // Joined at the end rather than appended to one string: `join` makes one flat string, where
  // appending builds a rope of thousands of pieces, which cost the process about 3 ms more CPU per
  // heavy portfolio end to end (7.6 against 4.3-4.4 ms) though the writer alone looked faster.
  const items: Array<string> = []
  let at = 0
  for (;;) {
    // The line ends at the next newline: no field holds one, the question included (`to_json`).
    const newline = text.indexOf("\n", at)
    const end = newline < 0 ? text.length : newline
    for (let i = 0; i < LINE_FIELDS; i++) {
      const bar = text.indexOf("|", at)
      // A field left out (a null where the migrations forbid one): a defect, never a wrong answer.
      if (bar < 0 || bar > end) throw new PortfolioJsonError(`a position line has ${i} fields before the question, not ${LINE_FIELDS}`)
      fields[i] = text.slice(at, bar)
      at = bar + 1
    }
    const [id, yesBalance, noBalance, yesCost, noCost, realizedPnl, value, unrealizedPnl, status, outcome, markPrice] = fields as [
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string
    ]
    items.push(
      `{"marketId":"${marketIdToHex(BigInt(id))}","question":${text.slice(at, end)},` +
        `"marketStatus":"${status}","outcome":${outcome === "" ? "null" : `"${outcome}"`},"yesBalance":${money6TextJson(yesBalance, "YES")},` +
        `"noBalance":${money6TextJson(noBalance, "NO")},"yesCost":${usdc(yesCost)},"noCost":${usdc(noCost)},` +
        `"markPrice":${markPrice === "" ? "null" : `"${units6Text(markPrice)}"`},"value":${usdc(value)},` +
        `"unrealizedPnl":${usdc(unrealizedPnl)},"realizedPnl":${usdc(realizedPnl)}}`
    )
    if (newline < 0) return items.join(",")
    at = newline + 1
  }
}

/** The answer's JSON, from the totals row. */
const portfolioJson = (address: Address, row: TotalsRow): string =>
  `{"address":${JSON.stringify(address)},"openPositions":${row.open_positions},"value":${usdc(row.value)},"cost":${usdc(row.cost)},` +
  `"unrealizedPnl":${usdc(row.unrealized_pnl)},"realizedPnl":${usdc(row.realized_pnl)},"totalPnl":${usdc(row.total_pnl)},` +
  `"positions":[${positionsJson(row.positions)}]}`

/** A portfolio statement whose texts are not as written (a null against the migrations): a defect, answered 500. */
export class PortfolioJsonError extends Error {
  constructor(problem: string) {
    super(`the portfolio statement's answer is malformed: ${problem}`)
    this.name = "PortfolioJsonError"
  }
}

/** The JSON text of the portfolio answer's `data` for `address` (lowercase, as `parseAddress` gives it). */
export const readPortfolioJson = (address: Address) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<TotalsRow>(PORTFOLIO_SQL, [address])).pipe(
    // A throw here (PortfolioJsonError) is a defect: logged and answered 500.
    Effect.flatMap((rows) =>
      Effect.sync(() => {
        const row = rows[0]
        if (row === undefined || !Object.values(row).every((value) => typeof value === "string"))
          throw new PortfolioJsonError("a total came back null")
        return portfolioJson(address, row)
      })
    ),
    read
  )
