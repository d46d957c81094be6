/**
 * The current holdings of a market: its order book (`/orderbook`, live orders grouped by price
 * tick) and its per-user positions (`/positions`).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { IndexerItem, IndexerList } from "../../schema/envelopes.js"
import { IndexerInvalidAddress, IndexerInvalidMarketId, IndexerMarketNotFound } from "../../schema/errors.js"
import { Address, Amount6, Price, SignedAmount6, Uint256 } from "../../schema/primitives.js"
import { addressParam, MarketPath, NoQuery, optional, page, strictQuery } from "../core/params.js"
import { Count } from "./records.js"

export const BookLevel = Schema.Struct({
  price: Price.annotations({ description: "limit price of the level (USDC per share of the side's token)" }),
  tick: Schema.Int.annotations({ description: "price in ticks of 0.01 (1 to 99)" }),
  amount: Amount6.annotations({ description: "shares still open at this price (amount - filled of the live orders)" }),
  orders: Count.annotations({ description: "live orders at this price" })
}).annotations({ identifier: "BookLevel", title: "Book level", description: "open orders at one price" })

const BookSide = Schema.Struct({
  bids: Schema.Array(BookLevel).annotations({ description: "BUY orders, best (highest) price first" }),
  asks: Schema.Array(BookLevel).annotations({ description: "SELL orders, best (lowest) price first" })
})

export const OrderBook = Schema.Struct({
  marketId: Uint256,
  yes: BookSide.annotations({ description: "BUY_YES bids and SELL_YES asks" }),
  no: BookSide.annotations({ description: "BUY_NO bids and SELL_NO asks" }),
  bestBidYes: Schema.NullOr(Price),
  bestAskYes: Schema.NullOr(Price),
  bestBidNo: Schema.NullOr(Price),
  bestAskNo: Schema.NullOr(Price)
}).annotations({ identifier: "OrderBook", title: "Order book", description: "the current CLOB book of a market, grouped by price tick" })
export type OrderBook = typeof OrderBook.Type

export const Position = Schema.Struct({
  marketId: Uint256,
  user: Address,
  yesBalance: Amount6.annotations({ description: "YES shares held, including those locked in the owner's live SELL orders" }),
  noBalance: Amount6.annotations({ description: "NO shares held, including those locked in the owner's live SELL orders" }),
  yesCost: Amount6.annotations({
    description: "USDC paid for the YES held (average cost): router buys, CLOB buy fills, splits at the market price; transfers in at 0"
  }),
  noCost: Amount6.annotations({ description: "USDC paid for the NO held (average cost), as yesCost" }),
  realizedPnl: SignedAmount6.annotations({
    description:
      "proceeds minus average cost of every share that left: router sells, CLOB sell fills, merges, redemptions, refunds, transfers out (proceeds 0)"
  })
}).annotations({
  identifier: "Position",
  title: "Position",
  description: "an address's position in a market, following every way shares move (docs/positions.md); protocol contracts have none"
})
export type Position = typeof Position.Type

export const PositionQuery = strictQuery({
  address: optional(addressParam("address", "only this user's position")),
  ...page
})
export type PositionQuery = typeof PositionQuery.Type

export class MarketBookGroup extends HttpApiGroup.make("marketBook")
  .add(
    HttpApiEndpoint.get("orderbook", "/api/markets/:id/orderbook")
      .setPath(MarketPath)
      .setUrlParams(NoQuery)
      .addSuccess(IndexerItem(OrderBook))
      .addError(IndexerMarketNotFound.wire)
      .addError(IndexerInvalidMarketId.wire)
      .annotate(OpenApi.Summary, "Current order book snapshot grouped by price tick")
  )
  .add(
    HttpApiEndpoint.get("positions", "/api/markets/:id/positions")
      .setPath(MarketPath)
      .setUrlParams(PositionQuery)
      .addSuccess(IndexerList(Position))
      .addError(IndexerMarketNotFound.wire)
      .addError(IndexerInvalidMarketId.wire)
      .addError(IndexerInvalidAddress.wire)
      .annotate(
        OpenApi.Summary,
        "Every address holding the market's tokens or with a position row, largest holdings (YES + NO) first, then by address"
      )
  ) {}
