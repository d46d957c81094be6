/**
 * The indexing thread's in-memory work alone, without Postgres or the replay node: the events
 * of the bench chain (`npm run bench` generates it into .data/bench) decoded up front, then
 * folded in batches of 100k events into a complete row cache (`RowCache.foldInPlace`, as a
 * backfill from nothing does) and each batch's writes planned and encoded (`planInPlace`, the
 * appended rows' COPY lines), the batch then committed in memory (`inPlaceCommitted`).
 *
 * Prints the CPU seconds of the fold and of the planning, per run and the least of the runs:
 * on a machine shared with other work CPU seconds still vary by 20-40% from run to run (caches
 * shared), and the least is the steadiest figure to compare versions with. Each run folds a
 * fresh structured clone of the events (the thread hand-off's clone: strings whose hashes V8
 * has not computed yet, as the indexing thread gets them). The digest of the rows at the end
 * must not change with a change that only makes the fold faster.
 *
 * Usage: npm run bench:fold [-- <events> [<runs>]]   (default 300,000 events, 3 runs)
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs/promises"
import * as Path from "node:path"
import { AddressBook, decodeLog, protocolContracts } from "../pipeline/decode.js"
import type { LocatedEvent } from "../pipeline/decode-batch.js"
import { reduceAll } from "../pipeline/reduce/all.js"
import type { ProtocolContracts } from "../pipeline/reduce/model.js"
import { KEYED_NAMES, LOG_NAMES } from "../pipeline/reduce/state.js"
import { RowCache } from "../pipeline/row-cache.js"
import { copyLineOf } from "../pipeline/rows-sink.js"
import { planInPlace } from "../pipeline/sink.js"
import { APPEND_TABLES } from "../pipeline/tables.js"
import type { BlockRecord } from "../tools/recording/format.js"
import { readRecords } from "../tools/recording/io.js"

const max = Number(process.argv[2] ?? 300_000)
const runs = Number(process.argv[3] ?? 3)
const BATCH_EVENTS = 100_000
/** The thread hand-off's range size, about: the unit each run clones. */
const RANGE_EVENTS = 5_000

const chains = Path.resolve(".data/bench")
const recordings = (await fs.readdir(chains).catch(() => [] as Array<string>)).filter((f) => f.endsWith(".ndjson.gz"))
if (recordings.length === 0) throw new Error(`no chain in ${chains}: run \`npm run bench\` once first (it generates one)`)
const recording = Path.join(chains, recordings.sort().at(-1)!)

// The canonical chain: a later record of a block number replaces the earlier ones (a reorg).
const blocks = new Map<number, BlockRecord>()
let book: AddressBook | undefined
let protocol: ProtocolContracts | undefined
let top = -1
let logs = 0
for await (const r of readRecords(recording)) {
  if (r.t === "meta") {
    book = new AddressBook(r.deployment)
    protocol = protocolContracts(r.deployment, book)
  }
  if (r.t !== "block") continue
  for (let n = r.number; n <= top; n++) blocks.delete(n)
  top = r.number
  blocks.set(r.number, r)
  logs += r.logs.length
  // About two thirds of the logs are watched events; read a little more than needed.
  if (logs >= max * 1.6) break
}
if (book === undefined || protocol === undefined) throw new Error(`${recording} has no meta record`)
const events: Array<LocatedEvent> = []
for (const r of [...blocks.values()].sort((a, b) => a.number - b.number)) {
  for (const log of r.logs) {
    const kinds = book.kindsOf(log.address)
    const decoded = kinds === undefined ? undefined : decodeLog(kinds, log)
    if (decoded === undefined) continue
    if (decoded.event._tag === "MarketCreated") {
      book.watchToken(decoded.event.yesToken)
      book.watchToken(decoded.event.noToken)
    }
    const at = {
      block: r.number,
      timestamp: r.timestamp,
      txHash: log.transactionHash,
      logIndex: log.logIndex,
      address: log.address.toLowerCase()
    }
    events.push({ event: decoded.event, at })
  }
  if (events.length >= max) break
}
console.log(`${events.length.toLocaleString("en")} events of ${Path.relative(".", recording)}`)

const cpuSeconds = (since: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(since)
  return (d.user + d.system) / 1e6
}

const run = () => {
  const ranges: Array<Array<LocatedEvent>> = []
  for (let i = 0; i < events.length; i += RANGE_EVENTS) ranges.push(structuredClone(events.slice(i, i + RANGE_EVENTS)))
  const cache = new RowCache()
  cache.startEmpty()
  const digest = createHash("sha256")
  let fold = 0
  let plan = 0
  let state = cache.foldInPlace()
  let open = 0
  const close = () => {
    const started = process.cpuUsage()
    const { gone } = planInPlace(state, cache.takeTouched())
    // The appended rows are encoded when their COPY runs: here, into the digest.
    for (const name of LOG_NAMES) {
      const line = copyLineOf(APPEND_TABLES[name])
      for (const row of state.logs[name] as unknown as ReadonlyArray<Record<string, unknown>>) digest.update(line(row))
    }
    cache.inPlaceCommitted(gone, 0)
    plan += cpuSeconds(started)
  }
  for (const range of ranges) {
    const started = process.cpuUsage()
    for (const { event, at } of range) reduceAll(state, event, at, protocol)
    fold += cpuSeconds(started)
    open += range.length
    if (open >= BATCH_EVENTS) {
      close()
      state = cache.foldInPlace()
      open = 0
    }
  }
  close()
  const json = (row: unknown) => JSON.stringify(row, (_, x) => (typeof x === "bigint" ? x.toString() : x))
  for (const name of KEYED_NAMES) for (const row of [...cache.tables[name].values()].map(json).sort()) digest.update(row)
  return { fold, plan, digest: digest.digest("hex").slice(0, 16) }
}

const results = Array.from({ length: runs }, run)
const least = (f: (r: (typeof results)[number]) => number) => Math.min(...results.map(f)).toFixed(2)
console.log(`runs (CPU s, fold + plan): ${results.map((r) => `${r.fold.toFixed(2)} + ${r.plan.toFixed(2)}`).join(", ")}`)
console.log(
  `least: fold ${least((r) => r.fold)} s, plan ${least((r) => r.plan)} s for ${events.length.toLocaleString("en")} events; rows digest ${[...new Set(results.map((r) => r.digest))].join(" ")}`
)
