/**
 * How fresh an answer is: every indexer response carries `X-Indexed-Block` (the last block whose
 * changes are committed, or `none` before the first) and `X-Indexed-Block-Hash`. A client that
 * made a trade in block B and gets `X-Indexed-Block` < B without seeing it knows to retry.
 *
 * Invariant: the header never claims more than the answer reflects. The block is taken when the
 * request starts, from a value that only moves when Postgres delivers the pipeline's
 * `predix_indexed` NOTIFY, which it sends inside the commit's transaction: a notification
 * arrives after its changes are visible, so the data read afterwards holds at least that block.
 * (After a reorg the notification carries the common ancestor, and the header goes back with it.)
 * That value (`http/core/freshness.ts`) is the process's one source of heads (`http/core/indexed-heads.ts`: the channel's
 * notifications, and the checkpoint read every few seconds in case its connection drops).
 *
 * `X-Indexed-Generation` names the generation of the index the answer was read from.
 *
 * Beside them, `X-Indexed-Status` and `X-Indexed-Lag` carry health's last judgement
 * (`health-watch.ts`): a block number alone cannot say that the chain has moved far past it.
 */
import { HttpServerResponse } from "@effect/platform"
import type { HttpApp } from "@effect/platform"
import { Effect } from "effect"
import { Freshness } from "../core/freshness.js"
import type { IndexedHead } from "../core/indexed-heads.js"
import { type HeaderJudgement, HealthWatch } from "./health-watch.js"

export type { IndexedHead } from "../core/indexed-heads.js"

export const INDEXED_BLOCK_HEADER = "x-indexed-block"
export const INDEXED_BLOCK_HASH_HEADER = "x-indexed-block-hash"
/** `ok`, `degraded` or `unknown`: the last judgement of `health-watch.ts`, as `/api/health` states it. */
export const INDEXED_STATUS_HEADER = "x-indexed-status"
/** Blocks the index trails the chain's head by, or `unknown`. */
export const INDEXED_LAG_HEADER = "x-indexed-lag"
/**
 * The generation of the index the answer was read from (blue-green re-index, docs/reindex.md):
 * `public` for the first, `index_<n>` after a re-index; `none` before the first batch. Every
 * answer is read from one generation only, the one its block is of.
 */
export const INDEXED_GENERATION_HEADER = "x-indexed-generation"

/** Every freshness header, in the order CORS exposes them. */
export const FRESHNESS_HEADER_NAMES = [
  INDEXED_BLOCK_HEADER,
  INDEXED_BLOCK_HASH_HEADER,
  INDEXED_GENERATION_HEADER,
  INDEXED_STATUS_HEADER,
  INDEXED_LAG_HEADER
] as const

/** The freshness headers of `head` (block, hash, generation), the same on every path (cache hits included). */
export const headHeaders = (head: IndexedHead | null) => ({
  [INDEXED_BLOCK_HEADER]: head === null ? "none" : String(head.block),
  [INDEXED_BLOCK_HASH_HEADER]: head === null ? "none" : head.hash,
  [INDEXED_GENERATION_HEADER]: head === null ? "none" : (head.generation ?? "public")
})

/** The health headers of the judgement `judgement`, the same on every path (cache hits included). */
export const healthHeaders = (judgement: HeaderJudgement) => ({
  [INDEXED_STATUS_HEADER]: judgement.status,
  [INDEXED_LAG_HEADER]: judgement.lagBlocks === null ? "unknown" : String(judgement.lagBlocks)
})

/**
 * Adds the freshness headers, read before `app` runs, to whatever `app` answers. `around` may
 * wrap `app` with what else depends on that same head (the response cache).
 */
export const withFreshness = <E, R, R2 = never>(
  app: HttpApp.Default<E, R>,
  around: (head: IndexedHead | null) => (app: HttpApp.Default<E, R>) => HttpApp.Default<E, R | R2> = () => (a) => a
): HttpApp.Default<E, R | R2 | Freshness | HealthWatch> =>
  Effect.flatMap(Effect.zip(Freshness, HealthWatch), ([freshness, watch]) =>
    Effect.flatMap(freshness.current, (head) =>
      Effect.map(around(head)(app), (response) =>
        HttpServerResponse.setHeaders(response, {
          ...headHeaders(head),
          // Read after the answer: a /api/health answer and its headers say the same.
          ...healthHeaders(watch.latest())
        })
      )
    )
  )
