/**
 * How the backend reads a request target, once, with the indexer's parser and route table
 * (`http/core/request-target.ts`, `http/core/route-table.ts`), so no spelling of a request can be
 * checked one way and routed or cached another. Two stages around the guard (`guard.ts`):
 *
 * 1. `canonicalTarget` (before the guard): the target is parsed and the router, the guard and the
 *    handlers are handed its canonical URL. So `/api/auth/%76erify` is the sign-in path for the
 *    guard's cross-site and rate-limit rules too, and `/api/markets/%zz` reaches its handler
 *    (an invalid market id, 400) instead of failing to route.
 * 2. `checkedRequest` (after the guard, so a refused request still counts against the limits),
 *    for a request that names an endpoint:
 *    - text the database cannot hold is refused before any query: percent-encoding that is not
 *      UTF-8, a NUL or an unpaired surrogate in a path or query parameter (VALIDATION_FAILED, or
 *      INVALID_ADDRESS / INVALID_MARKET_ID for a parameter holding one);
 *    - the path and query parameters are decoded by the endpoint's own schemas into a record with
 *      no prototype: `?__proto__=1` is an unknown parameter (400) like any other;
 *    - a JSON body is read and checked once (`json-body.ts`): malformed, too deeply nested or
 *      holding text the database cannot hold is VALIDATION_FAILED; HttpApi then decodes the
 *      same text (the request caches it);
 *    - the request's answer key (its decoded parameters, canonical: `answerKey`) is what the
 *      answer cache keys on (`respond.ts`): every spelling of one request is one entry.
 */
import { HttpServerRequest } from "@effect/platform"
import type { HttpApp } from "@effect/platform"
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import { Effect, Either, FiberRef, Option, type SchemaAST } from "effect"
import { InvalidAddress, InvalidMarketId, ValidationFailed } from "../../../schema/errors.js"
import { parameterCode } from "../../core/params.js"
import { parseTarget, type RequestTarget } from "../../core/request-target.js"
import { routeTable, type MatchedRequest } from "../../core/route-table.js"
import { textProblem } from "../../core/text.js"
import { BackendApi } from "../definition.js"
import { checkJsonBody } from "./json-body.js"

const TABLE = routeTable(BackendApi)

/** The target of the current request as parsed by `canonicalTarget`. */
const parsedTarget = FiberRef.unsafeMake<RequestTarget | undefined>(undefined)

/** The canonical answer key of the current request (undefined: it names no endpoint; never cached). */
export const answerKey = FiberRef.unsafeMake<string | undefined>(undefined)

const shown = (text: string) => JSON.stringify(text.length > 80 ? `${text.slice(0, 77)}...` : text)

/** Stage 1: the request handed on with its canonical URL. */
export const canonicalTarget = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const target = parseTarget(request.url)
    if (target === undefined) return app
    return app.pipe(
      Effect.provideService(HttpServerRequest.HttpServerRequest, request.modify({ url: target.url })),
      Effect.locally(parsedTarget, target)
    )
  })

/**
 * A parameter of the endpoint whose text the database cannot hold: INVALID_ADDRESS or
 * INVALID_MARKET_ID when its name holds one (`http/core/params.ts`, as the indexer answers the
 * same text), else VALIDATION_FAILED.
 */
const badText = (name: string, message: string, problem: string) => {
  const code = parameterCode(name)
  if (code === "INVALID_ADDRESS") return new InvalidAddress({ message: `invalid address: ${message}` })
  if (code === "INVALID_MARKET_ID") return new InvalidMarketId({ message: `invalid market id: ${message}` })
  return new ValidationFailed({ message, details: [{ path: name, message: problem }] })
}

/** Names of the fields of a query schema (a struct, possibly refined or with defaults). */
const fieldNames = (ast: SchemaAST.AST): ReadonlyArray<string> => {
  switch (ast._tag) {
    case "TypeLiteral":
      return ast.propertySignatures.map((signature) => String(signature.name))
    case "Refinement":
      return fieldNames(ast.from)
    case "Transformation":
      return fieldNames(ast.from)
    default:
      return []
  }
}

/** The first parameter of `target` (matched as `params`) whose text the database cannot hold. */
const textFailure = (target: RequestTarget, matched: MatchedRequest) => {
  if (!target.utf8) {
    return new ValidationFailed({
      message: "the request target holds percent-encoded bytes that are not UTF-8",
      details: [{ path: "", message: "percent-encoding is not UTF-8" }]
    })
  }
  for (const [name, value] of Object.entries(matched.params)) {
    const problem = textProblem(value)
    if (problem !== undefined) return badText(name, `path parameter ${name} ${problem}`, problem)
  }
  // A query parameter the endpoint does not take is unknown whatever its name: VALIDATION_FAILED.
  const fields: ReadonlyArray<string> = Option.match(matched.route.querySchema, {
    onNone: () => [],
    onSome: (schema) => fieldNames(schema.ast)
  })
  for (const [name, value] of target.query) {
    const nameProblem = textProblem(name)
    const problem = nameProblem ?? textProblem(value)
    if (problem !== undefined) {
      const message = `query parameter ${nameProblem === undefined ? shown(name) : "(a parameter name)"} ${problem}`
      return nameProblem === undefined && fields.includes(name)
        ? badText(name, message, problem)
        : new ValidationFailed({ message, details: [{ path: name, message: problem }] })
    }
  }
  return undefined
}

const readsJson = (request: HttpServerRequest.HttpServerRequest) => {
  const type = request.headers["content-type"]?.toLowerCase()
  // HttpApi reads a body without a content type as JSON.
  return type === undefined || type.includes("json")
}

/** Stage 2: parameters and body checked, the answer key set, for a request that names an endpoint. */
export const checkedRequest = <E, R>(
  app: HttpApp.Default<E, R>
): HttpApp.Default<E | ValidationFailed | InvalidAddress | InvalidMarketId | HttpApiDecodeError, R | HttpServerRequest.HttpServerRequest> =>
  Effect.gen(function* () {
    const target = yield* FiberRef.get(parsedTarget)
    const request = yield* HttpServerRequest.HttpServerRequest
    const matched = target === undefined ? undefined : TABLE.match(request.method, target)
    // A target that names no endpoint is the router's to refuse (404).
    if (target === undefined || matched === undefined) return yield* app
    const refused = textFailure(target, matched)
    if (refused !== undefined) return yield* Effect.fail(refused)
    const decoded = TABLE.decode(matched, target)
    if (Either.isLeft(decoded)) return yield* HttpApiDecodeError.refailParseError(decoded.left)
    if (matched.route.hasPayload && request.method !== "GET" && request.method !== "HEAD" && readsJson(request)) {
      const text = yield* Effect.mapError(
        request.text,
        () =>
          new ValidationFailed({
            message: "the request body could not be read (over the size limit, or cut off)",
            details: [{ path: "", message: "unreadable body" }]
          })
      )
      const body = checkJsonBody(text)
      if (!body.ok) return yield* new ValidationFailed({ message: body.problem, details: [{ path: body.path, message: body.problem }] })
    }
    return yield* Effect.locally(app, answerKey, TABLE.key(matched, decoded.right))
  })
