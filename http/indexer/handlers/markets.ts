/** Handlers of the markets group: decode is done by the endpoint schemas, reads by `queries/markets.ts`. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { IndexerItem, IndexerList } from "../../../schema/envelopes.js"
import { IndexerApi } from "../definition.js"
import { Market } from "../markets.js"
import { getMarket, listMarkets } from "../../read/markets.js"
import { respond } from "../respond.js"

const list = respond(IndexerList(Market))
const item = respond(IndexerItem(Market))

export const MarketsLive = HttpApiBuilder.group(IndexerApi, "markets", (handlers) =>
  handlers
    .handle("list", ({ urlParams }) => Effect.flatMap(listMarkets(urlParams), list))
    .handle("get", ({ path }) => Effect.flatMap(getMarket(path.id), item))
)
