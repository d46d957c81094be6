/**
 * Property: whatever a client sends to any backend path (hostile strings, huge numbers, unicode,
 * SQL metacharacters, unknown or repeated parameters, random JSON bodies), the backend never
 * answers 5xx; an error is `{ error, code, message, details? }` with a code of the closed set
 * (or NOT_FOUND), and every answer conforms to the published OpenAPI document. Operations and
 * their parameters come from that document, so a later endpoint is fuzzed without touching this.
 */
import fc from "fast-check"
import { mnemonicToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { BACKEND_ERROR_CODES } from "../../../schema/errors.js"
import { DEVNET_MNEMONIC, type Anvil } from "../../../tools/devnet/anvil.js"
import { aaOptionsFor, startAddressFactoryChain } from "./support/address-factory.js"
import { conformance, startHarness, type Harness } from "./support/harness.js"

let api: Harness
let anvil: Anvil
/** A session of a fixture trader: operations that need one are fuzzed with and without it, and
 * so are the comment and notification paths (their POST and PATCH bodies too). */
let session: string
const SESSION_PATHS = /^\/api\/(notifications|markets\/\{idOrSlug\}\/comments)/
beforeAll(async () => {
  // The AA endpoints configured: a chain with the factory's getAddress, anvil as the JSON-RPC upstream of the bundler proxy.
  const chain = await startAddressFactoryChain()
  anvil = chain.anvil
  api = await startHarness({ aa: aaOptionsFor(anvil.url, chain.factory) })
  const account = mnemonicToAccount(DEVNET_MNEMONIC, { addressIndex: 9 })
  const challenge = await api.get(`/api/auth/challenge?address=${account.address}`)
  const signature = await account.signMessage({ message: challenge.body.data.message })
  const verify = await api.call("POST", "/api/auth/verify", { body: { address: account.address, signature } })
  session = verify.headers
    .getSetCookie()
    .find((c) => c.startsWith("predix_session="))!
    .split(";")[0]!
}, 120_000)
afterAll(async () => {
  await api?.close()
  await anvil?.stop()
})

const USER = "0xa0ee7a142d267c1f36714e4a8f75612f20a79720"
const CODES = new Set<string>([...BACKEND_ERROR_CODES, "NOT_FOUND"])

const VALID: Record<string, ReadonlyArray<string>> = {
  idOrSlug: ["1", "15", "29", `0x${"0".repeat(62)}0f`, "eth-above-4000-jan-31-2026", "nope"],
  marketId: ["1", "11", `0x${"0".repeat(63)}b`],
  eventIdOrSlug: ["1", "2", "league-final-2026-winner"],
  eventId: ["1", "2"],
  outcomeSlug: ["yes", "no", "x"],
  address: [USER, "0x000000000000000000000000000000000000dead"],
  trader: [USER],
  orderId: [`0x${"ab".repeat(32)}`],
  txHash: [`0x${"0".repeat(64)}`],
  limit: ["1", "20", "100"],
  offset: ["0", "3", "1000"],
  q: ["eth", "%", "'"],
  commentId: ["1", "2", "999999999", "9223372036854775807", "9223372036854775808"],
  parentId: ["1", "2", "999999999"],
  id: ["1", "2", "999999999", "9223372036854775808"],
  unread: ["true", "false"],
  category: ["crypto", "sports"],
  ref: ["zzzzzzzz", "abc"]
}

const hostile: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "'",
    "';--",
    "1 OR 1=1",
    "%",
    "_",
    "NULL",
    "__proto__",
    "../../etc/passwd",
    "",
    " ",
    "-1",
    "1e400",
    "0x10",
    `0x${"f".repeat(64)}`,
    `0x${"0".repeat(64)}`,
    "９",
    "😀",
    "\u0000",
    "\ud800"
  ),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.bigInt({ min: -(1n << 300n), max: 1n << 300n }).map(String),
  fc.double().map(String),
  fc.constantFrom("a".repeat(3000), "9".repeat(500))
)

type Parameter = {
  readonly name: string
  readonly in: "path" | "query"
  readonly schema: { readonly enum?: ReadonlyArray<string>; readonly type?: string }
}
type Operation = {
  readonly method: string
  readonly template: string
  readonly parameters: ReadonlyArray<Parameter>
  readonly secured: boolean
}

