/**
 * What the indexer measures, as Effect `Metric`s of this process, and their Prometheus text.
 *
 * Counters count from this process's start (Prometheus takes a restart as a counter reset).
 * The indexer runs in its own process, so it publishes the text in Postgres (`indexer_metrics`,
 * `progress-sql.ts`) for the API process to serve at `GET /metrics` on the indexer port.
 */
import { Effect, Metric, MetricBoundaries, MetricState } from "effect"

export const blocksIndexed = Metric.counter("predix_indexer_blocks_indexed_total", {
  description: "Blocks whose changes are committed",
  incremental: true
})
export const eventsIndexed = Metric.counter("predix_indexer_events_indexed_total", {
  description: "Decoded events committed",
  incremental: true
})
export const batchesWritten = Metric.counter("predix_indexer_batches_total", {
  description: "Batch and tip-block transactions committed",
  incremental: true
})

/** Seconds a batch's writes took (their transaction, Postgres's time included). */
export const batchWriteSeconds = Metric.histogram(
  "predix_indexer_batch_write_seconds",
  MetricBoundaries.exponential({ start: 0.005, factor: 2, count: 12 }),
  "Seconds a batch's (or tip block's) transaction took"
)

/** Failed JSON-RPC exchanges, by error kind (its tag: Timeout, ServerError, RateLimited, ...); retried ones included. */
export const rpcErrors = (kind: string) =>
  Metric.counter("predix_indexer_rpc_errors_total", {
    description: "Failed JSON-RPC exchanges by kind, retried ones included",
    incremental: true
  }).pipe(Metric.tagged("kind", kind))

export const reorgs = Metric.counter("predix_indexer_reorgs_total", { description: "Reorgs reverted", incremental: true })
export const reorgDepth = Metric.histogram(
  "predix_indexer_reorg_depth_blocks",
  MetricBoundaries.fromIterable([1, 2, 3, 4, 6, 8, 16, 32, 64]),
  "Blocks undone per reorg"
)

export const indexedBlock = Metric.gauge("predix_indexer_indexed_block", { description: "Last block whose changes are committed" })
export const headBlock = Metric.gauge("predix_indexer_head_block", { description: "Newest chain head seen" })
export const lagBlocks = Metric.gauge("predix_indexer_lag_blocks", {
  description: "Blocks between the newest head seen and the last committed"
})

/** Registers the counters and histograms, so a scrape shows them at zero before their first event. */
export const registerMetrics = Effect.all(
  [blocksIndexed, eventsIndexed, batchesWritten, batchWriteSeconds, reorgs, reorgDepth].map((metric) =>
    Metric.value(metric as Metric.Metric<any, any, any>)
  ),
  { discard: true }
)

/** Sets the position gauges: the block committed, and the head when one is known. */
export const recordPosition = (block: number, head: number | undefined) =>
  Effect.all(
    [
      Metric.set(indexedBlock, block),
      ...(head === undefined ? [] : [Metric.set(headBlock, head), Metric.set(lagBlocks, Math.max(0, head - block))])
    ],
    { discard: true }
  )

/**
 * One indexer's counts since it was made: what its progress lines, `stats()` and the benchmarks
 * read. Changed only by `recordBatch` and `recordReorg`, which count the process's Metrics (what
 * /metrics serves) in the same call, so the two never disagree (with one indexer per process,
 * as the service runs, they are equal).
 */
export interface IndexerCounts {
  events: number
  batches: number
  reorgs: number
}

/** Counts a committed batch of `blocks` blocks and `events` events whose writes took `seconds`. */
export const recordBatch = (counts: IndexerCounts, blocks: number, events: number, seconds: number) =>
  Effect.suspend(() => {
    counts.events += events
    counts.batches++
    return Effect.all(
      [
        Metric.incrementBy(blocksIndexed, blocks),
        Metric.incrementBy(eventsIndexed, events),
        Metric.increment(batchesWritten),
        Metric.update(batchWriteSeconds, seconds)
      ],
      { discard: true }
    )
  })

/** Counts a reorg reverted, `depth` blocks deep. */
export const recordReorg = (counts: IndexerCounts, depth: number) =>
  Effect.suspend(() => {
    counts.reorgs++
    return Effect.zipRight(Metric.increment(reorgs), Metric.update(reorgDepth, depth))
  })

const escapeLabel = (value: string) => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"')
const labels = (pairs: ReadonlyArray<readonly [string, string]>) =>
  pairs.length === 0 ? "" : `{${pairs.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(",")}}`
const number = (n: number | bigint) =>
  typeof n === "bigint" ? n.toString() : Number.isFinite(n) ? String(n) : n > 0 ? "+Inf" : n < 0 ? "-Inf" : "NaN"

/**
 * The metrics whose names start with `prefix`, in the Prometheus text exposition format
 * (version 0.0.4): counters, gauges and histograms, one HELP and TYPE per name.
 */
export const prometheusText = (prefix: string) =>
  Effect.map(Metric.snapshot, (pairs) => {
    const byName = new Map<string, Array<(typeof pairs)[number]>>()
    for (const pair of pairs) {
      if (!pair.metricKey.name.startsWith(prefix)) continue
      byName.set(pair.metricKey.name, [...(byName.get(pair.metricKey.name) ?? []), pair])
    }
    const lines: Array<string> = []
    for (const [name, series] of [...byName].sort(([a], [b]) => a.localeCompare(b))) {
      const first = series[0]!
      const state = first.metricState
      const type = MetricState.isCounterState(state)
        ? "counter"
        : MetricState.isGaugeState(state)
          ? "gauge"
          : MetricState.isHistogramState(state)
            ? "histogram"
            : undefined
      if (type === undefined) continue
      const description = first.metricKey.description
      if (description._tag === "Some") lines.push(`# HELP ${name} ${description.value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")}`)
      lines.push(`# TYPE ${name} ${type}`)
      for (const { metricKey, metricState } of series) {
        const tags = metricKey.tags.map((t) => [t.key, t.value] as const)
        if (MetricState.isCounterState(metricState)) lines.push(`${name}${labels(tags)} ${number(metricState.count)}`)
        else if (MetricState.isGaugeState(metricState)) lines.push(`${name}${labels(tags)} ${number(metricState.value)}`)
        else if (MetricState.isHistogramState(metricState)) {
          let infinite = false
          for (const [bound, count] of metricState.buckets) {
            infinite ||= bound === Number.POSITIVE_INFINITY
            lines.push(`${name}_bucket${labels([...tags, ["le", number(bound)]])} ${count}`)
          }
          if (!infinite) lines.push(`${name}_bucket${labels([...tags, ["le", "+Inf"]])} ${metricState.count}`)
          lines.push(`${name}_sum${labels(tags)} ${number(metricState.sum)}`)
          lines.push(`${name}_count${labels(tags)} ${metricState.count}`)
        }
      }
    }
    return lines.join("\n") + "\n"
  })
