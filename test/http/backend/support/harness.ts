/**
 * The backend as apps meet it: a scratch copy of the indexed fixture (display metadata seeded),
 * the indexer API on one loopback port (its health feeds the backend's breaker; `stopIndexer`
 * closes it) and the backend on another.
 *
 * `call` checks every answer against the OpenAPI document the backend publishes: the status must
 * be documented for the operation and the body must validate against that status's schema; an
 * unknown route must be a 404 with the error body. A test that passes also shows the document
 * describes the answer.
 */
import { FetchHttpClient, HttpServer } from "@effect/platform"
import { Context, Effect, Exit, Layer, Logger, LogLevel, Option, Redacted, Scope } from "effect"
import { backendHttpLayer, type BackendOptions } from "../../../../http/backend/api.js"
import { BackendCache, type BackendAnswers } from "../../../../http/backend/edge/cache.js"
import { makeBackendClient, type BackendClient } from "../../../../http/backend/client.js"
import { indexerServerLayer } from "../../../../http/indexer/api.js"
import { NodeHttpServer } from "@effect/platform-node"
import { createServer } from "node:http"
import { BuildInfoLive } from "../../../../src/build-info.js"
import { pgClientLayer } from "../../../../src/db/database.js"
import { seedDisplayMetadataFrom } from "../../../../src/display-metadata.js"
import { fixtureDatabaseUrl } from "../../../support/fixture-db.js"
import { query } from "../../../support/postgres.js"
import { JsonSchemaValidator } from "../../indexer/support/json-schema.js"

export const NO_RATE_LIMITS = { publicPerMinute: 0, userPerMinute: 0, perDay: 0, authPerMinute: 0 } as const

export interface Answer {
  readonly status: number
  readonly body: any
  readonly headers: Headers
}

type OpenApiDocument = {
  readonly info: { readonly title: string; readonly version: string }
  readonly paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }> }> }>
  >
} & Record<string, unknown>

export interface CallOptions {
  readonly body?: unknown
  readonly headers?: Record<string, string>
}

export interface Harness {
  readonly url: string
  readonly indexerUrl: string
  readonly document: OpenApiDocument
  /** A request checked against the published document. */
  readonly call: (method: string, path: string, options?: CallOptions) => Promise<Answer>
  readonly get: (path: string, options?: CallOptions) => Promise<Answer>
  readonly raw: (path: string, init?: RequestInit) => Promise<Response>
  readonly sql: <R extends Record<string, any> = Record<string, any>>(text: string, values?: Array<unknown>) => Promise<Array<R>>
  /** The typed client over this backend. */
  readonly client: <A, E>(f: (client: BackendClient) => Effect.Effect<A, E>) => Promise<A>
  /** The backend's answer cache (null when off). */
  readonly cache: BackendAnswers | null
  readonly stopIndexer: () => Promise<void>
  readonly close: () => Promise<void>
}

export const operationFor = (document: OpenApiDocument, method: string, pathname: string) => {
  // Literal paths first: /api/markets/hot is not /api/markets/{idOrSlug}.
  const entries = Object.entries(document.paths).sort(([a], [b]) => (a.match(/\{/g)?.length ?? 0) - (b.match(/\{/g)?.length ?? 0))
  for (const [template, item] of entries) {
    const pattern = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{[^}]+\\?\}/g, "[^/]*")}$`)
    const operation = item[method.toLowerCase()]
    if (pattern.test(pathname) && operation !== undefined) return { template, operation }
  }
  return undefined
}

export const conformance = (document: OpenApiDocument, method: string, pathname: string, answer: Answer): Array<string> => {
  const problems: Array<string> = []
  const found = operationFor(document, method, pathname)
  if (found === undefined) {
    if (answer.status !== 404 || answer.body?.code !== "NOT_FOUND" || typeof answer.body?.message !== "string") {
      problems.push(
        `${method} ${pathname} is no documented operation, yet answered ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`
      )
    }
    return problems
  }
  const response = found.operation.responses[String(answer.status)]
  if (response === undefined)
    return [`${method} ${found.template}: status ${answer.status} is not documented (${JSON.stringify(answer.body).slice(0, 300)})`]
  const schema = response.content?.["application/json"]?.schema
  if (schema === undefined) return [`${found.template}: status ${answer.status} documents no JSON body`]
  const validator = new JsonSchemaValidator(document)
  return validator.errors(answer.body, schema).map((p) => `${method} ${found.template} ${answer.status}: ${p}`)
}

/** The loopback URL of the HTTP server a built layer listens with. */
export const tcpUrl = (context: Context.Context<HttpServer.HttpServer>) => {
  const address = Context.get(context, HttpServer.HttpServer).address
  if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
  return `http://127.0.0.1:${address.port}`
}

