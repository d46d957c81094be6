/** Handlers of the liquidity group. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { IndexerList } from "../../../schema/envelopes.js"
import { IndexerApi } from "../definition.js"
import { LiquidityEvent, LiquidityPosition } from "../liquidity.js"
import { listLiquidityEvents, listLiquidityPositions } from "../../read/liquidity.js"
import { respond } from "../respond.js"

const positions = respond(IndexerList(LiquidityPosition))
const events = respond(IndexerList(LiquidityEvent))

export const LiquidityLive = HttpApiBuilder.group(IndexerApi, "liquidity", (handlers) =>
  handlers
    .handle("positions", ({ path, urlParams }) => Effect.flatMap(listLiquidityPositions(path.address, urlParams), positions))
    .handle("events", ({ urlParams }) => Effect.flatMap(listLiquidityEvents(urlParams), events))
)
