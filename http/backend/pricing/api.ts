/** The pricing group of the backend API: endpoint definitions (handlers: `handlers.ts`). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { BackendItem, BackendList } from "../../../schema/envelopes.js"
import { CandlesBatchRequest, MarketCandles, PriceViewsRequest, PricingView, Quote, QuoteRequest } from "../../../schema/backend-pricing.js"
import { InsufficientBalance, InvalidAddress, InvalidMarketId, MarketNotFound, MarketPaused } from "../../../schema/errors.js"
import { IdOrSlugPath, NoQuery } from "../../core/params.js"

export class PricingGroup extends HttpApiGroup.make("pricing")
  .add(
    HttpApiEndpoint.get("view", "/api/markets/:idOrSlug/pricing/view")
      .setPath(IdOrSlugPath)
      .setUrlParams(NoQuery)
      .addSuccess(BackendItem(PricingView))
      .addError(MarketNotFound.wire)
      .addError(InvalidMarketId.wire)
      .annotate(OpenApi.Summary, "Best bid/ask per side from the book, AMM spot from sqrtPriceX96, implied probability, depth")
  )
  .add(
    HttpApiEndpoint.post("quote", "/api/markets/:idOrSlug/pricing/quote")
      .setPath(IdOrSlugPath)
      .setUrlParams(NoQuery)
      .setPayload(QuoteRequest)
      .addSuccess(BackendItem(Quote))
      .addError(MarketNotFound.wire)
      .addError(InvalidMarketId.wire)
      .addError(MarketPaused.wire)
      .addError(InvalidAddress.wire)
      .addError(InsufficientBalance.wire)
      .annotate(
        OpenApi.Summary,
        "The router's waterfall for an exact-input trade at the indexed head: CLOB at prices at least as good as the AMM's fee-adjusted spot (up to maxFills), the AMM for the rest"
      )
  )
  .add(
    HttpApiEndpoint.post("priceViews", "/api/markets-batch/price-views")
      .setUrlParams(NoQuery)
      .setPayload(PriceViewsRequest)
      .addSuccess(BackendList(PricingView))
      .addError(MarketNotFound.wire)
      .addError(InvalidMarketId.wire)
      .annotate(OpenApi.Summary, "Pricing views of 1 to 50 markets, in the order asked")
  )
  .add(
    HttpApiEndpoint.post("candles", "/api/markets-batch/candles")
      .setUrlParams(NoQuery)
      .setPayload(CandlesBatchRequest)
      .addSuccess(BackendList(MarketCandles))
      .addError(MarketNotFound.wire)
      .addError(InvalidMarketId.wire)
      .annotate(OpenApi.Summary, "Candles of 1 to 50 markets (timeframe default 1h, limit default 20 per market)")
  ) {}
