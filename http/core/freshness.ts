/**
 * The committed head an answer is read at, as every API of this process sees it: the indexer's
 * freshness headers and answer cache (`http/indexer/freshness.ts`), the backend's envelope and
 * cache, and the market status reads that need the head's time.
 *
 * Invariant: the value only moves when the process's one source of heads
 * (`indexed-heads.ts`) moves it, on the pipeline's `predix_indexed` NOTIFY (sent inside the
 * commit's transaction) or a checkpoint read; so data read after taking it holds at least that
 * block.
 *
 * With read replicas (`read-targets.ts`) answers are read there, so the head is theirs: the lowest
 * checkpoint of the replicas in rotation (a standby's sessions hear no NOTIFY: its checkpoint is
 * polled), never one the rows an answer was read from may lack.
 */
import { Context, Effect, Layer } from "effect"
import { type IndexedHead, IndexedHeads, IndexedHeadsShared } from "./indexed-heads.js"
import { ReadTargets } from "./read-targets.js"

export class Freshness extends Context.Tag("predix/IndexerFreshness")<
  Freshness,
  {
    /** The last committed head as last heard of; null before the first batch. */
    readonly current: Effect.Effect<IndexedHead | null>
    /** The same, read synchronously (for the Node-level cache path, `http/indexer/fast-path.ts`). */
    readonly latest: () => IndexedHead | null
  }
>() {}

/**
 * Follows the committed head of `chainId` for as long as the layer lives: the read targets' when
 * the process has replicas, else the process's `IndexedHeads` when one is provided, else a source
 * of its own.
 */
export const FreshnessLive = (chainId: number) =>
  Layer.unwrapEffect(
    Effect.map(Effect.serviceOption(ReadTargets), (targets) =>
      targets._tag === "Some"
        ? Layer.succeed(Freshness, { current: Effect.sync(targets.value.head), latest: targets.value.head })
        : Layer.effect(
            Freshness,
            Effect.map(IndexedHeads, (heads) => ({ current: heads.current, latest: heads.latest }))
          ).pipe(Layer.provide(IndexedHeadsShared(chainId)))
    )
  )
