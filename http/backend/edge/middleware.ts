/**
 * What wraps every backend request, here and nowhere else:
 *
 * - a request id: `X-Request-Id` echoed when the client sent a sane one (1-128 of
 *   `[A-Za-z0-9._:-]`, so it can never break a header or the JSON it is copied into), else a new
 *   UUID; handlers put it in `meta.reqId`, and every response, errors included, carries it;
 * - every failure as the spec's body `{ error, code, message, details? }` with the code's status:
 *   a parameter the endpoint's schemas reject is INVALID_ADDRESS / INVALID_MARKET_ID when the
 *   parameter names an address or a market id, else VALIDATION_FAILED with one `{ path, message }`
 *   per problem; a database outage that escaped the breaker is INDEXER_UNAVAILABLE, a statement the
 *   database refused for a value the request carried (SQLSTATE class 22, `http/core/sql-failure.ts`)
 *   is VALIDATION_FAILED, any other refused statement a bug; an unknown
 *   route is a 404 `NOT_FOUND` with the same body; anything else is a bug, logged with its cause
 *   and answered 500 `INTERNAL_ERROR` without a stack trace.
 */
import { Headers, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import type { HttpApp } from "@effect/platform"
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import { SqlError } from "@effect/sql/SqlError"
import { Cause, Effect, Option } from "effect"
import { backendErrorStatus, type BackendErrorCode, type ErrorDetail } from "../../../schema/errors.js"
import { parameterCode } from "../../core/params.js"
import { isDatabaseOutage, isRefusedValue } from "../../core/sql-failure.js"
import { NotFound } from "../errors.js"
import { REQUEST_ID_HEADER } from "../respond.js"
import { systemFailureResponse } from "../system/api.js"

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** Codes outside the spec's closed set, for answers no route gives: an unknown route, a bug. */
export type RouteErrorCode = "NOT_FOUND" | "INTERNAL_ERROR"

const errorResponse = (status: number, code: BackendErrorCode | RouteErrorCode, message: string, details?: ReadonlyArray<ErrorDetail>) =>
  HttpServerResponse.unsafeJson({ error: code, code, message, ...(details === undefined ? {} : { details }) }, { status })

const describeDecodeError = (error: HttpApiDecodeError) => {
  const details = error.issues.map((issue) => ({
    path: issue.path.map(String).join("."),
    message: issue._tag === "Unexpected" ? `unknown field ${JSON.stringify(issue.path.at(-1))}: ${issue.message}` : issue.message
  }))
  // An unknown field that happens to be called "address" is a validation failure, not a bad
  // address; so is a missing one (nothing is malformed).
  const issue = error.issues[0]
  const first = issue === undefined || issue._tag === "Unexpected" || issue._tag === "Missing" ? undefined : issue.path[0]
  // The parameter's kind, and so the code, follows from its name alone (`http/core/params.ts`).
  const name = first === undefined ? "" : String(first)
  const code = parameterCode(name)
  if (code === "INVALID_ADDRESS")
    return errorResponse(400, code, `invalid address ${JSON.stringify(name)}: ${details[0]?.message}`, details)
  if (code === "INVALID_MARKET_ID")
    return errorResponse(400, code, `invalid market id ${JSON.stringify(name)}: ${details[0]?.message}`, details)
  return errorResponse(
    400,
    "VALIDATION_FAILED",
    details.length === 0
      ? `malformed request: ${error.message}`
      : details.map((d) => `${d.path === "" ? "body" : d.path}: ${d.message}`).join("; "),
    details
  )
}

const isBackendError = (
  u: unknown
): u is { readonly code: BackendErrorCode; readonly message: string; readonly details?: ReadonlyArray<ErrorDetail> } =>
  typeof u === "object" &&
  u !== null &&
  "code" in u &&
  typeof u.code === "string" &&
  Object.hasOwn(backendErrorStatus, u.code) &&
  "message" in u

const requestLine = (request: HttpServerRequest.HttpServerRequest) => {
  const path = request.url.split("?")[0] ?? request.url
  return `${request.method} ${path.length > 200 ? `${path.slice(0, 200)}...` : path}`
}

/** The 400 of a statement the database refused for a value of the request (a missed input check: logged). */
const refusedValue = (error: SqlError, line: string) =>
  Effect.logWarning("the database refused a value of the request").pipe(
    Effect.annotateLogs({ request: line, error: String((error.cause as { message?: unknown } | undefined)?.message ?? error.message) }),
    Effect.as(
      errorResponse(400, "VALIDATION_FAILED", "a value of the request is not one the database can hold or compare", [
        { path: "", message: "value refused by the database" }
      ])
    )
  )

/** The message of the read routing's refusal during an upgrade ("building: ...", "superseded: ..."), if `failure` is one. */
const upgradeRefusal = (failure: unknown): string | undefined => {
  const message = (failure as { _tag?: unknown; message?: unknown } | null)?.message
  return typeof message === "string" && /^(building|superseded):/.test(message) ? message : undefined
}

const render = (failure: unknown, line: string): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  if (failure instanceof HttpApiDecodeError) return Effect.succeed(describeDecodeError(failure))
  if (isRefusedValue(failure)) return refusedValue(failure, line)
  if (failure instanceof NotFound) return Effect.succeed(errorResponse(404, "NOT_FOUND", failure.message))
  const system = systemFailureResponse(failure)
  if (system !== undefined) return Effect.succeed(system)
  if (isBackendError(failure))
    return Effect.succeed(errorResponse(backendErrorStatus[failure.code], failure.code, failure.message, failure.details))
  const tag = typeof failure === "object" && failure !== null && "_tag" in failure ? failure._tag : undefined
  if (tag === "RouteNotFound")
    return Effect.succeed(errorResponse(404, "NOT_FOUND", `no route ${line}; the API is described at /api/openapi.json`))
  if (tag === "RequestError")
    return Effect.succeed(
      errorResponse(400, "VALIDATION_FAILED", "the request body could not be read", [{ path: "", message: "unreadable body" }])
    )
  if ((failure instanceof SqlError && isDatabaseOutage(failure)) || tag === "ServiceUnavailable") {
    return Effect.logWarning("indexer read failed").pipe(
      Effect.as(
        errorResponse(
          503,
          "INDEXER_UNAVAILABLE",
          // A refusal of the read routing (an upgrade in progress: "building", "superseded") says why.
          upgradeRefusal(failure) ?? "the indexer's database is unavailable"
        )
      )
    )
  }
  return Effect.logError("unexpected failure").pipe(
    Effect.annotateLogs({ request: line, failure: String(failure) }),
    Effect.as(errorResponse(500, "INTERNAL_ERROR", "internal error"))
  )
}

