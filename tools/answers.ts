/**
 * Answers before and after a refactor: a fixed set of GET requests sent to two running services,
 * their answers recorded and compared byte for byte (issue 29: "the same requests answer
 * byte-identically before and after, except where a fix is named").
 *
 *   npx tsx tools/answers.ts plan    --indexer URL --backend URL > plan.json
 *   npx tsx tools/answers.ts record  --indexer URL --backend URL --plan plan.json > answers.jsonl
 *   npx tsx tools/answers.ts compare before.jsonl after.jsonl
 *
 * `plan` builds the request list from one service: every GET path of both OpenAPI documents, its
 * path parameters filled with ids the service itself lists (markets, events, users, orders,
 * transactions), each with no query, with paging, with every value of each enumerated query
 * parameter, and with a few malformed values (so error answers are compared too). The plan is
 * then sent, unchanged, to every service compared: a document that changed between versions does
 * not change what is asked.
 *
 * `record` sends each request twice in a row (the first answer computed, the second from the
 * cache when the route caches) and records status, content type and body of both. Bodies are
 * compared as sent, except the backend's `meta.timestamp` and `meta.reqId` (the clock and a
 * random id). Health, readiness, version and metrics paths are left out (they describe the process, not
 * the index), and so are the sign-in paths (each challenge is a fresh nonce). Both services must serve the same frozen chain (`CHAIN=fixture`), fully
 * indexed, with rate limits off (`RATE_LIMIT_PUBLIC_PER_MINUTE=0 RATE_LIMIT_PER_DAY=0`).
 */
import * as fs from "node:fs"

interface Request {
  readonly api: "indexer" | "backend"
  readonly path: string
}

interface Answer {
  readonly api: string
  readonly path: string
  readonly status: number
  readonly type: string
  readonly body: string
}

const argument = (name: string): string => {
  const at = process.argv.indexOf(`--${name}`)
  const value = at === -1 ? undefined : process.argv[at + 1]
  if (value === undefined) throw new Error(`missing --${name}`)
  return value.replace(/\/$/, "")
}

const SKIPPED = /\/(health|ready|version|metrics)\b|\/docs\b|openapi|\/ws\b|\/api\/(auth|aa)\//

const getJson = async (url: string): Promise<any> => {
  const response = await fetch(url)
  if (!response.ok) throw new Error(`${url}: ${response.status}`)
  return response.json()
}

/** Values of one field over a list answer's rows (first `count` distinct). */
const valuesOf = async (url: string, field: string, count: number): Promise<Array<string>> => {
  const body = await getJson(url).catch(() => ({ data: [] }))
  const rows: Array<Record<string, unknown>> = Array.isArray(body.data) ? body.data : (body.data?.items ?? [])
  const seen = new Set<string>()
  for (const row of rows) {
    const value = row[field]
    if (value !== undefined && value !== null) seen.add(String(value))
    if (seen.size === count) break
  }
  return [...seen]
}

/** Sample values for each path parameter name, read from the indexer's own lists. */
const samples = async (indexer: string): Promise<Record<string, Array<string>>> => {
  const markets = await valuesOf(`${indexer}/api/markets?limit=100`, "id", 100)
  const pick = (list: Array<string>, n: number) => list.filter((_, i) => i % Math.max(1, Math.floor(list.length / n)) === 0).slice(0, n)
  const marketIds = pick(markets, 6)
  const events = await valuesOf(`${indexer}/api/events?limit=20`, "id", 3)
  const users = await valuesOf(`${indexer}/api/user-stats?limit=5`, "address", 5)
  const orders = await valuesOf(`${indexer}/api/exchange/orders?limit=3`, "orderId", 3)
  const oracles = await valuesOf(`${indexer}/api/oracles/approved?limit=3`, "oracle", 3)
  const trades = await valuesOf(`${indexer}/api/markets/${marketIds[0] ?? 1}/trades?limit=20`, "txHash", 2)
  const slugs = await valuesOf(`${indexer}/api/markets?limit=100`, "slug", 3)
  const malformedId = ["0", "%zz", "abc", "1e3", "-1", "99999999"]
  const address = [...users, "0x0000000000000000000000000000000000000001", "0xZZ", "nope"]
  return {
    id: [...marketIds, ...malformedId.slice(0, 3)],
    marketId: [...marketIds, ...malformedId],
    idOrSlug: [...marketIds.slice(0, 3), ...slugs, "no-such-slug", "%zz"],
    eventId: [...events, "0", "abc"],
    slug: [...slugs, "no-such-slug"],
    address,
    user: address,
    trader: address,
    wallet: address,
    orderId: [...orders, `0x${"0".repeat(64)}`, "0x12"],
    txHash: [...trades, `0x${"0".repeat(64)}`, "bad"],
    hash: [...trades, "bad"],
    notificationId: ["1", "abc"],
    oracleContract: [...oracles, "0xZZ"]
  }
}

