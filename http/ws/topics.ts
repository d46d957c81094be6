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
 * - `user-trades`: the subject's latest `window` history entries (REST /api/trading/:address/trades:
 *   every share move of its positions, http/read/user-trades.ts), keyed as `trades`; `user-orders`: its latest `window` orders by orderId (/orders); `user-positions`:
 *   its open positions by marketId (the portfolio's positions); `user-portfolio`: one entry,
 *   `portfolio`, the whole REST portfolio.
 */
import { SqlClient } from "@effect/sql"
import { Data, Effect, Either, ParseResult, Schema } from "effect"
import { BackendPricePoint, BackendTrade, BackendUserTrade, OrderBook } from "../../schema/backend-activity.js"
import { BackendOrder, BackendPortfolio, BackendPosition } from "../../schema/backend-trading.js"
import type { Address } from "../../schema/primitives.js"
import {
  toBackendBook,
  toBackendPricePoint,
  toBackendTrade,
  toBackendUserTrade,
  toOrder,
  toPosition,
  totals
} from "../backend/trading/convert.js"
import { listUserTrades } from "../read/user-trades.js"
import { listOrders } from "../read/exchange.js"
import { readPortfolio } from "../read/portfolio.js"
import type { IndexedHead } from "../core/indexed-heads.js"
import { readCheckpoint } from "../../schema/io/indexer-checkpoint.js"
import { listRows } from "../core/db.js"
import { orderBookOf } from "../read/market-book.js"
import { pricesQuery } from "../read/market-prices.js"
import { marketTradesQuery } from "../read/market-trades.js"
import { requireMarket } from "../read/markets.js"

export const MARKET_TOPICS = ["orderbook", "prices", "trades"] as const
export const USER_TOPICS = ["user-trades", "user-orders", "user-positions", "user-portfolio"] as const
export type MarketTopic = (typeof MARKET_TOPICS)[number]
export type UserTopic = (typeof USER_TOPICS)[number]
export type Topic = MarketTopic | UserTopic

/** What a feed follows: a market (market topics) or an address (user topics). */
export type Target = { readonly marketId: bigint; readonly marketHex: string } | { readonly subject: Address }

/** The target as messages name it: `{marketId: "0x…"}` or `{subject: "0x…"}`. */
export const targetFields = (target: Target) => ("subject" in target ? { subject: target.subject } : { marketId: target.marketHex })

/** Entries in the order a client lists them; values are encoded JSON (what REST sends). */
export type Entries = ReadonlyArray<readonly [key: string, value: unknown]>

/**
 * A record a read produced that its wire schema refuses: a server bug (the read model and the
 * schema disagree), not a passing outage, so it is a typed failure naming the topic, the entry's
 * key and the schema's complaint. REST fails on the same record; the stream answers the subscriber
 * with an error saying so and logs it, and a refresh that meets it logs it and keeps running (a
 * defect thrown from `encodeSync` here once ended the loop that refreshes every feed).
 */
export class RecordEncodeError extends Data.TaggedError("RecordEncodeError")<{
  readonly topic: Topic
  readonly key: string
  readonly issue: string
}> {
  override get message() {
    return `the ${this.topic} entry ${this.key} does not fit its schema: ${this.issue}`
  }
}

/** Encodes each (key, record) with `schema`; the first record it refuses fails with `RecordEncodeError`. */
const encoder = <A, I>(topic: Topic, schema: Schema.Schema<A, I>) => {
  const encode = Schema.encodeEither(schema)
  return (records: ReadonlyArray<readonly [string, A]>): Effect.Effect<Entries, RecordEncodeError> =>
    Effect.suspend(() => {
      const entries: Array<readonly [string, unknown]> = []
      for (const [key, record] of records) {
        const encoded = encode(record)
        if (Either.isLeft(encoded))
          return Effect.fail(new RecordEncodeError({ topic, key, issue: ParseResult.TreeFormatter.formatErrorSync(encoded.left) }))
        entries.push([key, encoded.right])
      }
      return Effect.succeed(entries)
    })
}

const encodeOrders = encoder("user-orders", BackendOrder)
const encodePositions = encoder("user-positions", BackendPosition)
const encodePortfolio = encoder("user-portfolio", BackendPortfolio)
const encodeBook = encoder("orderbook", OrderBook)
const encodeTrades = encoder("trades", BackendTrade)
const encodeUserTrades = encoder("user-trades", BackendUserTrade)
const encodePoints = encoder("prices", BackendPricePoint)

// The market's entries, without the existence check each REST read makes (`readTopics` makes it
// once for all of a market's topics) and without the total a REST page counts.
const bookEntries = (marketId: bigint) =>
  Effect.flatMap(orderBookOf(marketId), (record) =>
    Effect.map(encodeBook([["book", toBackendBook(record)]]), (encoded) => {
      const book = encoded[0]![1] as typeof OrderBook.Encoded
      const entries: Array<readonly [string, unknown]> = []
      for (const outcome of ["yes", "no"] as const)
        for (const side of ["bids", "asks"] as const)
          for (const level of book[outcome][side]) entries.push([`${outcome}:${side}:${level.price}`, level])
      return entries
    })
  )

const tradeEntries = (marketId: bigint, window: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(listRows(marketTradesQuery(sql, marketId, {}), { limit: window, offset: 0 }), (trades) =>
      encodeTrades(trades.map((trade) => [`${trade.txHash}:${trade.logIndex}:${trade.source}`, toBackendTrade(trade)] as const))
    )
  )

/** The last `window` points of the REST list (oldest first): the newest `window`, reversed. */
const priceEntries = (marketId: bigint, window: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(listRows(pricesQuery(sql, marketId, {}, true), { limit: window, offset: 0 }), (points) =>
      encodePoints(
        [...points]
          .reverse()
          .map((point) => [`${point.blockNumber}:${point.logIndex}:${point.source}`, toBackendPricePoint(point)] as const)
      )
    )
  )

const userTradeEntries = (address: Address, window: number) =>
  Effect.flatMap(listUserTrades(address, { limit: window, offset: 0 }), (page) =>
    encodeUserTrades(page.rows.map((trade) => [`${trade.txHash}:${trade.logIndex}:${trade.source}`, toBackendUserTrade(trade)] as const))
  )

const userOrderEntries = (owner: Address, window: number) =>
  Effect.flatMap(listOrders({ owner, limit: window, offset: 0 }), (answer) =>
    encodeOrders(answer.data.map((order) => [order.orderId, toOrder(order)] as const))
  )

const portfolioEntries = (address: Address, topic: "user-positions" | "user-portfolio") =>
  Effect.flatMap(readPortfolio(address), ({ data: p }) =>
    topic === "user-positions"
      ? encodePositions(
          p.positions.map((position) => {
            const record = toPosition(position)
            return [record.marketId, record] as const
          })
        )
      : encodePortfolio([["portfolio", { address, openPositions: p.openPositions, ...totals(p), positions: p.positions.map(toPosition) }]])
  )

const marketEntries = (topic: MarketTopic, marketId: bigint, window: number) =>
  topic === "orderbook" ? bookEntries(marketId) : topic === "trades" ? tradeEntries(marketId, window) : priceEntries(marketId, window)

const userEntries = (topic: UserTopic, subject: Address, window: number): Effect.Effect<Entries, unknown, SqlClient.SqlClient> => {
  if (topic === "user-trades") return userTradeEntries(subject, window)
  if (topic === "user-orders") return userOrderEntries(subject, window)
  return portfolioEntries(subject, topic)
}

export const isMarketNotFound = (error: unknown) =>
  typeof error === "object" && error !== null && "_tag" in error && error._tag === "MarketNotFound"

/**
 * The entries of several topics of one target, the head they hold and the commit position of that
 * state, read in one repeatable-read transaction so the position named is exactly the one the rows
 * reflect (a commit landing mid-read is not half seen): two instances that read the same `commit`
 * read the same entries. `entries[i]` are `topics[i]`'s. `commit` is 0 before the indexer's first
 * commit. One transaction for all of a target's topics: the feeds of a market that a commit moves
 * are read at one position, with one checkpoint read.
 * `missingIsEmpty`: a market that is gone (a reorg dropped its creation) has no entries, so a
 * feed that follows it sends their removal rather than keeping what is no longer indexed.
 */
export const readTopics = (chainId: number, topics: ReadonlyArray<Topic>, target: Target, window: number, missingIsEmpty = false) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(
      Effect.gen(function* () {
        yield* sql`set transaction isolation level repeatable read`
        const checkpoint = yield* readCheckpoint(chainId)
        const head: IndexedHead | null = checkpoint === undefined ? null : { block: checkpoint.block, hash: checkpoint.hash }
        // One after another: the statements of a transaction share its one connection.
        let entries: ReadonlyArray<Entries>
        if ("subject" in target) entries = yield* Effect.forEach(topics, (topic) => userEntries(topic as UserTopic, target.subject, window))
        else {
          // The market is checked once for all its topics (the REST reads check it each).
          const exists = yield* requireMarket(target.marketId).pipe(
            Effect.as(true),
            Effect.catchIf(
              (error) => missingIsEmpty && isMarketNotFound(error),
              () => Effect.succeed(false)
            )
          )
          entries = exists
            ? yield* Effect.forEach(topics, (topic) => marketEntries(topic as MarketTopic, target.marketId, window))
            : topics.map(() => [])
        }
        return { head, commit: checkpoint?.commit ?? 0, entries }
      })
    )
  )

/** One topic's entries, head and commit position (`readTopics` of one topic). */
export const readTopic = (chainId: number, topic: Topic, target: Target, window: number, missingIsEmpty = false) =>
  Effect.map(readTopics(chainId, [topic], target, window, missingIsEmpty), ({ head, commit, entries }) => ({
    head,
    commit,
    entries: entries[0]!
  }))
