/**
 * Child of the export benchmark: the memory of loading one table `repeat` times as large.
 *
 * The export's memory that depends on table size is DuckDB's (the Postgres side holds one 1 MB
 * buffer, `csv-file.ts`). This loads the CSV of one real table, its rows repeated `repeat`
 * times, through the export's own code (`openDuckFile` with its settings, `createTableSql`,
 * `insertCsv`, the closing checkpoint) into a new DuckDB file, and prints one JSON line: rows,
 * RSS before the load, peak RSS (getrusage) and seconds. Repeated rows are fine here: DuckDB's
 * load does not look at keys (none is declared), only at row count and widths.
 *
 * Usage: tsx bench/export-load-memory.ts <database url> <table> <repeat> <work dir>
 */
import { Effect } from "effect"
import * as fs from "node:fs"
import * as Path from "node:path"
import { readCatalog } from "../src/analytics/catalog.js"
import { copyToFile } from "../src/analytics/csv-file.js"
import { closeDuckFile, createTableSql, insertCsv, openDuckFile } from "../src/analytics/duckdb-writer.js"
import { readQuery } from "../src/analytics/queries.js"
import { openSnapshot } from "../src/analytics/snapshot.js"

const [url, table, repeatText, dir] = process.argv.slice(2)
const repeat = Number(repeatText)
if (!url || !table || !dir || !Number.isSafeInteger(repeat) || repeat < 1) {
  console.error("usage: export-load-memory.ts <database url> <table> <repeat> <work dir>")
  process.exit(2)
}

const csv = Path.join(dir, `${table}.csv`)
const plan = await Effect.runPromise(
  Effect.scoped(
    Effect.gen(function* () {
      const [db] = yield* openSnapshot(url)
      return yield* Effect.promise(async () => {
        const plan = (await readCatalog(db!)).find((p) => p.name === table)
        if (plan === undefined) throw new Error(`no table ${table}`)
        await copyToFile(db!, readQuery(plan, { upTo: Number.MAX_SAFE_INTEGER }), csv, () => undefined)
        return plan
      })
    })
  )
)
/** Appends the first `bytes` of `path` to itself, 1 MB at a time (no copy of the file held here). */
const appendPrefix = (path: string, bytes: number) => {
  const fd = fs.openSync(path, "r+")
  const buffer = Buffer.allocUnsafe(1 << 20)
  try {
    let end = fs.fstatSync(fd).size
    for (let at = 0; at < bytes;) {
      const read = fs.readSync(fd, buffer, 0, Math.min(buffer.length, bytes - at), at)
      fs.writeSync(fd, buffer, 0, read, end)
      at += read
      end += read
    }
  } finally {
    fs.closeSync(fd)
  }
}
const size = fs.statSync(csv).size
for (let i = 1; i < repeat; i++) appendPrefix(csv, size)

const out = Path.join(dir, `${table}-${repeat}.duckdb`)
const rssBefore = process.memoryUsage.rss()
const started = performance.now()
const file = await openDuckFile(out)
await file.connection.run(createTableSql(plan))
const rows = await insertCsv(file.connection, plan, csv)
await closeDuckFile(file, true)
console.log(
  JSON.stringify({
    rows,
    rss_before_mib: Math.round(rssBefore / 2 ** 20),
    peak_rss_mib: Math.round(process.resourceUsage().maxRSS / 1024),
    seconds: Number(((performance.now() - started) / 1000).toFixed(2))
  })
)
