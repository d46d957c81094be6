/**
 * What each topic streams, as a keyed state: a map from a stable key to the JSON the REST answer
 * carries for that entry. A client holds the same map; a delta is the set of entries that
 * changed (upsert) or left (remove) between two committed heads, so snapshot + deltas equals
 * the REST answer at the delta's block, reorgs included.
 *
 * - `orderbook`: one entry per price level, key `<yes|no>:<bids|asks>:<price>`; the REST
 *   order book is the levels of each side sorted best first.
 * - `trades`: the market's latest `window` trades, key `<txHash>:<logIndex>:<source>`; the
 *   REST list `?limit=<window>` (newest first). A trade a reorg removed leaves with a
 *   `reorg: true` delta; a trade pushed out of the window by newer ones leaves as well.
 * - `prices`: the latest `window` price snapshots, key `<blockNumber>:<logIndex>:<source>`; the
 *   REST list's last `window` points (oldest first).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { BackendPricePoint, BackendTrade, OrderBook } from "../../schema/backend-activity.js"
import { toBackendBook, toBackendPricePoint, toBackendTrade } from "../backend/convert.js"
import { readCheckpoint, type IndexedHead } from "../indexer/freshness.js"
import { readOrderBook } from "../indexer/queries/market-book.js"
import { listPrices } from "../indexer/queries/market-prices.js"
import { listMarketTrades } from "../indexer/queries/market-trades.js"

export const MARKET_TOPICS = ["orderbook", "prices", "trades"] as const
export const USER_TOPICS = ["user-trades", "user-orders", "user-positions", "user-portfolio"] as const
export type MarketTopic = (typeof MARKET_TOPICS)[number]
export type UserTopic = (typeof USER_TOPICS)[number]

/** Entries in the order a client lists them; values are encoded JSON (what REST sends). */
export type Entries = ReadonlyArray<readonly [key: string, value: unknown]>

const encodeBook = Schema.encodeSync(OrderBook)
const encodeTrade = Schema.encodeSync(BackendTrade)
const encodePoint = Schema.encodeSync(BackendPricePoint)

const bookEntries = (marketId: bigint) =>
  Effect.map(readOrderBook(marketId), (answer) => {
    const book = encodeBook(toBackendBook(answer.data))
    const entries: Array<readonly [string, unknown]> = []
    for (const outcome of ["yes", "no"] as const)
      for (const side of ["bids", "asks"] as const) for (const level of book[outcome][side]) entries.push([`${outcome}:${side}:${level.price}`, level])
    return entries
  })

const tradeEntries = (marketId: bigint, window: number) =>
  Effect.map(listMarketTrades(marketId, { limit: window, offset: 0 }), (answer) =>
    answer.data.map((trade) => [`${trade.txHash}:${trade.logIndex}:${trade.source}`, encodeTrade(toBackendTrade(trade))] as const)
  )

const priceEntries = (marketId: bigint, window: number) =>
  Effect.gen(function* () {
    const { meta } = yield* listPrices(marketId, { limit: 1, offset: 0 })
    const answer = yield* listPrices(marketId, { limit: window, offset: Math.max(0, meta.count - window) })
    return answer.data.map((point) => [`${point.blockNumber}:${point.logIndex}:${point.source}`, encodePoint(toBackendPricePoint(point))] as const)
  })

const marketEntries = (topic: MarketTopic, marketId: bigint, window: number) =>
  topic === "orderbook" ? bookEntries(marketId) : topic === "trades" ? tradeEntries(marketId, window) : priceEntries(marketId, window)

/**
 * A topic's entries and the head they hold, read in one repeatable-read transaction so the
 * block named is exactly the one the rows reflect (a commit landing mid-read is not half seen).
 */
export const readMarketTopic = (chainId: number, topic: MarketTopic, marketId: bigint, window: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(
      Effect.gen(function* () {
        yield* sql`set transaction isolation level repeatable read`
        const head: IndexedHead | null = yield* readCheckpoint(chainId)
        const entries = yield* marketEntries(topic, marketId, window)
        return { head, entries }
      })
    )
  )
