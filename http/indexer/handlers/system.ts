/** Handlers of the health and stats groups. */
import { HttpApiBuilder } from "@effect/platform"
import { Context, Effect } from "effect"
import { IndexerApi } from "../definition.js"
import { HealthWatch } from "../health-watch.js"
import { readStats } from "../../read/stats.js"

/** The chain this indexer serves (its health names it). */
export class IndexedChain extends Context.Tag("predix/IndexedChain")<IndexedChain, { readonly chainId: number }>() {}

export const HealthLive = HttpApiBuilder.group(IndexerApi, "health", (handlers) =>
  handlers.handle("health", () =>
    HealthWatch.pipe(
      Effect.flatMap((watch) => watch.check),
      Effect.map((data) => ({ data, meta: null }))
    )
  )
)

export const StatsLive = HttpApiBuilder.group(IndexerApi, "stats", (handlers) =>
  handlers.handle("stats", () => Effect.map(readStats, (data) => ({ data, meta: null })))
)
