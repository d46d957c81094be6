/**
 * The log store's encoder alone (`pipeline/log-store/codec.ts`, run on the backfill thread for
 * every fetched range): every log of the bench chain (`npm run bench` generates it into
 * .data/bench; the collateral transfers included, so a little more than the indexer stores) cut
 * into ranges of about 5,000 logs, the fetch size, and encoded `runs` times.
 *
 * Prints the least CPU seconds of the runs (the steadiest figure on a shared machine) and a
 * digest of every encoded byte, which a change that only makes the encoder faster must keep.
 *
 * Usage: npm run bench:codec [-- <runs>]   (default 5)
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs/promises"
import * as Path from "node:path"
import { encodeRange } from "../pipeline/log-store/codec.js"
import type { Batch, BlockStamp } from "../pipeline/source/backfill.js"
import type { ChainLog } from "../pipeline/source/chain-log.js"
import type { BlockRecord } from "../tools/recording/format.js"
import { readRecords } from "../tools/recording/io.js"

const runs = Number(process.argv[2] ?? 5)
const chains = Path.resolve(".data/bench")
const recordings = (await fs.readdir(chains).catch(() => [] as Array<string>)).filter((f) => f.endsWith(".ndjson.gz"))
if (recordings.length === 0) throw new Error(`no chain in ${chains}: run \`npm run bench\` once first (it generates one)`)
const recording = Path.join(chains, recordings.sort().at(-1)!)
const blocks = new Map<number, BlockRecord>()
let top = -1
for await (const r of readRecords(recording)) {
  if (r.t !== "block") continue
  for (let n = r.number; n <= top; n++) blocks.delete(n)
  top = r.number
  blocks.set(r.number, r)
}
const batches: Array<Batch> = []
let logs: Array<ChainLog> = []
let stamps = new Map<number, BlockStamp>()
let from = -1
for (const r of [...blocks.values()].sort((a, b) => a.number - b.number)) {
  if (from < 0) from = r.number
  for (const l of r.logs) {
    logs.push({
      address: l.address.toLowerCase(),
      topics: l.topics,
      data: l.data,
      blockNumber: r.number,
      blockHash: r.hash,
      logIndex: l.logIndex,
      transactionHash: l.transactionHash,
      transactionIndex: l.transactionIndex,
      blockTimestamp: r.timestamp
    })
    stamps.set(r.number, { number: r.number, hash: r.hash, timestamp: r.timestamp })
  }
  if (logs.length >= 5000) {
    stamps.set(r.number, { number: r.number, hash: r.hash, timestamp: r.timestamp })
    batches.push({ from, to: r.number, logs, blocks: stamps })
    logs = []
    stamps = new Map()
    from = -1
  }
}
let least = Infinity
let digest = ""
for (let i = 0; i < runs; i++) {
  const h = createHash("sha256")
  const t = process.cpuUsage()
  const out = batches.map(encodeRange)
  const d = process.cpuUsage(t)
  least = Math.min(least, (d.user + d.system) / 1e6)
  for (const b of out) h.update(b)
  digest = h.digest("hex").slice(0, 16)
}
console.log(
  `${batches.length} ranges, ${batches.reduce((n, b) => n + b.logs.length, 0)} logs: least encode ${least.toFixed(3)} s CPU of ${runs}; bytes digest ${digest}`
)
