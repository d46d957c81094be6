/**
 * The tip writer: commits the tip source's events one transaction each, with the held window
 * (`indexed_block`) and the NOTIFY in the same transaction.
 *
 * - Block: its rows with undo images, the block held, its logs kept in the log store, the
 *   checkpoint moved to it (`sink.commit`, the backfill's commit too).
 * - Reorg: every block above the ancestor undone (rows from their undo images, appended rows
 *   deleted), those blocks dropped from the window and from the log store, the checkpoint moved
 *   back to the ancestor.
 * - Finalized: blocks now final leave the window and lose their undo rows.
 */
import { Effect, Stream } from "effect"
import { applyBatch } from "./batch.js"
import { committing, type IndexingContext } from "./indexing-context.js"
import { recordBatch, recordPosition, recordReorg } from "./metrics.js"
import type { Window } from "./reorg.js"
import { pruneUndo, revertTo } from "./sink.js"
import { deleteStoredAbove, storeRanges } from "./log-store/store-sql.js"
import type { TipEvent } from "./tip-source.js"

export const makeTipWriter = (context: IndexingContext) => {
  const { sql, cache, chainId, progress } = context

  const write = (event: TipEvent) => {
    switch (event._tag) {
      case "Block":
        return Effect.gen(function* () {
          const { header, events, digest, parentDigest, head } = event
          yield* context.unknown.note(event.unknown)
          const t = performance.now()
          yield* committing(
            cache,
            applyBatch(
              events,
              { chainId, block: header.number, hash: header.hash, digest, head },
              context.protocol,
              header.number,
              cache,
              context.stats,
              context.logStore
                ? Effect.zipRight(progress.holdBlock(header, digest, parentDigest), storeRanges(chainId, [event.stored]))
                : progress.holdBlock(header, digest, parentDigest)
            )
          ).pipe(Effect.withSpan("indexer.batch.write", { attributes: { to: header.number, events: events.length } }))
          yield* recordBatch(context.stats, 1, events.length, (performance.now() - t) / 1000)
          yield* recordPosition(header.number, head)
        })
      case "Reorg":
        return Effect.gen(function* () {
          const { ancestor } = event
          // Rows held in memory are those of the blocks being undone.
          cache.clear()
          yield* sql
            .withTransaction(
              revertTo({ chainId, block: ancestor.number, hash: ancestor.hash, digest: ancestor.digest }).pipe(
                Effect.zipRight(progress.dropBlocksAbove(ancestor.number)),
                // The orphaned blocks' logs leave the log store with their rows.
                Effect.zipRight(deleteStoredAbove(chainId, ancestor.number)),
                Effect.zipRight(progress.notifyHead(ancestor.number, ancestor.hash, true))
              )
            )
            .pipe(Effect.withSpan("indexer.reorg.revert", { attributes: { ancestor: ancestor.number, depth: event.depth } }))
          yield* recordReorg(context.stats, event.depth)
          yield* recordPosition(ancestor.number, undefined)
        })
      case "Finalized":
        return sql.withTransaction(pruneUndo(event.block).pipe(Effect.zipRight(progress.dropBlocksThrough(event.block))))
    }
  }

  /** Commits `events` in order; returns the window the last committed one left (`start` when none came). */
  const run = <E, R>(start: Window, events: Stream.Stream<TipEvent, E, R>) =>
    Stream.runFoldEffect(events, start, (_, event) => Effect.as(write(event), event.window))

  return { run }
}
