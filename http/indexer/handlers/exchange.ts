/** Handlers of the exchange group and of the per-transaction trade breakdown. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { IndexerItem, IndexerList } from "../../../schema/envelopes.js"
import { IndexerApi } from "../definition.js"
import { Match, Order } from "../exchange.js"
import { getOrder, listMatches, listOrders } from "../../read/exchange.js"
import { readTradeBreakdown } from "../../read/trade-breakdown.js"
import { respond } from "../respond.js"
import { TradeBreakdown } from "../trade-breakdown.js"

const orders = respond(IndexerList(Order))
const order = respond(IndexerItem(Order))
const matches = respond(IndexerList(Match))
const breakdown = respond(IndexerItem(TradeBreakdown))

export const ExchangeLive = HttpApiBuilder.group(IndexerApi, "exchange", (handlers) =>
  handlers
    .handle("orders", ({ urlParams }) => Effect.flatMap(listOrders(urlParams), orders))
    .handle("order", ({ path }) => Effect.flatMap(getOrder(path.orderId), order))
    .handle("matches", ({ urlParams }) => Effect.flatMap(listMatches(urlParams), matches))
)

export const TradeBreakdownLive = HttpApiBuilder.group(IndexerApi, "trades", (handlers) =>
  handlers.handle("breakdown", ({ path }) => Effect.flatMap(readTradeBreakdown(path.txHash), breakdown))
)