/** The query variants of one operation: none, paging, each enum value, a few malformed values. */
const queryVariants = (parameters: ReadonlyArray<any>): Array<string> => {
  const query = parameters.filter((parameter) => parameter.in === "query")
  const variants = [""]
  for (const parameter of query) {
    const schema = parameter.schema ?? {}
    const name = encodeURIComponent(parameter.name)
    const enumValues: Array<unknown> = schema.enum ?? schema.anyOf?.flatMap((option: any) => option.enum ?? []) ?? []
    for (const value of enumValues.slice(0, 8)) variants.push(`${name}=${encodeURIComponent(String(value))}`)
    if (parameter.name === "limit") variants.push("limit=2", "limit=2&offset=1", "limit=0", "limit=abc", "limit=100000")
    else if (parameter.name === "offset") variants.push("offset=3")
    else if (enumValues.length === 0) variants.push(`${name}=1`, `${name}=%00`)
  }
  variants.push("unknownParameter=1", "__proto__=1")
  return [...new Set(variants)]
}

const plan = async () => {
  const indexer = argument("indexer")
  const backend = argument("backend")
  const values = await samples(indexer)
  const requests: Array<Request> = []
  for (const [api, base] of [
    ["indexer", indexer],
    ["backend", backend]
  ] as const) {
    const document = await getJson(`${base}/api/openapi.json`)
    for (const [template, operations] of Object.entries<any>(document.paths ?? {})) {
      const operation = operations.get
      if (operation === undefined || SKIPPED.test(template)) continue
      const parameters: Array<any> = [...(operations.parameters ?? []), ...(operation.parameters ?? [])]
      const names = [...template.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!)
      // Path parameter combinations: each name's samples in turn, the others at their first value.
      const fills: Array<Record<string, string>> = []
      if (names.length === 0) fills.push({})
      for (const name of names) {
        for (const value of values[name] ?? ["1"]) {
          fills.push(Object.fromEntries(names.map((other) => [other, other === name ? value : (values[other]?.[0] ?? "1")])))
        }
      }
      const variants = queryVariants(parameters)
      for (const [index, fill] of fills.entries()) {
        const path = template.replace(/\{([^}]+)\}/g, (_, name: string) => fill[name]!)
        // Every query variant on the first fill; the rest with no query (the list stays in the hundreds).
        for (const query of index === 0 ? variants : [""]) requests.push({ api, path: query === "" ? path : `${path}?${query}` })
      }
    }
  }
  process.stdout.write(JSON.stringify([...new Map(requests.map((r) => [`${r.api} ${r.path}`, r])).values()], null, 1) + "\n")
  process.stderr.write(`${requests.length} requests planned\n`)
}

/** The body with the backend's clock and request id taken out. */
const normalized = (body: string): string => {
  try {
    const json = JSON.parse(body)
    if (json !== null && typeof json === "object" && json.meta !== null && typeof json.meta === "object") {
      delete json.meta.timestamp
      delete json.meta.reqId
    }
    return JSON.stringify(json)
  } catch {
    return body
  }
}

const record = async () => {
  const bases = { indexer: argument("indexer"), backend: argument("backend") }
  const requests: Array<Request> = JSON.parse(fs.readFileSync(argument("plan"), "utf8"))
  for (const request of requests) {
    for (const round of ["first", "again"]) {
      const response = await fetch(`${bases[request.api]}${request.path}`)
      const answer: Answer & { round: string } = {
        api: request.api,
        path: request.path,
        round,
        status: response.status,
        type: response.headers.get("content-type") ?? "",
        body: normalized(await response.text())
      }
      process.stdout.write(JSON.stringify(answer) + "\n")
    }
  }
}

const compare = () => {
  const [beforeFile, afterFile] = process.argv.slice(3)
  if (beforeFile === undefined || afterFile === undefined) throw new Error("compare needs two answer files")
  const read = (file: string) =>
    new Map(
      fs
        .readFileSync(file, "utf8")
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line))
        .map((answer) => [`${answer.api} ${answer.path} (${answer.round})`, answer])
    )
  const before = read(beforeFile)
  const after = read(afterFile)
  let same = 0
  const differing: Array<string> = []
  for (const [key, old] of before) {
    const now = after.get(key)
    if (now === undefined) differing.push(`${key}: missing after`)
    else if (old.status === now.status && old.type === now.type && old.body === now.body) same++
    else differing.push(`${key}: ${old.status} -> ${now.status}\n  before ${old.body.slice(0, 300)}\n  after  ${now.body.slice(0, 300)}`)
  }
  process.stdout.write(`${same} of ${before.size} answers identical, ${differing.length} differ\n${differing.join("\n")}\n`)
}

const command = process.argv[2]
if (command === "plan") await plan()
else if (command === "record") await record()
else if (command === "compare") compare()
else {
  process.stderr.write("usage: answers plan|record|compare (see the file's comment)\n")
  process.exitCode = 2
}
