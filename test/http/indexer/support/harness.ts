/**
 * The indexer API as clients meet it: a scratch Postgres database with the committed fixture
 * indexed into it and its display metadata seeded, served over real HTTP on a loopback port.
 *
 * `get` checks every answer against the OpenAPI document the server publishes at
 * /api/openapi.json: the status must be documented for the operation, the body must validate
 * against that status's JSON Schema, and the freshness header must be there. A test that passes
 * therefore also shows that the published document describes the answer.
 */
import { HttpServer } from "@effect/platform"
import { Context, Effect, Exit, Layer, Logger, LogLevel, Option, Redacted, Scope } from "effect"
import { indexerServerLayer } from "../../../../http/indexer/api.js"
import { AnswerCache, type HeadCache } from "../../../../http/indexer/response-cache.js"
import { pgClientLayer } from "../../../../src/db/database.js"
import { seedDisplayMetadataFrom } from "../../../../src/display-metadata.js"
import { fixtureDatabaseUrl } from "../../../support/fixture-db.js"
import { query } from "../../../support/postgres.js"
import { JsonSchemaValidator } from "./json-schema.js"

export interface Answer {
  readonly status: number
  readonly body: any
  readonly headers: Headers
}

type OpenApiDocument = {
  readonly paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }> }> }>
  >
} & Record<string, unknown>

export interface Harness {
  readonly url: string
  readonly dbUrl: string
  readonly headBlock: number
  readonly document: OpenApiDocument
  /** GET `path` (with its query), checked against the published document. */
  readonly get: (path: string) => Promise<Answer>
  /** GET without the document check (for the document itself, the docs page, hostile paths). */
  readonly raw: (path: string) => Promise<Response>
  /** Rows of a query on the fixture database (expected values computed independently). */
  readonly sql: <R extends Record<string, any> = Record<string, any>>(text: string, values?: Array<unknown>) => Promise<Array<R>>
  /** The server's answer cache (null when off). */
  readonly cache: HeadCache | null
  readonly close: () => Promise<void>
}

/** The operation of the document whose path template matches `pathname` (GET only). */
export const operationFor = (document: OpenApiDocument, pathname: string) => {
  for (const [template, item] of Object.entries(document.paths)) {
    const pattern = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]*")}$`)
    if (pattern.test(pathname) && item["get"] !== undefined) return { template, operation: item["get"] }
  }
  return undefined
}

/** Checks an answer against the document; returns the problems (empty when it conforms). */
export const conformance = (document: OpenApiDocument, pathname: string, answer: Answer): Array<string> => {
  const problems: Array<string> = []
  const block = answer.headers.get("x-indexed-block")
  if (block === null || !/^(none|0|[1-9][0-9]*)$/.test(block)) problems.push(`missing or malformed X-Indexed-Block header: ${block}`)
  const found = operationFor(document, pathname)
  if (found === undefined) {
    // Not an operation: only the NotFound error body is acceptable.
    if (answer.status !== 404 || answer.body?.error !== "NotFound" || typeof answer.body?.message !== "string") {
      problems.push(`${pathname} is no documented path, yet answered ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`)
    }
    return problems
  }
  const response = found.operation.responses[String(answer.status)]
  if (response === undefined) return [...problems, `${found.template}: status ${answer.status} is not documented`]
  const schema = response.content?.["application/json"]?.schema
  if (schema === undefined) return [...problems, `${found.template}: status ${answer.status} documents no JSON body`]
  const validator = new JsonSchemaValidator(document)
  return [...problems, ...validator.errors(answer.body, schema).map((p) => `${found.template} ${answer.status}: ${p}`)]
}

export const startHarness = async (options: { readonly cacheBytes?: number } = {}): Promise<Harness> => {
  const scope = Effect.runSync(Scope.make())
  const quiet = Logger.withMinimumLogLevel(LogLevel.Warning)
  try {
    const fixture = await Effect.runPromise(Scope.extend(fixtureDatabaseUrl, scope).pipe(quiet))
    const database = pgClientLayer(Redacted.make(fixture.url))
    await Effect.runPromise(seedDisplayMetadataFrom().pipe(Effect.provide(database), quiet))
    const server = indexerServerLayer(130, { port: 0, host: "127.0.0.1", ...options }).pipe(Layer.provide(database))
    const context = await Effect.runPromise(Layer.buildWithScope(server, scope).pipe(quiet))
    const address = Context.get(context, HttpServer.HttpServer).address
    if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
    const url = `http://127.0.0.1:${address.port}`
    const raw = (path: string) => fetch(`${url}${path}`)
    const document = (await (await raw("/api/openapi.json")).json()) as OpenApiDocument
    const get = async (path: string): Promise<Answer> => {
      const response = await raw(path)
      const text = await response.text()
      let body: unknown
      try {
        body = JSON.parse(text)
      } catch {
        throw new Error(`GET ${path}: answered ${response.status} with a body that is not JSON: ${text.slice(0, 200)}`)
      }
      const answer = { status: response.status, body, headers: response.headers }
      const problems = conformance(document, new URL(path, url).pathname, answer)
      if (problems.length > 0)
        throw new Error(`GET ${path} does not conform to the published OpenAPI document:\n${problems.slice(0, 20).join("\n")}`)
      return answer
    }
    return {
      url,
      dbUrl: fixture.url,
      headBlock: fixture.headNumber,
      document,
      get,
      raw,
      sql: async <R extends Record<string, any>>(text: string, values: Array<unknown> = []) =>
        (await Effect.runPromise(query(fixture.url, text, values))).rows as Array<R>,
      cache: Option.getOrNull(Context.getOption(context, AnswerCache))?.cache ?? null,
      close: () => Effect.runPromise(Scope.close(scope, Exit.void))
    }
  } catch (error) {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    throw error
  }
}
