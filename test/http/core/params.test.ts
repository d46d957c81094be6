/**
 * One parameter vocabulary for both HTTP APIs (`http/core/params.ts`): every path and query
 * parameter that holds an address or a market id, in every operation of the indexer's and the
 * backend's published OpenAPI documents, answers a malformed value with the error its kind gives,
 * the same in both APIs (InvalidAddress / INVALID_ADDRESS, InvalidMarketId / INVALID_MARKET_ID).
 *
 * Which parameters hold an address or a market id is read from the documents (their patterns),
 * not from the name list under test: a name the list drops, or a new address parameter with a
 * name it lacks, answers InvalidParameter / VALIDATION_FAILED and fails here.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ADDRESS_PARAMETERS, MARKET_ID_PARAMETERS, PARAMETER_ERRORS, parameterKind, type ParameterKind } from "../../../http/core/params.js"
import { ADDRESS_INPUT_PATTERN } from "../../../schema/primitives.js"
import { startHarness, type Harness } from "../backend/support/harness.js"

let api: Harness
let indexerDocument: any
beforeAll(async () => {
  api = await startHarness()
  indexerDocument = await (await fetch(`${api.indexerUrl}/api/openapi.json`)).json()
}, 120_000)
afterAll(async () => {
  await api?.close()
})

const VALID: Record<Exclude<ParameterKind, "other">, string> = {
  address: "0x00000000000000000000000000000000000000aa",
  marketId: "1"
}

/** Malformed values of each kind, percent-encoded: wrong characters, wrong prefix, NUL (text no database holds). */
const BAD: Record<Exclude<ParameterKind, "other">, ReadonlyArray<string>> = {
  address: ["0xnothex", `0X${"a".repeat(40)}`, `0x${"a".repeat(41)}`, "%00"],
  marketId: ["0xnothex", "0", `0x${"0".repeat(63)}`, "%00"]
}

/** What the document says a parameter holds, by its pattern alone. */
const documentedKind = (parameter: any): ParameterKind => {
  const pattern: string = parameter.schema?.pattern ?? ""
  if (pattern === ADDRESS_INPUT_PATTERN.source) return "address"
  if (pattern.startsWith("^([1-9][0-9]*|0x[0-9a-fA-F]{64}")) return "marketId"
  return "other"
}

/** Valid values for the other path parameters of a template (an outcome slug, a comment id). */
const filler = (parameter: any): string => {
  const kind = documentedKind(parameter)
  if (kind !== "other") return VALID[kind]
  return parameter.name === "outcomeSlug" ? "yes" : "1"
}

interface Probe {
  readonly api: "indexer" | "backend"
  readonly method: string
  readonly template: string
  readonly parameter: string
  readonly in: "path" | "query"
  readonly kind: Exclude<ParameterKind, "other">
  readonly url: (bad: string) => string
}

/** Every address- or market-id-valued parameter of every operation not behind a session. */
const probesOf = (which: Probe["api"], document: any, base: string): Array<Probe> =>
  Object.entries<any>(document.paths).flatMap(([template, item]) =>
    Object.entries<any>(item).flatMap(([method, operation]) => {
      // An operation behind a session answers AUTH_REQUIRED before it reads its parameters.
      if ((operation.security ?? []).length > 0) return []
      const parameters: Array<any> = operation.parameters ?? []
      return parameters.flatMap((parameter): Array<Probe> => {
        const kind = documentedKind(parameter)
        if (kind === "other") return []
        const url = (bad: string) => {
          const path = template.replace(/\{([^}]+)\}/g, (_, name: string) =>
            name === parameter.name ? bad : filler(parameters.find((p) => p.in === "path" && p.name === name))
          )
          const required = parameters.filter((p) => p.in === "query" && p.required && p.name !== parameter.name)
          const query = [
            ...required.map((p) => `${p.name}=${filler(p)}`),
            ...(parameter.in === "query" ? [`${parameter.name}=${bad}`] : [])
          ]
          return `${base}${path}${query.length === 0 ? "" : `?${query.join("&")}`}`
        }
        return [{ api: which, method: method.toUpperCase(), template, parameter: parameter.name, in: parameter.in, kind, url }]
      })
    })
  )

/** A valid body for each operation that reads one, so only the parameter under test is wrong. */
const BODIES: Record<string, unknown> = {
  "POST /api/markets/{idOrSlug}/pricing/quote": { tradeType: "BUY_YES", amountIn: "1" }
}

const send = async (probe: Probe, bad: string) => {
  const body = BODIES[`${probe.method} ${probe.template}`]
  if (probe.method !== "GET" && body === undefined) throw new Error(`no body for ${probe.method} ${probe.template}: add one to BODIES`)
  const response = await fetch(probe.url(bad), {
    method: probe.method,
    ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
  })
  const answer: any = await response.json()
  return { status: response.status, error: probe.api === "indexer" ? answer.error : answer.code, message: answer.message as string }
}

describe("address and market-id parameters", () => {
  it("every documented address or market-id parameter has a name of that kind in the one list", () => {
    const probes = [...probesOf("indexer", indexerDocument, ""), ...probesOf("backend", api.document, "")]
    const misnamed = probes.filter((p) => parameterKind(p.parameter) !== p.kind).map((p) => `${p.api} ${p.template} ${p.in} ${p.parameter}`)
    expect(misnamed, "parameters whose name does not say what they hold").toEqual([])
    // Not vacuous: every listed name is a parameter of some operation.
    const names = new Set(probes.map((p) => p.parameter))
    expect([...ADDRESS_PARAMETERS, ...MARKET_ID_PARAMETERS].filter((name) => !names.has(name))).toEqual([])
  })

  it("a malformed value answers the error of its kind, the same in the indexer and the backend", async () => {
    const probes = [...probesOf("indexer", indexerDocument, api.indexerUrl), ...probesOf("backend", api.document, api.url)]
    // Both APIs have parameters of both kinds, in paths and in queries.
    for (const which of ["indexer", "backend"] as const)
      for (const kind of ["address", "marketId"] as const)
        for (const where of ["path", "query"] as const)
          expect(
            probes.some((p) => p.api === which && p.kind === kind && p.in === where),
            `${which} ${kind} ${where}`
          ).toBe(true)
    const wrong: Array<string> = []
    for (const probe of probes) {
      for (const bad of BAD[probe.kind]) {
        const answer = await send(probe, bad)
        const expected = PARAMETER_ERRORS[probe.kind][probe.api]
        if (answer.status !== 400 || answer.error !== expected)
          wrong.push(
            `${probe.api} ${probe.method} ${probe.template} ${probe.in} ${probe.parameter}=${bad}: ${answer.status} ${answer.error} (expected 400 ${expected}): ${answer.message}`
          )
      }
    }
    expect(wrong).toEqual([])
  }, 120_000)
})