/** Request id in, error bodies out, request id on every response. */
export const backendMiddleware = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<never, R | HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const given = request.headers[REQUEST_ID_HEADER]
    const reqId = given !== undefined && SANE_REQUEST_ID.test(given) ? given : crypto.randomUUID()
    const withId = given === reqId ? request : request.modify({ headers: Headers.set(request.headers, REQUEST_ID_HEADER, reqId) })
    const line = requestLine(request)
    return app.pipe(
      Effect.catchAllCause((cause) => {
        const failure = Cause.failureOption(cause)
        if (Option.isSome(failure)) return render(failure.value, line)
        if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
        // HttpApi dies with the RequestError of a body that is not JSON: the client's fault.
        const defect = Cause.dieOption(cause)
        if (Option.isSome(defect) && isRefusedValue(defect.value)) return refusedValue(defect.value, line)
        if (Option.isSome(defect) && (defect.value as { _tag?: unknown } | null)?._tag === "RequestError") {
          return Effect.succeed(
            errorResponse(400, "VALIDATION_FAILED", "the request body is not valid JSON", [{ path: "", message: "not valid JSON" }])
          )
        }
        return Effect.logError("defect").pipe(
          Effect.annotateLogs({ request: line, cause: Cause.pretty(cause) }),
          Effect.as(errorResponse(500, "INTERNAL_ERROR", "internal error"))
        )
      }),
      Effect.provideService(HttpServerRequest.HttpServerRequest, withId),
      Effect.map((response) => HttpServerResponse.setHeader(response, REQUEST_ID_HEADER, reqId))
    )
  })