const operationsOf = (): Array<Operation> =>
  Object.entries(api.document.paths).flatMap(([template, item]) =>
    Object.entries(item as Record<string, { parameters?: Array<Parameter>; security?: Array<unknown> }>).map(([method, op]) => ({
      method: method.toUpperCase(),
      template,
      parameters: (op.parameters ?? []) as ReadonlyArray<Parameter>,
      secured: (op.security ?? []).length > 0
    }))
  )

const valueFor = (parameter: Parameter): fc.Arbitrary<string> => {
  const valid =
    parameter.schema.enum ?? (parameter.schema.type === "boolean" ? ["true", "false"] : undefined) ?? VALID[parameter.name] ?? []
  return valid.length === 0 ? hostile : fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...valid) }, { weight: 3, arbitrary: hostile })
}

const encode = (value: string): string => {
  try {
    return encodeURIComponent(value)
  } catch {
    return [...value].map((c) => (/[\ud800-\udfff]/.test(c) ? "%ED%A0%80" : encodeURIComponent(c))).join("")
  }
}

/** Bodies: near-valid quotes and batches with one field spoiled, and arbitrary JSON. */
const body: fc.Arbitrary<unknown> = fc.oneof(
  fc.record(
    {
      tradeType: fc.oneof(fc.constantFrom("BUY_YES", "SELL_YES", "BUY_NO", "SELL_NO"), hostile),
      amountIn: fc.oneof(fc.constantFrom("1", "10.5", "0.001", "1000000", "99999999999"), hostile, fc.integer()),
      slippageBps: fc.option(fc.oneof(fc.integer({ min: -5, max: 20_000 }), fc.double()), { nil: undefined }),
      maxFills: fc.option(fc.integer({ min: -1, max: 30 }), { nil: undefined }),
      address: fc.option(fc.oneof(fc.constant(USER), hostile), { nil: undefined })
    },
    { requiredKeys: [] }
  ),
  fc.record(
    {
      marketIds: fc.array(fc.oneof(fc.constantFrom("1", "2", `0x${"0".repeat(63)}3`), hostile), { maxLength: 60 }),
      timeframe: fc.option(fc.oneof(fc.constant("1h"), hostile), { nil: undefined })
    },
    { requiredKeys: [] }
  ),
  fc.record(
    {
      body: fc.oneof(
        fc.constantFrom("hello", "<script>alert(1)</script>", "x".repeat(2_001), "😀".repeat(2_000), "\u0000", " "),
        hostile,
        fc.integer()
      ),
      parentId: fc.option(fc.oneof(fc.constantFrom("1", "2", "0", "-1"), hostile, fc.integer()), { nil: undefined }),
      status: fc.option(fc.oneof(fc.constantFrom("deleted", "hidden", "visible"), hostile), { nil: undefined })
    },
    { requiredKeys: [] }
  ),
  fc.record(
    {
      jsonrpc: fc.oneof(fc.constant("2.0"), hostile),
      id: fc.oneof(fc.integer(), hostile, fc.constant(null)),
      method: fc.oneof(
        fc.constantFrom(
          "eth_chainId",
          "eth_supportedEntryPoints",
          "eth_getUserOperationByHash",
          "eth_sendUserOperation",
          "eth_estimateUserOperationGas",
          "eth_sendRawTransaction",
          "debug_bundler_clearState",
          "pimlico_getUserOperationGasPrice",
          "pm_getPaymasterStubData",
          "pm_getPaymasterData"
        ),
        hostile
      ),
      params: fc.oneof(fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }), fc.jsonValue({ maxDepth: 1 }))
    },
    { requiredKeys: [] }
  ),
  fc.record({
    response: fc.record(
      {
        id: hostile,
        rawId: hostile,
        type: fc.oneof(fc.constant("public-key"), hostile),
        response: fc.record(
          { clientDataJSON: hostile, attestationObject: hostile, authenticatorData: hostile, signature: hostile },
          { requiredKeys: [] }
        )
      },
      { requiredKeys: [] }
    )
  }),
  fc.constant({}),
  fc.jsonValue({ maxDepth: 3 })
)

