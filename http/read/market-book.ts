/** Reads of `order_book_level` and `position` for a market (see `market-book.ts`). */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Address } from "../../schema/primitives.js"
import { listPage, read } from "../core/db.js"
import { requireMarket } from "./markets.js"
import { positionsSource } from "./positions.js"
import { bigint, int, rowDecoder, text, type RowOf } from "../core/rows.js"

/** The records of these reads (decoded rows: bigint amounts, lowercase addresses and hashes). */
export interface OrderBookRecord {
  readonly marketId: bigint
  readonly yes: {
    readonly bids: readonly { readonly price: bigint; readonly tick: number; readonly amount: bigint; readonly orders: number }[]
    readonly asks: readonly { readonly price: bigint; readonly tick: number; readonly amount: bigint; readonly orders: number }[]
  }
  readonly no: {
    readonly bids: readonly { readonly price: bigint; readonly tick: number; readonly amount: bigint; readonly orders: number }[]
    readonly asks: readonly { readonly price: bigint; readonly tick: number; readonly amount: bigint; readonly orders: number }[]
  }
  readonly bestBidYes: bigint | null
  readonly bestAskYes: bigint | null
  readonly bestBidNo: bigint | null
  readonly bestAskNo: bigint | null
}

export interface PositionRecord {
  readonly marketId: bigint
  readonly user: Address
  readonly yesBalance: bigint
  readonly noBalance: bigint
  readonly yesCost: bigint
  readonly noCost: bigint
  readonly realizedPnl: bigint
}

export interface PositionParams {
  readonly address?: Address
  readonly limit: number
  readonly offset: number
}

/** One price tick is 0.01 USDC (10_000 in the 1e6 price scale); book prices are multiples of it. */
const PRICE_TICK = 10_000n

type Level = OrderBookRecord["yes"]["bids"][number]

const decodeLevelRow = rowDecoder({ side: int, price: bigint, amount: bigint, orders: int })

/** The order book of a market (empty for a market that does not exist: `readOrderBook` checks that first). */
export const orderBookOf = (marketId: bigint) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // Sides: 0 BUY_YES (yes bids), 1 SELL_YES (yes asks), 2 BUY_NO (no bids), 3 SELL_NO (no asks).
    const rows = yield* sql`
      select side, price, amount, orders from order_book_level where market_id = ${marketId.toString()}::numeric
      order by side, case when side in (0, 2) then -price else price end`
    const sides: [Array<Level>, Array<Level>, Array<Level>, Array<Level>] = [[], [], [], []]
    for (const raw of rows) {
      const row = decodeLevelRow(raw)
      sides[row.side]?.push({ price: row.price, tick: Number(row.price / PRICE_TICK), amount: row.amount, orders: row.orders })
    }
    const [yesBids, yesAsks, noBids, noAsks] = sides
    const book: OrderBookRecord = {
      marketId,
      yes: { bids: yesBids, asks: yesAsks },
      no: { bids: noBids, asks: noAsks },
      bestBidYes: yesBids[0]?.price ?? null,
      bestAskYes: yesAsks[0]?.price ?? null,
      bestBidNo: noBids[0]?.price ?? null,
      bestAskNo: noAsks[0]?.price ?? null
    }
    return book
  })

export const readOrderBook = (marketId: bigint) =>
  Effect.gen(function* () {
    yield* requireMarket(marketId)
    return { data: yield* orderBookOf(marketId), meta: null }
  }).pipe(read)

/** The columns of `positionsSource`, for a `rowDecoder`. */
export const positionColumns = {
  user_address: text<Address>(),
  market_id: bigint,
  yes_balance: bigint,
  no_balance: bigint,
  yes_cost: bigint,
  no_cost: bigint,
  realized_pnl: bigint
}
export type PositionRow = RowOf<typeof positionColumns>
const decodePositionRow = rowDecoder(positionColumns)

export const toPosition = (row: PositionRow): PositionRecord => ({
  marketId: row.market_id,
  user: row.user_address,
  yesBalance: row.yes_balance,
  noBalance: row.no_balance,
  yesCost: row.yes_cost,
  noCost: row.no_cost,
  realizedPnl: row.realized_pnl
})

export const listMarketPositions = (marketId: bigint, query: PositionParams) =>
  Effect.gen(function* () {
    yield* requireMarket(marketId)
    const sql = yield* SqlClient.SqlClient
    const source = positionsSource(sql, query.address === undefined ? { marketId } : { marketId, user: query.address })
    return yield* listPage(
      {
        select: "s.*",
        from: sql`${source} s`,
        orderBy: "s.yes_balance + s.no_balance desc, s.user_address",
        record: (row) => toPosition(decodePositionRow(row))
      },
      query
    )
  }).pipe(read)
