/**
 * POST /api/aa/bundler: a JSON-RPC proxy to the ERC-4337 bundler (BUNDLER_URL).
 *
 * - One call per request: a batch (a JSON array) is refused with a JSON-RPC error, so every call
 *   passes the rate limits, the allow-list and the session check on its own.
 * - Allowed methods only (`ALLOWED_METHODS`); any other is JSON-RPC error -32601, a request that
 *   is not a JSON-RPC 2.0 call -32600 (HTTP 200, the JSON-RPC way).
 * - eth_sendUserOperation needs a smart-account session (AUTH_REQUIRED / AUTH_INVALID 401) and its
 *   sender must be the session's smart account (FORBIDDEN 403).
 * - The bundler's answer, results and errors alike, comes back unchanged; except an estimation or
 *   send that failed on a known protocol revert (`revert-codes.ts`), which answers the spec's code
 *   (SLIPPAGE_EXCEEDED, INSUFFICIENT_BALANCE, MARKET_PAUSED) with the raw revert and the
 *   bundler's error in details.
 * - The body size limit is the guard's (`guard.ts`, BODY_LIMITS); rate limits too.
 */
import { Effect } from "effect"
import {
  AuthInvalid,
  AuthRequired,
  Forbidden,
  IndexerUnavailable,
  InsufficientBalance,
  MarketPaused,
  SlippageExceeded
} from "../../../schema/errors.js"
import { decodeBundlerError } from "./revert-codes.js"
import type { SessionUser } from "../auth/sessions.js"

export const ALLOWED_METHODS = [
  "eth_sendUserOperation",
  "eth_estimateUserOperationGas",
  "eth_getUserOperationByHash",
  "eth_getUserOperationReceipt",
  "eth_supportedEntryPoints",
  "eth_chainId"
] as const

const ALLOWED: ReadonlySet<string> = new Set(ALLOWED_METHODS)
/** Calls whose failure can be a protocol revert the apps should see as a code. */
const SIMULATING: ReadonlySet<string> = new Set(["eth_sendUserOperation", "eth_estimateUserOperationGas"])

type Id = string | number | null

const rpcError = (id: Id, code: number, message: string) => ({ jsonrpc: "2.0", id, error: { code, message } })

const idOf = (value: unknown): Id => (typeof value === "string" || typeof value === "number" || value === null ? value : null)

export type SessionCheck = Effect.Effect<SessionUser, AuthRequired | AuthInvalid | IndexerUnavailable>

export const makeBundlerProxy = (bundler: string | Effect.Effect<string, { readonly message: string }>) => {
  const bundlerUrl =
    typeof bundler === "string"
      ? Effect.succeed(bundler)
      : bundler.pipe(
          Effect.timeoutFail({ duration: "20 seconds", onTimeout: () => ({ message: "still starting" }) }),
          Effect.mapError((e) => new IndexerUnavailable({ message: `the bundler is not available: ${e.message}` }))
        )
  const post = (call: { jsonrpc: "2.0"; id: Id; method: string; params: ReadonlyArray<unknown> }) =>
    Effect.flatMap(bundlerUrl, (url) =>
      Effect.tryPromise({
        try: async () => {
          const response = await fetch(url, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(call),
            signal: AbortSignal.timeout(30_000)
          })
          const text = await response.text()
          return JSON.parse(text) as unknown
        },
        catch: (error) => new IndexerUnavailable({ message: `the bundler did not answer: ${(error as Error).message ?? String(error)}` })
      })
    )

  /** Answers one JSON-RPC request; `session` is asked only for sends. */
  const forward = (body: unknown, session: SessionCheck) =>
    Effect.gen(function* () {
      if (Array.isArray(body)) return rpcError(null, -32600, "batch requests are not supported: send one JSON-RPC call per request")
      if (body === null || typeof body !== "object") return rpcError(null, -32600, "not a JSON-RPC 2.0 request object")
      const request = body as Record<string, unknown>
      const id = idOf(request["id"])
      if (request["jsonrpc"] !== "2.0" || typeof request["method"] !== "string")
        return rpcError(id, -32600, 'not a JSON-RPC 2.0 request: jsonrpc "2.0" and a method are required')
      const method = request["method"]
      const params = request["params"] ?? []
      if (!Array.isArray(params)) return rpcError(id, -32602, "params must be an array")
      if (!ALLOWED.has(method))
        return rpcError(
          id,
          -32601,
          `method ${method.slice(0, 64)} is not available through this proxy; allowed: ${ALLOWED_METHODS.join(", ")}`
        )
      if (method === "eth_sendUserOperation") {
        const user = yield* session
        const sender = (params[0] as { sender?: unknown } | undefined)?.sender
        if (user.smartAccount === null)
          return yield* new Forbidden({
            message: "sending user operations needs a smart-account session: sign in with a passkey or ECDSA (/api/aa/auth/...)"
          })
        if (typeof sender !== "string" || sender.toLowerCase() !== user.smartAccount) {
          return yield* new Forbidden({
            message: `the operation's sender ${String(sender).slice(0, 64)} is not the session's smart account ${user.smartAccount}`
          })
        }
      }
      const answer = yield* post({ jsonrpc: "2.0", id, method, params })
      const error = (answer as { error?: unknown } | null)?.error
      if (error !== undefined && SIMULATING.has(method)) {
        const revert = decodeBundlerError(error)
        if (revert !== undefined) {
          const message = (error as { message?: unknown }).message
          const details = [
            { path: "revert", message: revert.data },
            { path: "error", message: revert.error },
            { path: "bundler", message: typeof message === "string" ? message.slice(0, 2_000) : JSON.stringify(error).slice(0, 2_000) }
          ]
          const text = `the operation would revert with ${revert.error}`
          if (revert.code === "SLIPPAGE_EXCEEDED") return yield* new SlippageExceeded({ message: text, details })
          if (revert.code === "INSUFFICIENT_BALANCE") return yield* new InsufficientBalance({ message: text, details })
          return yield* new MarketPaused({ message: text, details })
        }
      }
      return answer
    })

  return { forward }
}
