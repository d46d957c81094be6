/**
 * Both published OpenAPI documents, built in-process from the API definitions (as the servers
 * build them, `src/api-documents.ts`), are clean for the tools apps use on them: every schema
 * compiles with ajv in strict mode, and `@redocly/cli lint` with the recommended rules finds no
 * error. Numeric and boolean query parameters are typed as such, with their bounds (a generated
 * client sends `limit: 5`, not `limit: "5"`); `servers` is there; every operation has a summary.
 * Each check is shown to find what it looks for.
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs/promises"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import { API_NAMES, apiDocument, type OpenApiDocument } from "../../src/api-documents.js"
import { compileDocument, schemaCount } from "./openapi-json-schema.js"

const documents = Object.fromEntries(API_NAMES.map((api) => [api, apiDocument(api)])) as Record<(typeof API_NAMES)[number], OpenApiDocument>

/** A small document with `schemas` as its components and `response` as its one answer's schema. */
const tiny = (schemas: Record<string, unknown>, response: unknown = { $ref: "#/components/schemas/A" }) => ({
  openapi: "3.1.0",
  info: { title: "t", version: "1" },
  paths: { "/a": { get: { responses: { "200": { description: "ok", content: { "application/json": { schema: response } } } } } } },
  components: { schemas }
})

const operations = (document: OpenApiDocument): Array<[string, any]> =>
  Object.entries<Record<string, any>>(document["paths"]).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]): [string, any] => [`${method.toUpperCase()} ${path}`, operation])
  )

