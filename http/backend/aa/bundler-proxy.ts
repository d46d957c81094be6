/**
 * POST /api/aa/bundler: a JSON-RPC proxy to the ERC-4337 bundler (BUNDLER_URL). It speaks
 * JSON-RPC 2.0 only (`json-rpc.ts`): every answer, refusals included, is HTTP 200 with a JSON-RPC
 * result or error object, so viem and permissionless see typed RPC errors.
 *
 * - One call per request: a batch (a JSON array) is refused with -32600, so every call passes the
 *   rate limits, the allow-list and the session check on its own.
 * - Allowed methods only (`ALLOWED_METHODS`); any other is -32601, a request that is not a
 *   JSON-RPC 2.0 call -32600.
 * - eth_sendUserOperation needs a smart-account session (AUTH_REQUIRED / AUTH_INVALID: 4100) and
 *   its sender must be the session's smart account (FORBIDDEN: -32003); `error.data.code` names it.
 * - The bundler's answer, results and errors alike, comes back unchanged; except an estimation or
 *   send that failed on a known protocol revert (`revert-codes.ts`): the bundler's error code
 *   (ERC-7769's -32521), with `data` {code (SLIPPAGE_EXCEEDED, INSUFFICIENT_BALANCE, MARKET_PAUSED,
 *   MARKET_NOT_FOUND), revert (the raw revert data), error (decoded), bundler (its own error),
 *   details}.
 * - The body size limit is the guard's (`guard.ts`, BODY_LIMITS); rate limits too (those two
 *   answer before any JSON-RPC is read: HTTP 429 / 400, which viem retries or reports as such).
 */
import { Effect } from "effect"
import { IndexerUnavailable, type AuthInvalid, type AuthRequired } from "../../../schema/errors.js"
import { decodeBundlerError, refineRevert, revertError } from "./revert-codes.js"
import type { SessionUser } from "../auth/sessions.js"
import { EXECUTION_REVERTED, METHOD_NOT_FOUND, isAnswer, readCall, rpcError, rpcErrorOf, type Id, type RpcAnswer } from "./json-rpc.js"

export const ALLOWED_METHODS = [
  "eth_sendUserOperation",
  "eth_estimateUserOperationGas",
  "eth_getUserOperationByHash",
  "eth_getUserOperationReceipt",
  "eth_supportedEntryPoints",
  "eth_chainId",
  // permissionless's default fee estimator (createSmartAccountClient without userOperation.estimateFeesPerGas)
  "pimlico_getUserOperationGasPrice"
] as const

const ALLOWED: ReadonlySet<string> = new Set(ALLOWED_METHODS)
/** Calls whose failure can be a protocol revert the apps should see as a code. */
const SIMULATING: ReadonlySet<string> = new Set(["eth_sendUserOperation", "eth_estimateUserOperationGas"])

export type SessionCheck = Effect.Effect<SessionUser, AuthRequired | AuthInvalid | IndexerUnavailable>

export const makeBundlerProxy = (
  bundler: string | Effect.Effect<string, { readonly message: string }>,
  /** Whether the chain knows a market (MarketNotTradable of an unknown one is MARKET_NOT_FOUND). */
  marketExists: (marketId: bigint) => Effect.Effect<boolean, unknown>
) => {
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

  /** Answers one JSON-RPC request (never fails: refusals are JSON-RPC errors); `session` is asked only for sends. */
  const forward = (body: unknown, session: SessionCheck): Effect.Effect<RpcAnswer | unknown> => {
    const call = readCall(body)
    if (isAnswer(call)) return Effect.succeed(call)
    const { id, method, params } = call
    if (!ALLOWED.has(method))
      return Effect.succeed(
        rpcError(
          id,
          METHOD_NOT_FOUND,
          `method ${method.slice(0, 64)} is not available through this proxy; allowed: ${ALLOWED_METHODS.join(", ")}`
        )
      )
    return Effect.gen(function* () {
      if (method === "eth_sendUserOperation") {
        const user = yield* session
        const sender = (params[0] as { sender?: unknown } | undefined)?.sender
        if (user.smartAccount === null)
          return rpcErrorOf(id, {
            code: "FORBIDDEN",
            message: "sending user operations needs a smart-account session: sign in with a passkey or ECDSA (/api/aa/auth/...)"
          })
        if (typeof sender !== "string" || sender.toLowerCase() !== user.smartAccount)
          return rpcErrorOf(id, {
            code: "FORBIDDEN",
            message: `the operation's sender ${String(sender).slice(0, 64)} is not the session's smart account ${user.smartAccount}`
          })
      }
      const answer = yield* post({ jsonrpc: "2.0", id, method, params })
      const error = (answer as { error?: unknown } | null)?.error
      if (error === undefined || !SIMULATING.has(method)) return answer
      const decoded = decodeBundlerError(error)
      if (decoded === undefined) return answer
      const revert = yield* refineRevert(decoded, marketExists)
      const message = (error as { message?: unknown }).message
      const bundlerText = typeof message === "string" ? message.slice(0, 2_000) : JSON.stringify(error).slice(0, 2_000)
      const typed = revertError(revert, `the operation would revert with ${revert.error}`, [{ path: "bundler", message: bundlerText }])
      const code = (error as { code?: unknown }).code
      return rpcErrorOf(
        id,
        typed,
        { revert: revert.data, error: revert.error, bundler: error },
        typeof code === "number" ? code : EXECUTION_REVERTED
      )
    }).pipe(Effect.catchAll((refusal) => Effect.succeed(rpcErrorOf(id, refusal))))
  }

  return { forward }
}
