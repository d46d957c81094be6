/**
 * `GET /api/markets/{id}/trades`: router trades and CLOB taker fills of a market, newest first.
 *
 * Sources: `router`, a router Trade event (the only kind that adds volume and trade counts);
 * `clob`, a taker fill on the exchange directly: a limit order that crossed the book (one row per
 * match, on the taker's side) or a market order (one TakerFilled). A router trade that filled on
 * the CLOB also makes the exchange emit a TakerFilled (taker = the router); that fill is the same
 * trade, so a market order's fill is listed only when its transaction has no router trade of the
 * market.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { IndexerList } from "../../schema/envelopes.js"
import { IndexerInvalidAddress, IndexerInvalidMarketId, IndexerMarketNotFound } from "../../schema/errors.js"
import { Outcome, TradeType } from "../../schema/enums.js"
import { Address, Amount6, TradePrice, Uint256 } from "../../schema/primitives.js"
import { addressParam, literalParam, MarketPath, optional, page, strictQuery } from "../core/params.js"
import { chainPositionFields, Count } from "./records.js"

export const TRADE_SOURCES = ["router", "clob"] as const

export const Trade = Schema.Struct({
  source: Schema.Literal(...TRADE_SOURCES).annotations({
    description:
      "router: a router Trade event (counts in volume); clob: a taker fill on the exchange directly (a limit order crossing the book, per match, or a market order), listed but not counted in volume"
  }),
  ...chainPositionFields,
  marketId: Uint256,
  trader: Address.annotations({ description: "who traded (router caller, or the exchange taker)" }),
  recipient: Address.annotations({ description: "who received the output" }),
  tradeType: TradeType.Name,
  outcome: Outcome,
  isBuy: Schema.Boolean,
  amountIn: Amount6.annotations({ description: "paid in: USDC for buys, outcome tokens for sells" }),
  amountOut: Amount6.annotations({ description: "received: outcome tokens for buys, USDC for sells" }),
  clobFilled: Amount6.annotations({ description: "part of amountOut filled on the order book" }),
  ammFilled: Amount6.annotations({ description: "part of amountOut filled by the AMM" }),
  price: Schema.NullOr(TradePrice).annotations({
    description:
      "USDC per share of the traded outcome token (the true ratio, above 1 when the pool priced the share above what a split costs); null when no shares moved"
  }),
  matchCount: Schema.NullOr(Count).annotations({
    description: "order-book matches of a clob fill (1 for a limit order's fill, one row per match); null for router trades"
  })
}).annotations({ identifier: "Trade", title: "Trade", description: "a router trade or a direct CLOB taker fill" })
export type Trade = typeof Trade.Type

export const TradeListQuery = strictQuery({
  trader: optional(addressParam("trader", "only trades by this trader (router caller or exchange taker)")),
  source: optional(literalParam("source", TRADE_SOURCES, "only router trades or only direct CLOB fills (default both)")),
  ...page
})
export type TradeListQuery = typeof TradeListQuery.Type

export class MarketTradesGroup extends HttpApiGroup.make("marketTrades").add(
  HttpApiEndpoint.get("trades", "/api/markets/:id/trades")
    .setPath(MarketPath)
    .setUrlParams(TradeListQuery)
    .addSuccess(IndexerList(Trade))
    .addError(IndexerMarketNotFound.wire)
    .addError(IndexerInvalidMarketId.wire)
    .addError(IndexerInvalidAddress.wire)
    .annotate(OpenApi.Summary, "Router trades and CLOB taker fills of a market, newest first (block, log index descending)")
) {}
