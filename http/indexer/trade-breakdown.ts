/**
 * `GET /api/trades/{txHash}/breakdown`: how one transaction's trades were filled, order book
 * versus AMM: its router trades (clobFilled / ammFilled each), its direct CLOB fills, and the
 * order matches behind the CLOB part.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { IndexerItem } from "../../schema/envelopes.js"
import { Amount6, BlockNumber, Price, Timestamp, TxHash } from "../../schema/primitives.js"
import { Match } from "./exchange.js"
import { Trade } from "./market-trades.js"
import { NoQuery, txHashParam } from "../core/params.js"

export const TradeBreakdown = Schema.Struct({
  txHash: TxHash,
  blockNumber: BlockNumber,
  timestamp: Timestamp,
  trades: Schema.Array(Trade).annotations({ description: "router trades and direct CLOB fills of the transaction, in log order" }),
  matches: Schema.Array(Match).annotations({ description: "order matches of the transaction, in log order" }),
  amountOut: Amount6.annotations({ description: "sum of the trades' amountOut" }),
  clobFilled: Amount6.annotations({ description: "part of amountOut filled on the order book" }),
  ammFilled: Amount6.annotations({ description: "part of amountOut filled by the AMM" }),
  clobShare: Schema.NullOr(Price).annotations({ description: "clobFilled / amountOut, 0 to 1; null when amountOut is 0" })
}).annotations({ identifier: "TradeBreakdown", title: "Trade breakdown", description: "CLOB versus AMM fill of one transaction" })
export type TradeBreakdown = typeof TradeBreakdown.Type

export const TxPath = Schema.Struct({ txHash: txHashParam("txHash", "transaction hash") })

export class TradeBreakdownGroup extends HttpApiGroup.make("trades").add(
  HttpApiEndpoint.get("breakdown", "/api/trades/:txHash/breakdown")
    .setPath(TxPath)
    .setUrlParams(NoQuery)
    .addSuccess(IndexerItem(TradeBreakdown))
    .annotate(OpenApi.Summary, "CLOB versus AMM breakdown of one transaction's trades; NotFound when it has none")
) {}
