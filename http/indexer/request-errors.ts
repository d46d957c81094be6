/**
 * Every failure of an indexer request becomes the spec's error body `{ error, message }` with a
 * PascalCase name, here and nowhere else.
 *
 * - A parameter the endpoint's schemas reject (HttpApi's `HttpApiDecodeError`) is a 400 whose
 *   name follows from the parameter (`InvalidAddress`, `InvalidMarketId`, else
 *   `InvalidParameter`, see `http/core/params.ts`) and whose message names it.
 * - An unknown path or method is a 404 `NotFound`.
 * - A typed indexer error (`MarketNotFound`, ...) keeps its name and status.
 * - A database outage that escaped a handler is a 503 `ServiceUnavailable`; a statement the
 *   database refused for a value of the request (SQLSTATE class 22, `http/core/sql-failure.ts`)
 *   is a 400 `InvalidParameter` (a missed input check, logged), never an outage.
 * - Anything else is a bug: logged with its cause, answered 500 `InternalError`, never with a
 *   stack trace. Handlers encode their own responses (see `respond.ts`), so an encoding bug is a
 *   defect here, not a misleading 400.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import type { HttpApp } from "@effect/platform"
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import type { SqlError } from "@effect/sql/SqlError"
import { Cause, Effect, Option } from "effect"
import { IndexerErrorsByName, type IndexerErrorBody } from "../../schema/errors.js"
import { isDatabaseOutage, isRefusedValue } from "../core/sql-failure.js"
import { parameterError } from "../core/params.js"

type Issue = HttpApiDecodeError["issues"][number]

const body = (status: number, error: string, message: string) =>
  HttpServerResponse.unsafeJson({ error, message } satisfies IndexerErrorBody, { status })

/** The 400 for the first rejected parameter of a request. */
export const describeDecodeError = (error: HttpApiDecodeError): { readonly error: string; readonly message: string } => {
  const issue: Issue | undefined = error.issues[0]
  const name = issue?.path[0]
  if (issue === undefined || name === undefined) return { error: "InvalidParameter", message: `malformed request: ${error.message}` }
  const parameter = String(name)
  // A client's parameter name may be 16 KiB long; the message shows its start.
  const named = JSON.stringify(parameter.length > 90 ? `${parameter.slice(0, 87)}...` : parameter)
  if (issue._tag === "Unexpected") {
    // The accepted names come from the endpoint's schema, never from the request.
    const accepted = [...issue.message.matchAll(/"([^"]+)"/g)].map((m) => m[1]).join(", ")
    return {
      error: "InvalidParameter",
      message: `unknown query parameter ${named}; ${accepted === "" ? "this endpoint takes none" : `this endpoint takes ${accepted}`}`
    }
  }
  const kind = parameterError(parameter)
  return {
    error: kind,
    message: `invalid ${kind === "InvalidParameter" ? "parameter" : kind === "InvalidAddress" ? "address" : "market id"} ${named}: ${issue.message}`
  }
}

const isIndexerError = (u: unknown): u is { readonly _tag: keyof typeof IndexerErrorsByName; readonly message: string } =>
  typeof u === "object" && u !== null && "_tag" in u && typeof u._tag === "string" && Object.hasOwn(IndexerErrorsByName, u._tag)

const refusedValue = (request: string) =>
  Effect.logWarning("the database refused a value of the request").pipe(
    Effect.annotateLogs({ request }),
    Effect.as(body(400, "InvalidParameter", "a value of the request is not one the database can hold or compare"))
  )

const render = (failure: unknown, request: string): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  if (failure instanceof HttpApiDecodeError) {
    const { error, message } = describeDecodeError(failure)
    return Effect.succeed(body(400, error, message))
  }
  if (isIndexerError(failure)) return Effect.succeed(body(IndexerErrorsByName[failure._tag].status, failure._tag, failure.message))
  const tag = typeof failure === "object" && failure !== null && "_tag" in failure ? failure._tag : undefined
  if (tag === "RouteNotFound")
    return Effect.succeed(body(404, "NotFound", `no route ${request}; the API is described at /api/openapi.json`))
  if (isRefusedValue(failure)) return refusedValue(request)
  if (tag === "SqlError" && isDatabaseOutage(failure as SqlError)) {
    return Effect.logWarning("database error").pipe(
      Effect.annotateLogs({ request, error: String((failure as { message?: unknown }).message) }),
      Effect.as(body(503, "ServiceUnavailable", "database unavailable"))
    )
  }
  return Effect.logError("unexpected failure").pipe(
    Effect.annotateLogs({ request, failure: String(failure) }),
    Effect.as(body(500, "InternalError", "internal error"))
  )
}

/** The 503 of a request this version cannot answer from the index that serves (an upgrade in progress, `read-routing.ts`). */
export const unavailableResponse = (error: { readonly message: string }) => body(503, "ServiceUnavailable", error.message)

/** Turns every failure and defect of `app` into an error response (the app then never fails). */
export const renderErrors = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<never, R> =>
  Effect.catchAllCause(app, (cause) =>
    Effect.flatMap(requestLine, (request) => {
      const failure = Cause.failureOption(cause)
      if (Option.isSome(failure)) return render(failure.value, request)
      if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
      const defect = Cause.dieOption(cause)
      if (Option.isSome(defect) && isRefusedValue(defect.value)) return refusedValue(request)
      return Effect.logError("defect").pipe(
        Effect.annotateLogs({ request, cause: Cause.pretty(cause) }),
        Effect.as(body(500, "InternalError", "internal error"))
      )
    })
  ) as HttpApp.Default<never, R>

/** `GET /api/...` of the current request, for messages and logs (the path only, no query). */
const requestLine = Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
  const path = request.url.split("?")[0] ?? request.url
  return `${request.method} ${path.length > 200 ? `${path.slice(0, 200)}...` : path}`
})
