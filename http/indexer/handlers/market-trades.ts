/** Handler of the market trades group. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { IndexerList } from "../../../schema/envelopes.js"
import { IndexerApi } from "../definition.js"
import { Trade } from "../market-trades.js"
import { listMarketTrades } from "../../read/market-trades.js"
import { respond } from "../respond.js"

const list = respond(IndexerList(Trade))

export const MarketTradesLive = HttpApiBuilder.group(IndexerApi, "marketTrades", (handlers) =>
  handlers.handle("trades", ({ path, urlParams }) => Effect.flatMap(listMarketTrades(path.id, urlParams), list))
)
