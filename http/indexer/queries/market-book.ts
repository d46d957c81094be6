/** Reads of `order_book_level` and `position` for a market (see `market-book.ts`). */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Address } from "../../../schema/primitives.js"
import type { OrderBook, Position, PositionQuery } from "../market-book.js"
import { pageOf, read } from "./db.js"
import { requireMarket } from "./markets.js"
import { positionsSource } from "./positions.js"

/** One price tick is 0.01 USDC (10_000 in the 1e6 price scale); book prices are multiples of it. */
const PRICE_TICK = 10_000n

type Level = OrderBook["yes"]["bids"][number]

export const readOrderBook = (marketId: bigint) =>
  Effect.gen(function* () {
    yield* requireMarket(marketId)
    const sql = yield* SqlClient.SqlClient
    // Sides: 0 BUY_YES (yes bids), 1 SELL_YES (yes asks), 2 BUY_NO (no bids), 3 SELL_NO (no asks).
    const rows = yield* sql<{ side: number; price: string; amount: string; orders: string }>`
      select side, price, amount, orders from order_book_level where market_id = ${marketId.toString()}::numeric
      order by side, case when side in (0, 2) then -price else price end`
    const sides: [Array<Level>, Array<Level>, Array<Level>, Array<Level>] = [[], [], [], []]
    for (const row of rows) {
      const price = BigInt(row.price)
      sides[row.side]?.push({ price, tick: Number(price / PRICE_TICK), amount: BigInt(row.amount), orders: Number(row.orders) })
    }
    const [yesBids, yesAsks, noBids, noAsks] = sides
    const book: OrderBook = {
      marketId,
      yes: { bids: yesBids, asks: yesAsks },
      no: { bids: noBids, asks: noAsks },
      bestBidYes: yesBids[0]?.price ?? null,
      bestAskYes: yesAsks[0]?.price ?? null,
      bestBidNo: noBids[0]?.price ?? null,
      bestAskNo: noAsks[0]?.price ?? null
    }
    return { data: book, meta: null }
  }).pipe(read)

export interface PositionRow {
  readonly user_address: string
  readonly market_id: string
  readonly yes_balance: string
  readonly no_balance: string
  readonly yes_cost: string
  readonly no_cost: string
  readonly realized_pnl: string
}

export const toPosition = (row: PositionRow): Position => ({
  marketId: BigInt(row.market_id),
  user: row.user_address as Address,
  yesBalance: BigInt(row.yes_balance),
  noBalance: BigInt(row.no_balance),
  yesCost: BigInt(row.yes_cost),
  noCost: BigInt(row.no_cost),
  realizedPnl: BigInt(row.realized_pnl)
})

export const listMarketPositions = (marketId: bigint, query: PositionQuery) =>
  Effect.gen(function* () {
    yield* requireMarket(marketId)
    const sql = yield* SqlClient.SqlClient
    const source = positionsSource(sql, query.address === undefined ? { marketId } : { marketId, user: query.address })
    const page = yield* pageOf(
      sql<PositionRow & { total_count: string }>`
        select s.*, count(*) over () as total_count from ${source} s
        order by s.yes_balance + s.no_balance desc, s.user_address limit ${query.limit} offset ${query.offset}`,
      sql<{ count: string }>`select count(*) as count from ${source} s`,
      query.offset
    )
    return { data: page.rows.map(toPosition), meta: { limit: query.limit, offset: query.offset, count: page.count } }
  }).pipe(read)
