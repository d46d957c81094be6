/**
 * One batch through every reducer: collect the keys its events touch, load those rows (then the
 * book levels of the loaded orders, and the positions only loaded rows name), fold the events
 * (pure), and commit the rows that changed through `sink.commit` (with the undo images when the
 * batch is an unfinalized block, the checkpoint and the NOTIFY, in one transaction).
 */
import type { SqlClient, SqlError } from "@effect/sql"
import { Effect } from "effect"
import type { LocatedEvent } from "./decode-batch.js"
import { bookLevelKeys, ledgerKeysOf, rowKeysOf } from "./keys.js"
import { reduceAll } from "./reduce/all.js"
import type { ProtocolContracts } from "./reduce/model.js"
import type { RowCache } from "./row-cache.js"
import { changedMarkets } from "./changed-markets.js"
import { commit, loadKeyedInto, loadState, writeRows, type Checkpoint, type Written } from "./sink.js"

export type { LocatedEvent } from "./decode-batch.js"

/** Where `applyBatch` adds the milliseconds of its phases (the indexer's stats). */
export interface BatchTimings {
  loadMs: number
  reduceMs: number
  writeMs: number
}

/**
 * Loads, folds and writes the rows of one batch (inside the commit's transaction); returns the
 * undo images and the markets whose rows changed (both only when `withUndo`). With a `cache`, rows it
 * holds are not loaded again and the folded rows are staged in it at `block`.
 */
const foldAndWrite = (
  events: ReadonlyArray<LocatedEvent>,
  block: number,
  protocol: ProtocolContracts,
  withUndo: boolean,
  cache: RowCache | undefined,
  timings: BatchTimings
) =>
  Effect.gen(function* () {
    let t = performance.now()
    const loaded = yield* loadState(rowKeysOf(events), cache)
    yield* loadKeyedInto(loaded.rows, bookLevelKeys(events, loaded), cache)
    yield* loadKeyedInto(loaded.rows, ledgerKeysOf(events, loaded), cache)
    timings.loadMs += performance.now() - t
    t = performance.now()
    const before = structuredClone(loaded)
    for (const { event, at } of events) reduceAll(loaded, event, at, protocol)
    timings.reduceMs += performance.now() - t
    t = performance.now()
    cache?.stage(loaded, block)
    const images = yield* writeRows(before, loaded, withUndo)
    // A tip block (imaged for undo) names its markets for the stream; a backfill batch leaves
    // them out (any market), and its writer is spared the second look at every row.
    const written: Written = { images, markets: withUndo ? changedMarkets(before, loaded) : undefined }
    timings.writeMs += performance.now() - t
    return written
  })

/**
 * Folds and commits one batch, its undo images too when `undoBlock` is set (the batch is that
 * one unfinalized block); `also` joins the transaction (the tip's window). With a `cache`, rows
 * it holds are not loaded again (the checkpoint is locked and checked first) and the folded rows
 * are staged in it; the caller accepts them once the transaction has committed and clears the
 * cache otherwise (`committing`, see row-cache.ts).
 */
export const applyBatch = (
  events: ReadonlyArray<LocatedEvent>,
  checkpoint: Checkpoint,
  protocol: ProtocolContracts,
  undoBlock: number | undefined,
  cache?: RowCache,
  timings: BatchTimings = { loadMs: 0, reduceMs: 0, writeMs: 0 },
  also?: Effect.Effect<unknown, SqlError.SqlError, SqlClient.SqlClient>
) =>
  Effect.suspend(() =>
    commit({
      checkpoint,
      guard: cache?.guard,
      undoBlock,
      rows: (withUndo) => foldAndWrite(events, checkpoint.block, protocol, withUndo, cache, timings),
      also
    })
  )
