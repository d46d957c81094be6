/** Handlers of the portfolio group. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { IndexerItem, IndexerList } from "../../../schema/envelopes.js"
import { IndexerApi } from "../definition.js"
import { Portfolio, PortfolioHistoryPoint, PortfolioPnl } from "../portfolio.js"
import { readPnl, readPortfolio, readPortfolioHistory } from "../../read/portfolio.js"
import { respond } from "../respond.js"

const snapshot = respond(IndexerItem(Portfolio))
const history = respond(IndexerList(PortfolioHistoryPoint))
const pnl = respond(IndexerItem(PortfolioPnl))

export const PortfolioLive = HttpApiBuilder.group(IndexerApi, "portfolio", (handlers) =>
  handlers
    .handle("snapshot", ({ path }) => Effect.flatMap(readPortfolio(path.address), snapshot))
    .handle("history", ({ path, urlParams }) => Effect.flatMap(readPortfolioHistory(path.address, urlParams), history))
    .handle("pnl", ({ path }) => Effect.flatMap(readPnl(path.address), pnl))
)
