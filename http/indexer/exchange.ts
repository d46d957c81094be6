/**
 * The exchange (CLOB): orders with their derived status (`/api/exchange/orders[/{orderId}]`) and
 * match records (`/api/exchange/matches`; a user's maker fills are the matches naming them maker).
 *
 * Status is derived (the contract keeps none): CANCELLED once cancelled; FILLED when filled ==
 * amount; PARTIALLY_FILLED when 0 < filled < amount; OPEN otherwise.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { IndexerItem, IndexerList } from "../../schema/envelopes.js"
import { IndexerInvalidAddress, IndexerInvalidMarketId, OrderNotFound } from "../../schema/errors.js"
import { MatchType, OrderStatus, Side } from "../../schema/enums.js"
import { Address, Amount6, BlockNumber, Bytes32, Price, Timestamp, TxHash, Uint256 } from "../../schema/primitives.js"
import { addressParam, bytes32Param, literalParam, marketIdParam, NoQuery, optional, page, strictQuery } from "../core/params.js"
import { chainPositionFields } from "./records.js"
import { ORDER_STATUSES } from "../read/exchange.js"

export { ORDER_STATUSES }

export const Order = Schema.Struct({
  orderId: Bytes32,
  marketId: Uint256,
  owner: Address,
  side: Side.Name,
  price: Price.annotations({ description: "limit price, USDC per share of the side's token" }),
  amount: Amount6.annotations({ description: "shares ordered" }),
  filled: Amount6,
  remaining: Amount6.annotations({ description: "amount - filled while the order is live; 0 once filled or cancelled" }),
  status: OrderStatus,
  builder: Schema.NullOr(Bytes32),
  placedAt: Timestamp,
  placedBlock: BlockNumber,
  placedTx: TxHash,
  updatedAt: Timestamp,
  filledAt: Schema.NullOr(Timestamp),
  cancelledAt: Schema.NullOr(Timestamp)
}).annotations({ identifier: "Order", title: "Order", description: "a CLOB limit order" })
export type Order = typeof Order.Type

export const Match = Schema.Struct({
  ...chainPositionFields,
  marketId: Uint256,
  makerOrderId: Bytes32,
  takerOrderId: Bytes32.annotations({ description: "0x00…00 for market orders (the router's taker path)" }),
  maker: Schema.NullOr(Address).annotations({ description: "owner of the maker order; null if that order was never seen placed" }),
  makerSide: Schema.NullOr(Side.Name),
  taker: Schema.NullOr(Address).annotations({ description: "owner of the taker order; null for market orders" }),
  matchType: MatchType.Name,
  amount: Amount6.annotations({ description: "shares matched" }),
  price: Price.annotations({ description: "the maker's price on the maker's own side" }),
  makerBuilder: Schema.NullOr(Bytes32),
  takerBuilder: Schema.NullOr(Bytes32)
}).annotations({ identifier: "Match", title: "Match", description: "an OrderMatched record" })
export type Match = typeof Match.Type

export const OrderListQuery = strictQuery({
  marketId: optional(marketIdParam("marketId", "only orders of this market")),
  owner: optional(addressParam("owner", "only orders of this owner")),
  status: optional(literalParam("status", ORDER_STATUSES, "only orders in this derived status")),
  side: optional(literalParam("side", Side.names, "only orders on this side")),
  ...page
})
export type OrderListQuery = typeof OrderListQuery.Type

export const MatchListQuery = strictQuery({
  marketId: optional(marketIdParam("marketId", "only matches of this market")),
  maker: optional(addressParam("maker", "only matches whose maker order this address owns")),
  taker: optional(addressParam("taker", "only matches whose taker order this address owns")),
  orderId: optional(bytes32Param("orderId", "only matches of this order, as maker or taker")),
  matchType: optional(literalParam("matchType", MatchType.names, "only matches of this type")),
  ...page
})
export type MatchListQuery = typeof MatchListQuery.Type

export const OrderPath = Schema.Struct({ orderId: bytes32Param("orderId", "order id") })

export class ExchangeGroup extends HttpApiGroup.make("exchange")
  .add(
    HttpApiEndpoint.get("orders", "/api/exchange/orders")
      .setUrlParams(OrderListQuery)
      .addSuccess(IndexerList(Order))
      .addError(IndexerInvalidMarketId.wire)
      .addError(IndexerInvalidAddress.wire)
      .annotate(OpenApi.Summary, "Orders, newest placed first (placed block descending, then order id)")
  )
  .add(
    HttpApiEndpoint.get("order", "/api/exchange/orders/:orderId")
      .setPath(OrderPath)
      .setUrlParams(NoQuery)
      .addSuccess(IndexerItem(Order))
      .addError(OrderNotFound.wire)
      .annotate(OpenApi.Summary, "One order")
  )
  .add(
    HttpApiEndpoint.get("matches", "/api/exchange/matches")
      .setUrlParams(MatchListQuery)
      .addSuccess(IndexerList(Match))
      .addError(IndexerInvalidMarketId.wire)
      .addError(IndexerInvalidAddress.wire)
      .annotate(OpenApi.Summary, "Match records, newest first (block, log index descending)")
  ) {}
