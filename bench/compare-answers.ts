/**
 * Do two versions of the backend answer the same? Serves the backend of each source tree (two
 * checkouts, e.g. a worktree of the commit before a change and this one) on one indexed database,
 * cache off, asks both the same requests and compares status, Content-Type, Content-Length,
 * Transfer-Encoding and `data` (the envelope's `meta` holds the request id and the time, which
 * differ by design; their lengths do not) byte for byte.
 *
 * The requests are those a speed-up of the hot answers could change: the market list in every sort
 * and order, with and without event children, in each status, in Vietnamese and past the first
 * page; detail, pricing view and two quotes (a buy and a sell) of the 150 busiest markets and the
 * 50 first, and detail, view and a quote by display slug (up to 20), of an id no market has and of
 * malformed ids; the portfolios of the 300 traders with the most positions and of an address that holds
 * nothing.
 *
 * Usage: node --import tsx bench/compare-answers.ts --db <database url> --old <source dir> --new <source dir>
 * Exits 1 when any answer differs (the first few are printed).
 */
import { fork, type ChildProcess } from "node:child_process"
import * as Path from "node:path"
import pg from "pg"

const text = (name: string) => {
  const at = process.argv.indexOf(`--${name}`)
  const value = at < 0 ? undefined : process.argv[at + 1]
  if (value === undefined) throw new Error(`--${name} is required (usage in the file's comment)`)
  return value
}

interface Ask {
  readonly path: string
  readonly body?: string
}

/** The backend of the tree at `dir`, cache off, on `db` (bench/backend.ts's --serve mode of that tree). */
const serve = (dir: string, db: string) =>
  new Promise<{ base: string; child: ChildProcess }>((resolve, reject) => {
    const child = fork(Path.join(dir, "bench/backend.ts"), ["--serve", db, "0"], {
      cwd: dir,
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"]
    })
    child.once("message", (message) => resolve({ base: (message as { url: string }).url, child }))
    child.once("exit", (code) => reject(new Error(`the server of ${dir} exited with ${code}`)))
  })

const stop = (child: ChildProcess) =>
  new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(undefined)
    child.once("exit", resolve)
    child.disconnect()
  })

async function requests(db: string): Promise<ReadonlyArray<Ask>> {
  const client = new pg.Client({ connectionString: db })
  await client.connect()
  try {
    const markets = (
      await client.query<{ id: string }>(`
        (select id from market order by trade_count desc, id limit 150)
        union
        (select id from market order by id limit 50)
        order by id`)
    ).rows.map((row) => row.id)
    const traders = (
      await client.query<{ address: string }>(
        "select user_address as address from position group by user_address order by count(*) desc, user_address limit 300"
      )
    ).rows.map((row) => row.address)
    const asks: Array<Ask> = []
    for (const sortBy of ["newest", "volume", "ending_soon", "featured", "trending"])
      for (const sortOrder of ["", "&sortOrder=asc", "&sortOrder=desc"])
        for (const children of ["", "&includeEventChildren=true"])
          asks.push({ path: `/api/markets?sortBy=${sortBy}${sortOrder}${children}&limit=20` })
    for (const status of ["active", "paused", "closed", "resolved", "refunding"])
      asks.push({ path: `/api/markets?status=${status}&sortBy=volume&limit=20` })
    asks.push({ path: "/api/markets?sortBy=volume&limit=20&locale=vi" })
    asks.push({ path: "/api/markets?sortBy=volume&limit=20&offset=20" })
    asks.push({ path: "/api/markets?sortBy=newest&limit=100&offset=200&includeEventChildren=true" })
    for (const id of markets) {
      asks.push({ path: `/api/markets/${id}` })
      asks.push({ path: `/api/markets/${id}/pricing/view` })
      asks.push({ path: `/api/markets/${id}/pricing/quote`, body: JSON.stringify({ tradeType: "BUY_NO", amountIn: "25" }) })
      asks.push({
        path: `/api/markets/${id}/pricing/quote`,
        body: JSON.stringify({ tradeType: "SELL_YES", amountIn: "3.5", slippageBps: 100 })
      })
    }
    // By slug, and ids that name no market or are malformed: the lookups' other branches.
    const slugs = (
      await client.query<{ slug: string }>(
        "select slug from display_metadata where kind = 'market' and slug is not null order by id limit 20"
      )
    ).rows.map((row) => row.slug)
    for (const idOrSlug of [...slugs, "999999999", "no-such-market-1", "0x12", "%zz"]) {
      asks.push({ path: `/api/markets/${idOrSlug}` })
      asks.push({ path: `/api/markets/${idOrSlug}/pricing/view` })
      asks.push({ path: `/api/markets/${idOrSlug}/pricing/quote`, body: JSON.stringify({ tradeType: "BUY_YES", amountIn: "10" }) })
    }
    for (const address of traders) asks.push({ path: `/api/trading/${address}/portfolio` })
    asks.push({ path: "/api/trading/0x000000000000000000000000000000000000dead/portfolio" })
    return asks
  } finally {
    await client.end()
  }
}

/** Status, framing headers and `data` of one answer, as text (a body that is not the envelope is kept whole). */
async function ask(base: string, a: Ask): Promise<string> {
  const response = await fetch(
    `${base}${a.path}`,
    a.body === undefined ? {} : { method: "POST", body: a.body, headers: { "content-type": "application/json" } }
  )
  const body = await response.text()
  // Cut `"meta":` off the envelope's end rather than re-encode `data`, so its bytes are compared as sent.
  const meta = body.lastIndexOf(',"meta":')
  const data =
    body.startsWith('{"data":') && meta > 0 ? body.slice(8, meta) : body.replace(/"(reqId|requestId|timestamp)":("[^"]*"|\d+)/g, "")
  // The framing too: a raw body must keep the JSON content type and a Content-Length (never chunked).
  const framing = ["content-type", "content-length", "transfer-encoding"].map((h) => `${h}=${response.headers.get(h)}`).join(" ")
  return `${response.status} ${framing} ${data}`
}

async function main() {
  const db = text("db")
  const [before, after] = [Path.resolve(text("old")), Path.resolve(text("new"))]
  const asks = await requests(db)
  const [a, b] = [await serve(before, db), await serve(after, db)]
  try {
    let differ = 0
    const statuses = new Map<string, number>()
    for (const question of asks) {
      const [x, y] = [await ask(a.base, question), await ask(b.base, question)]
      const status = x.slice(0, 3)
      statuses.set(status, (statuses.get(status) ?? 0) + 1)
      if (x === y) continue
      differ++
      if (differ <= 5) console.log(`DIFFERS ${question.path} ${question.body ?? ""}\n  old: ${x.slice(0, 300)}\n  new: ${y.slice(0, 300)}`)
    }
    const byStatus = [...statuses].map(([s, n]) => `${n} answered ${s}`).join(", ")
    console.log(`${asks.length} requests, ${asks.length - differ} answered the same by both (${byStatus} by the old), ${differ} differ`)
    process.exitCode = differ === 0 ? 0 : 1
  } finally {
    await Promise.all([stop(a.child), stop(b.child)])
  }
}

await main()