export const startHarness = async (options: Partial<Omit<BackendOptions, "indexerUrl">> = {}): Promise<Harness> => {
  const scope = Effect.runSync(Scope.make())
  const quiet = Logger.withMinimumLogLevel(LogLevel.Warning)
  try {
    const fixture = await Effect.runPromise(Scope.extend(fixtureDatabaseUrl, scope).pipe(quiet))
    const database = pgClientLayer(Redacted.make(fixture.url))
    await Effect.runPromise(seedDisplayMetadataFrom().pipe(Effect.provide(database), quiet))
    const indexerScope = await Effect.runPromise(Scope.fork(scope, { _tag: "Sequential" } as never))
    const indexer = indexerServerLayer(130, { port: 0, host: "127.0.0.1" }).pipe(Layer.provide(database))
    const indexerUrl = tcpUrl(await Effect.runPromise(Layer.buildWithScope(indexer, indexerScope).pipe(quiet)))
    // Tests send far more than the spec's limits allow from one address; the limits' own tests set them.
    const backend = backendHttpLayer({ chainId: 130, indexerUrl, rateLimits: NO_RATE_LIMITS, ...options }).pipe(
      Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
      Layer.provide([database, BuildInfoLive])
    )
    const context = await Effect.runPromise(Layer.buildWithScope(backend, scope).pipe(quiet))
    const url = tcpUrl(context)
    const raw = (path: string, init?: RequestInit) => fetch(`${url}${path}`, init)
    const document = (await (await raw("/api/openapi.json")).json()) as OpenApiDocument
    const call = async (method: string, path: string, callOptions: CallOptions = {}): Promise<Answer> => {
      const response = await raw(path, {
        method,
        headers: { ...(callOptions.body === undefined ? {} : { "content-type": "application/json" }), ...callOptions.headers },
        ...(callOptions.body === undefined
          ? {}
          : { body: typeof callOptions.body === "string" ? callOptions.body : JSON.stringify(callOptions.body) })
      })
      const text = await response.text()
      let body: unknown
      try {
        body = JSON.parse(text)
      } catch {
        throw new Error(`${method} ${path}: answered ${response.status} with a body that is not JSON: ${text.slice(0, 200)}`)
      }
      const answer = { status: response.status, body, headers: response.headers }
      const problems = conformance(document, method, new URL(path, url).pathname, answer)
      if (problems.length > 0)
        throw new Error(`${method} ${path} does not conform to the published OpenAPI document:\n${problems.slice(0, 20).join("\n")}`)
      return answer
    }
    return {
      url,
      indexerUrl,
      document,
      call,
      get: (path, callOptions) => call("GET", path, callOptions),
      raw,
      sql: async <R extends Record<string, any>>(text: string, values: Array<unknown> = []) =>
        (await Effect.runPromise(query(fixture.url, text, values))).rows as Array<R>,
      client: (f) =>
        Effect.runPromise(Effect.flatMap(makeBackendClient(url), f).pipe(Effect.provide(FetchHttpClient.layer)) as Effect.Effect<any, any>),
      cache: Option.getOrNull(Context.getOption(context, BackendCache))?.cache ?? null,
      stopIndexer: () => Effect.runPromise(Scope.close(indexerScope, Exit.void)),
      close: () => Effect.runPromise(Scope.close(scope, Exit.void))
    }
  } catch (error) {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    throw error
  }
}
