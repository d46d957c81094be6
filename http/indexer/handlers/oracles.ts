/** Handlers of the oracles group. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { IndexerList } from "../../../schema/envelopes.js"
import { IndexerApi } from "../definition.js"
import { ApprovedOracle, ManualReport, PriceFeedMarket } from "../oracles.js"
import { listApprovedOracles, listManualReports, listPriceFeedMarkets } from "../../read/oracles.js"
import { respond } from "../respond.js"

const approved = respond(IndexerList(ApprovedOracle))
const reports = respond(IndexerList(ManualReport))
const feedMarkets = respond(IndexerList(PriceFeedMarket))

export const OraclesLive = HttpApiBuilder.group(IndexerApi, "oracles", (handlers) =>
  handlers
    .handle("approved", ({ urlParams }) => Effect.flatMap(listApprovedOracles(urlParams), approved))
    .handle("manualReports", ({ path, urlParams }) => Effect.flatMap(listManualReports(path.oracleContract, urlParams), reports))
    .handle("priceFeedMarkets", ({ path, urlParams }) => Effect.flatMap(listPriceFeedMarkets(path.oracleContract, urlParams), feedMarkets))
)