describe("the OpenAPI documents compile with ajv (JSON Schema 2020-12, strict)", () => {
  for (const api of API_NAMES) {
    it(`${api}: every schema, components and inline`, () => {
      expect(compileDocument(documents[api])).toEqual([])
      expect(schemaCount(documents[api])).toBeGreaterThan(500)
      expect(JSON.stringify(documents[api])).not.toContain('"$id"')
    })
  }

  it("the check refuses a repeated $id, an unknown keyword, an undeclared required property, a dangling $ref", () => {
    const unknown = { type: "object", additionalProperties: { $id: "/schemas/unknown", title: "unknown" } }
    expect(compileDocument(tiny({ A: unknown, B: structuredClone(unknown) })).join()).toMatch(/resolves to more than one schema/)
    expect(compileDocument(tiny({ A: { type: "string", maxlength: 3 } })).join()).toMatch(/unknown keyword: "maxlength"/)
    expect(compileDocument(tiny({ A: { type: "object", required: ["x"], properties: {} } })).join()).toMatch(/required property "x"/)
    expect(compileDocument(tiny({ A: { $ref: "#/components/schemas/Nope" } })).join()).toMatch(/can't resolve reference/)
    expect(compileDocument(tiny({ A: { type: "integer", minimum: 0 } }))).toEqual([])
  })
})

/** `@redocly/cli lint` (recommended rules) of `files` in `dir`: the errors it reports, by file. */
const redoclyErrors = async (dir: string, files: ReadonlyArray<string>): Promise<Record<string, Array<string>>> => {
  const cli = Path.join(Path.dirname(createRequire(import.meta.url).resolve("@redocly/cli/package.json")), "bin", "cli.js")
  const stdout = await new Promise<string>((resolve, reject) =>
    execFile(
      process.execPath,
      [cli, "lint", "--extends", "recommended", "--format", "json", "--max-problems", "1000", ...files],
      // No telemetry, no update check: the lint reads the files and nothing else.
      { cwd: dir, env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" }, maxBuffer: 64 << 20 },
      // It exits non-zero when it finds an error; the report is on stdout either way.
      (error, out) => (out.trim().startsWith("{") ? resolve(out) : reject(error ?? new Error(`no report: ${out}`)))
    )
  )
  // One JSON report per file, each after the other: `{...}{...}`.
  const reports = stdout
    .trim()
    .split(/(?<=^\})(?=\{$)/m)
    .map((text) => JSON.parse(text) as { problems: Array<{ ruleId: string; severity: string; message: string; location: Array<any> }> })
  expect(reports.length).toBe(files.length)
  const errors: Record<string, Array<string>> = Object.fromEntries(files.map((file) => [file, []]))
  for (const problem of reports.flatMap((report) => report.problems).filter((p) => p.severity === "error")) {
    const where = problem.location[0]
    errors[where?.source?.ref ?? "?"]?.push(`${problem.ruleId} at ${where?.pointer}: ${problem.message}`)
  }
  return errors
}

describe("@redocly/cli lint, recommended rules", () => {
  it("finds no error in either document (and finds the errors of a broken one)", async () => {
    const dir = await fs.mkdtemp(Path.join(os.tmpdir(), "openapi-lint-"))
    try {
      for (const api of API_NAMES) await fs.writeFile(Path.join(dir, `${api}.json`), JSON.stringify(documents[api]))
      // Operations without a summary, and no security stated: errors of the recommended rules.
      const broken = tiny({ A: { type: "string" } })
      await fs.writeFile(Path.join(dir, "broken.json"), JSON.stringify(broken))
      const errors = await redoclyErrors(dir, ["indexer.json", "backend.json", "broken.json"])
      expect(errors["indexer.json"]).toEqual([])
      expect(errors["backend.json"]).toEqual([])
      expect(errors["broken.json"]!.join("\n")).toMatch(/^operation-summary at #\/paths\/~1a\/get/m)
      expect(errors["broken.json"]!.join("\n")).toMatch(/^security-defined at #\/paths\/~1a\/get/m)
    } finally {
      await fs.rm(dir, { recursive: true, force: true })
    }
  }, 120_000)
})

describe("what the documents say", () => {
  it("types whole-number query parameters as integers with their bounds, true/false ones as booleans", () => {
    const typed = new Map<string, string>()
    for (const api of API_NAMES) {
      for (const [operation, { parameters = [] }] of operations(documents[api])) {
        for (const parameter of parameters.filter((p: any) => p.in === "query")) {
          const schema = parameter.schema
          const where = `${api} ${operation} ${parameter.name}`
          // No number or boolean is left documented as text.
          expect(schema.pattern, where).not.toBe("^(0|[1-9][0-9]*)$")
          expect(schema.enum, where).not.toEqual(["true", "false"])
          if (schema.type === "integer") {
            expect(Number.isSafeInteger(schema.minimum) && Number.isSafeInteger(schema.maximum), where).toBe(true)
            expect(schema.minimum, where).toBeLessThanOrEqual(schema.maximum)
          }
          typed.set(`${api} ${parameter.name}`, schema.type === "integer" ? `integer ${schema.minimum}..${schema.maximum}` : schema.type)
        }
      }
    }
    expect(typed.get("indexer limit")).toBe("integer 1..100")
    expect(typed.get("indexer offset")).toBe(`integer 0..${Number.MAX_SAFE_INTEGER}`)
    expect(typed.get("indexer window")).toBe("integer 1..720")
    expect(typed.get("indexer from")).toBe("integer 0..253402300799")
    expect(typed.get("indexer featured")).toBe("boolean")
    expect(typed.get("backend includeEventChildren")).toBe("boolean")
    expect(typed.get("backend unread")).toBe("boolean")
    expect(typed.get("backend to")).toBe("integer 0..253402300799")
  })

  it("names servers and summarizes every operation (the backend's /health, /ready, /version too)", () => {
    for (const api of API_NAMES) {
      expect(documents[api]["servers"]?.length, api).toBeGreaterThan(0)
      for (const [operation, { summary }] of operations(documents[api])) expect(summary, `${api} ${operation}`).toBeTruthy()
    }
    for (const path of ["/health", "/ready", "/version"]) expect(documents.backend["paths"][path].get.summary).toBeTruthy()
  })
})
