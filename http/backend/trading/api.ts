/** The trading and portfolio group of the backend API: endpoint definitions (handlers: `handlers.ts`). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { BackendUserTrade } from "../../../schema/backend-activity.js"
import {
  BackendFill,
  BackendOrder,
  BackendPnl,
  BackendPortfolio,
  BackendPosition,
  BackendTradeBreakdown,
  RedemptionQuote,
  UserProfile
} from "../../../schema/backend-trading.js"
import { Side } from "../../../schema/enums.js"
import { BackendItem, BackendList } from "../../../schema/envelopes.js"
import { InvalidAddress, InvalidMarketId, MarketNotFound } from "../../../schema/errors.js"
import { NotFound } from "../errors.js"
import {
  AddressString,
  AddressTextPath,
  bytes32Param,
  literalParam,
  MarketIdString,
  marketIdParam,
  NoQuery,
  optional,
  page,
  strictQuery,
  txHashParam
} from "../../core/params.js"

export const OrdersQuery = strictQuery({
  marketId: optional(marketIdParam("marketId", "only orders of this market")),
  status: optional(literalParam("status", ["OPEN", "PARTIALLY_FILLED", "FILLED", "CANCELLED"], "only orders in this status")),
  side: optional(literalParam("side", Side.names, "only orders on this side")),
  ...page
})

export const UserTradesQuery = strictQuery({
  marketId: optional(marketIdParam("marketId", "only trades of this market")),
  ...page
})

export const AddressMarketPath = Schema.Struct({ address: AddressString, marketId: MarketIdString })
export const TxPath = Schema.Struct({ txHash: txHashParam("txHash", "transaction hash") })
export const OrderPath = Schema.Struct({ orderId: bytes32Param("orderId", "order id (0x + 64 hex)") })

const userEndpoint = <const Name extends string, const Path extends `/${string}`>(name: Name, path: Path) =>
  HttpApiEndpoint.get(name, path).setPath(AddressTextPath).addError(InvalidAddress.wire)

export class TradingGroup extends HttpApiGroup.make("trading")
  .add(
    userEndpoint("profile", "/api/users/:address/profile")
      .setUrlParams(NoQuery)
      .addSuccess(BackendItem(UserProfile))
      .annotate(OpenApi.Summary, "A user's trading profile: volume, trades, realized P&L, rank, accuracy (warm cache)")
  )
  .add(
    userEndpoint("orders", "/api/trading/:address/orders")
      .setUrlParams(OrdersQuery)
      .addSuccess(BackendList(BackendOrder))
      .addError(InvalidMarketId.wire)
      .annotate(OpenApi.Summary, "A user's CLOB orders, newest first")
  )
  .add(
    userEndpoint("portfolio", "/api/trading/:address/portfolio")
      .setUrlParams(NoQuery)
      .addSuccess(BackendItem(BackendPortfolio))
      .annotate(OpenApi.Summary, "Open positions marked to market, with totals")
  )
  .add(
    HttpApiEndpoint.get("position", "/api/trading/:address/positions/:marketId")
      .setPath(AddressMarketPath)
      .setUrlParams(NoQuery)
      .addSuccess(BackendItem(BackendPosition))
      .addError(InvalidAddress.wire)
      .addError(InvalidMarketId.wire)
      .addError(MarketNotFound.wire)
      .annotate(OpenApi.Summary, "A user's position in one market (zero balances when none)")
  )
  .add(
    userEndpoint("trades", "/api/trading/:address/trades")
      .setUrlParams(UserTradesQuery)
      .addSuccess(BackendList(BackendUserTrade))
      .addError(InvalidMarketId.wire)
      .annotate(
        OpenApi.Summary,
        "A user's trade history, newest first: every share move its P&L counts (router trades, CLOB taker and maker fills, splits, merges, redemptions, refunds, transfers), each with its source"
      )
  )
  .add(
    userEndpoint("pnl", "/api/trading/:address/pnl")
      .setUrlParams(NoQuery)
      .addSuccess(BackendItem(BackendPnl))
      .annotate(OpenApi.Summary, "Aggregated P&L (warm cache)")
  )
  .add(
    HttpApiEndpoint.get("redemptionQuote", "/api/trading/:address/redemption-quote/:marketId")
      .setPath(AddressMarketPath)
      .setUrlParams(NoQuery)
      .addSuccess(BackendItem(RedemptionQuote))
      .addError(InvalidAddress.wire)
      .addError(InvalidMarketId.wire)
      .addError(MarketNotFound.wire)
      .annotate(OpenApi.Summary, "What redeeming (resolved: winning side less the redemption fee) or refunding (refund mode) pays now")
  )
  .add(
    HttpApiEndpoint.get("breakdown", "/api/trades/:txHash/breakdown")
      .setPath(TxPath)
      .setUrlParams(NoQuery)
      .addSuccess(BackendItem(BackendTradeBreakdown))
      .addError(NotFound.wire)
      .annotate(OpenApi.Summary, "CLOB versus AMM fill of one transaction")
  )
  .add(
    HttpApiEndpoint.get("fills", "/api/orders/:orderId/fills")
      .setPath(OrderPath)
      .setUrlParams(strictQuery(page))
      .addSuccess(BackendList(BackendFill))
      .addError(NotFound.wire)
      .annotate(OpenApi.Summary, "Matches of one order, as maker or taker")
  ) {}
