/** Handlers of the market AMM group. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { IndexerItem, IndexerList } from "../../../schema/envelopes.js"
import { IndexerApi } from "../definition.js"
import { AmmState, LiquidityRange } from "../market-amm.js"
import { listLiquidityRanges, readAmmState } from "../../read/market-amm.js"
import { respond } from "../respond.js"

const state = respond(IndexerItem(AmmState))
const ranges = respond(IndexerList(LiquidityRange))

export const MarketAmmLive = HttpApiBuilder.group(IndexerApi, "marketAmm", (handlers) =>
  handlers
    .handle("ammState", ({ path }) => Effect.flatMap(readAmmState(path.id), state))
    .handle("liquidity", ({ path, urlParams }) => Effect.flatMap(listLiquidityRanges(path.id, urlParams), ranges))
)
