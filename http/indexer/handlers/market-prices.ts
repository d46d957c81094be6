/** Handlers of the market prices group. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { IndexerItem, IndexerList } from "../../../schema/envelopes.js"
import { IndexerApi } from "../definition.js"
import { Candle, PriceDelta, PricePoint, VolumeWindow } from "../market-prices.js"
import { listCandles, listPrices, priceDelta, volumeWindow } from "../../read/market-prices.js"
import { respond } from "../respond.js"

const prices = respond(IndexerList(PricePoint))
const candles = respond(IndexerList(Candle))
const delta = respond(IndexerItem(PriceDelta))
const volume = respond(IndexerItem(VolumeWindow))

export const MarketPricesLive = HttpApiBuilder.group(IndexerApi, "marketPrices", (handlers) =>
  handlers
    .handle("prices", ({ path, urlParams }) => Effect.flatMap(listPrices(path.id, urlParams), prices))
    .handle("candles", ({ path, urlParams }) => Effect.flatMap(listCandles(path.id, urlParams), candles))
    .handle("priceDelta", ({ path, urlParams }) => Effect.flatMap(priceDelta(path.id, urlParams.window), delta))
    .handle("volumeWindow", ({ path, urlParams }) => Effect.flatMap(volumeWindow(path.id, urlParams.window), volume))
)
