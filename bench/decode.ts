/**
 * Decoder micro-benchmark: decodes every log of a synthetic recording through the fixed-layout
 * decoder (routing by address included) and, for comparison, a sample through viem's
 * decodeEventLog. Prints logs/s. Usage: npm run bench:decode [-- <events>]
 */
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { decodeEventLog, type Hex } from "viem"
import { AddressBook, decodeLog } from "../pipeline/decode.js"
import type { RecordedLog } from "../tools/recording/format.js"
import { readRecords } from "../tools/recording/io.js"
import { generateSynthetic } from "../tools/recording/synthetic.js"

const events = Number(process.argv[2] ?? 300_000)
const dir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-bench-"))
const out = Path.join(dir, "bench.ndjson.gz")
const summary = await generateSynthetic({ out, seed: 11, events })
const logs: Array<RecordedLog> = []
for await (const record of readRecords(out)) if (record.t === "block") logs.push(...record.logs)
await fs.rm(dir, { recursive: true, force: true })

const book = new AddressBook(summary.deployment)
book.watchToken(summary.deployment.testUsdc)
const run = () => {
  let decoded = 0
  const started = performance.now()
  for (const log of logs) {
    const kinds = book.kindsOf(log.address)
    if (kinds === undefined) continue
    const result = decodeLog(kinds, log)
    if (result === undefined) continue
    if (result.event._tag === "MarketCreated") {
      book.watchToken(result.event.yesToken)
      book.watchToken(result.event.noToken)
    }
    decoded++
  }
  return { decoded, seconds: (performance.now() - started) / 1000 }
}
run() // warm-up, and discovers every token
const { decoded, seconds } = run()
console.log(
  `fixed-layout decoder: ${decoded} logs in ${seconds.toFixed(3)} s = ${Math.round(decoded / seconds).toLocaleString("en")} logs/s`
)

const sample = logs.slice(0, 20_000)
const started = performance.now()
let viemDecoded = 0
for (const log of sample) {
  const kinds = book.kindsOf(log.address)
  const entry = kinds && decodeLog(kinds, log)?.entry
  if (!entry) continue
  decodeEventLog({ abi: [entry.abi], topics: log.topics as [Hex, ...Array<Hex>], data: log.data as Hex })
  viemDecoded++
}
const viemSeconds = (performance.now() - started) / 1000
console.log(`viem decodeEventLog (sample): ${Math.round(viemDecoded / viemSeconds).toLocaleString("en")} logs/s`)
