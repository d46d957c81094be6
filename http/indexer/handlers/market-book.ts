/** Handlers of the market book group. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { IndexerItem, IndexerList } from "../../../schema/envelopes.js"
import { IndexerApi } from "../definition.js"
import { OrderBook, Position } from "../market-book.js"
import { listMarketPositions, readOrderBook } from "../../read/market-book.js"
import { respond } from "../respond.js"

const book = respond(IndexerItem(OrderBook))
const positions = respond(IndexerList(Position))

export const MarketBookLive = HttpApiBuilder.group(IndexerApi, "marketBook", (handlers) =>
  handlers
    .handle("orderbook", ({ path }) => Effect.flatMap(readOrderBook(path.id), book))
    .handle("positions", ({ path, urlParams }) => Effect.flatMap(listMarketPositions(path.id, urlParams), positions))
)
