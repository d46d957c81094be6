/**
 * JSON-RPC 2.0 for the AA endpoints (`/api/aa/bundler`, `/api/aa/paymaster`): reading one call, and
 * answering a refusal as a JSON-RPC error object, so that JSON-RPC clients (viem's transports,
 * permissionless) see a typed RPC error with its code and data instead of "HTTP request failed".
 *
 * Invariants:
 * - every answer of a JSON-RPC endpoint is HTTP 200 with `{jsonrpc: "2.0", id, result | error}`
 *   (JSON-RPC over HTTP practice); only what never reaches the method (the guard's cross-site and
 *   rate-limit refusals, a body that is not JSON or over the size limit) keeps its REST status;
 * - a refusal's `error.data.code` is the spec's closed code (SLIPPAGE_EXCEEDED, FORBIDDEN, ...) and
 *   `error.data.details` its details, exactly what the REST body would carry; `error.code` is the
 *   JSON-RPC number that clients branch on (`RPC_CODE_OF`).
 */
import type { BackendErrorCode, ErrorDetail } from "../../../schema/errors.js"

export type Id = string | number | null

export interface RpcErrorObject {
  readonly code: number
  readonly message: string
  readonly data?: unknown
}

export interface RpcAnswer {
  readonly jsonrpc: "2.0"
  readonly id: Id
  readonly result?: unknown
  readonly error?: RpcErrorObject
}

/** The JSON-RPC 2.0 codes of a request that is not a valid call. */
export const INVALID_REQUEST = -32600
export const METHOD_NOT_FOUND = -32601
export const INVALID_PARAMS = -32602
/** ERC-7769 (the bundler RPC): the user operation reverts in its execution phase. */
export const EXECUTION_REVERTED = -32521

/**
 * The JSON-RPC code of each backend code: the standard numbers viem maps to typed errors
 * (-32602 InvalidParamsRpcError, 4100 UnauthorizedProviderError, -32003 TransactionRejectedRpcError,
 * -32005 LimitExceededRpcError, -32002 ResourceUnavailableRpcError, -32001 ResourceNotFoundRpcError),
 * and ERC-7769's -32521 for a revert the simulation found. viem retries -32005 (a spent budget
 * is refused again, charging nothing).
 */
export const RPC_CODE_OF: Record<BackendErrorCode, number> = {
  VALIDATION_FAILED: INVALID_PARAMS,
  INVALID_ADDRESS: INVALID_PARAMS,
  INVALID_MARKET_ID: INVALID_PARAMS,
  AUTH_REQUIRED: 4100,
  AUTH_INVALID: 4100,
  FORBIDDEN: -32003,
  RATE_LIMIT_EXCEEDED: -32005,
  INDEXER_UNAVAILABLE: -32002,
  MARKET_NOT_FOUND: EXECUTION_REVERTED,
  MARKET_PAUSED: EXECUTION_REVERTED,
  INSUFFICIENT_BALANCE: EXECUTION_REVERTED,
  SLIPPAGE_EXCEEDED: EXECUTION_REVERTED
}

export const rpcResult = (id: Id, result: unknown): RpcAnswer => ({ jsonrpc: "2.0", id, result })

export const rpcError = (id: Id, code: number, message: string, data?: unknown): RpcAnswer => ({
  jsonrpc: "2.0",
  id,
  error: data === undefined ? { code, message } : { code, message, data }
})

/** A backend error (the closed set) as a JSON-RPC error; `extra` adds to `data` (e.g. the decoded revert). */
export const rpcErrorOf = (
  id: Id,
  error: { readonly code: BackendErrorCode; readonly message: string; readonly details?: ReadonlyArray<ErrorDetail> | undefined },
  extra: Record<string, unknown> = {},
  code: number = RPC_CODE_OF[error.code]
): RpcAnswer =>
  rpcError(id, code, error.message, {
    code: error.code,
    ...(error.details === undefined ? {} : { details: error.details }),
    ...extra
  })

/** Whether `value` is one of the closed-set backend errors (a tagged error with its code). */
export const isBackendError = (
  value: unknown
): value is { readonly code: BackendErrorCode; readonly message: string; readonly details?: ReadonlyArray<ErrorDetail> } =>
  typeof value === "object" &&
  value !== null &&
  typeof (value as { code?: unknown }).code === "string" &&
  (value as { _tag?: unknown })._tag === (value as { code?: unknown }).code

export interface RpcCall {
  readonly id: Id
  readonly method: string
  readonly params: ReadonlyArray<unknown>
}

const idOf = (value: unknown): Id => (typeof value === "string" || typeof value === "number" || value === null ? value : null)

/**
 * One JSON-RPC 2.0 call out of a request body, or the error answer for a body that is not one.
 * Batches are refused: every call passes the rate limits, the allow-list and the session check
 * on its own.
 */
export const readCall = (body: unknown): RpcCall | RpcAnswer => {
  if (Array.isArray(body)) return rpcError(null, INVALID_REQUEST, "batch requests are not supported: send one JSON-RPC call per request")
  if (body === null || typeof body !== "object") return rpcError(null, INVALID_REQUEST, "not a JSON-RPC 2.0 request object")
  const request = body as Record<string, unknown>
  const id = idOf(request["id"])
  if (request["jsonrpc"] !== "2.0" || typeof request["method"] !== "string")
    return rpcError(id, INVALID_REQUEST, 'not a JSON-RPC 2.0 request: jsonrpc "2.0" and a method are required')
  const params = request["params"] ?? []
  if (!Array.isArray(params)) return rpcError(id, INVALID_PARAMS, "params must be an array")
  return { id, method: request["method"], params }
}

export const isAnswer = (value: RpcCall | RpcAnswer): value is RpcAnswer => "jsonrpc" in value