const requestTo = (operation: Operation) => {
  const pathParams = operation.parameters.filter((p) => p.in === "path")
  const queryParams = operation.parameters.filter((p) => p.in === "query")
  return fc
    .record({
      path: fc.tuple(...pathParams.map(valueFor)),
      query: fc.subarray(queryParams).chain((chosen) => fc.tuple(...chosen.map((p) => valueFor(p).map((v) => [p.name, v] as const)))),
      extra: fc.option(
        fc.tuple(fc.oneof(fc.constantFrom(...queryParams.map((p) => p.name), "x", "limit"), fc.string({ maxLength: 8 })), hostile),
        { freq: 4 }
      ),
      body:
        operation.method === "POST" || operation.method === "PATCH"
          ? fc.oneof(body, fc.constantFrom("{not json", "", "[]", "null"))
          : fc.constant(undefined),
      // Not every secured POST: a signed-in logout would end the shared session.
      signedIn:
        SESSION_PATHS.test(operation.template) || (operation.secured && operation.method === "GET") ? fc.boolean() : fc.constant(false)
    })
    .map(({ path, query, extra, body, signedIn }) => {
      let i = 0
      const pathname = operation.template.replace(/\{[^}]+\}/g, () => encode(path[i++] ?? ""))
      const pairs = [...query, ...(extra === null ? [] : [extra])]
      const search = pairs.map(([k, v]) => `${encode(k)}=${encode(v)}`).join("&")
      return { method: operation.method, url: search === "" ? pathname : `${pathname}?${search}`, body, signedIn }
    })
}

const check = async (request: {
  method: string
  url: string
  body: unknown
  signedIn?: boolean
}): Promise<{ status: number; problems: Array<string> }> => {
  const headers: Record<string, string> = {
    ...(request.body === undefined ? {} : { "content-type": "application/json" }),
    ...(request.signedIn === true ? { cookie: session } : {})
  }
  const response = await api.raw(request.url, {
    method: request.method,
    headers,
    ...(request.body === undefined ? {} : { body: typeof request.body === "string" ? request.body : JSON.stringify(request.body) })
  })
  const text = await response.text()
  const where = `${request.method} ${request.url} ${JSON.stringify(request.body)?.slice(0, 200)}`
  let parsed: any
  try {
    parsed = JSON.parse(text)
  } catch {
    return { status: response.status, problems: [`${where}: ${response.status} with a body that is not JSON: ${text.slice(0, 120)}`] }
  }
  const problems: Array<string> = []
  if (response.status >= 500) problems.push(`${where}: answered ${response.status} ${text.slice(0, 300)}`)
  if (response.status >= 400 && (!CODES.has(parsed?.code) || parsed.error !== parsed.code || typeof parsed.message !== "string")) {
    problems.push(`${where}: error body not {error, code, message}: ${text.slice(0, 200)}`)
  }
  if (response.headers.get("x-request-id") === null) problems.push(`${where}: no X-Request-Id`)
  const pathname = new URL(request.url, api.url).pathname
  problems.push(
    ...conformance(api.document, request.method, pathname, { status: response.status, body: parsed, headers: response.headers }).map(
      (p) => `${where}: ${p}`
    )
  )
  return { status: response.status, problems }
}

describe("fuzzing every backend path", () => {
  it("never answers 5xx, always the error shape, always the published document", async () => {
    const operations = operationsOf().filter((o) => o.template !== "/api/openapi.json")
    expect(operations.length).toBeGreaterThanOrEqual(27)
    const statuses = new Map<number, number>()
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...operations).chain(requestTo), async (request) => {
        const { status, problems } = await check(request)
        statuses.set(status, (statuses.get(status) ?? 0) + 1)
        expect(problems).toEqual([])
      }),
      { numRuns: Number(process.env["FUZZ_RUNS"] ?? 1_500), seed: Number(process.env["FUZZ_SEED"] ?? 20261125), endOnFailure: true }
    )
    // The run reaches every kind of answer (else the property above would hold vacuously). With
    // the fixed seed, 404s are few (9 of 1,500 since the JSON-RPC routes and sign-in forms joined
    // the document): most generated ids are malformed (400) rather than unknown.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(100)
    expect(statuses.get(400) ?? 0).toBeGreaterThan(100)
    expect(statuses.get(404) ?? 0).toBeGreaterThan(5)
    expect([...statuses.keys()].every((s) => s < 500)).toBe(true)
  }, 300_000)

  it("hostile raw paths are 404 or 400 with the error body, never 5xx", async () => {
    for (const path of [
      "/api/markets/%zz",
      "/api/markets/%00",
      "/api/markets/1%2F2",
      "/api/markets//trades",
      "/api/markets/1/trades/extra",
      "/api/markets?limit=%ff%fe",
      "/api/markets?limit=1&limit=2",
      "/api/markets/",
      "/api//markets",
      `/api/markets/${"9".repeat(10_000)}`
    ]) {
      const { status, problems } = await check({ method: "GET", url: path, body: undefined })
      expect(problems).toEqual([])
      expect([400, 404]).toContain(status)
    }
  })
})
