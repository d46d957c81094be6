/**
 * POST /api/aa/paymaster: the ERC-7677 paymaster web service (JSON-RPC 2.0), what viem's
 * `createPaymasterClient` and permissionless's `createSmartAccountClient({ paymaster })` call.
 *
 * - pm_getPaymasterStubData(userOp, entryPoint, chainId, context): the sponsor's policy and
 *   simulation (`sponsor.ts` `stub`), then the paymaster, its signed gas limits and stub data with a
 *   signature that never validates, for the bundler's estimation. Nothing is charged.
 * - pm_getPaymasterData(same): exactly POST /api/aa/paymaster/sponsor (`sponsor.ts` `sponsor`: the
 *   policy, the simulation, the atomic daily budget charged once, the signature).
 * - Both need the session cookie of a smart-account session (as the REST route); the sender must
 *   be its account. The entryPoint and chainId must be the configured ones; `context` is ignored.
 * - Every answer is JSON-RPC (HTTP 200); refusals carry the backend code in `error.data.code`.
 */
import { Effect, Either, Schema } from "effect"
import { ValidationFailed } from "../../../schema/errors.js"
import type { AuthInvalid, AuthRequired, IndexerUnavailable } from "../../../schema/errors.js"
import type { SessionUser } from "../auth/sessions.js"
import { PaymasterUserOperation } from "./api.js"
import type { AaOptions } from "./config.js"
import { METHOD_NOT_FOUND, isAnswer, readCall, rpcError, rpcErrorOf, rpcResult, type RpcAnswer } from "./json-rpc.js"
import type { SponsorService } from "./sponsor.js"
import { toUserOperation } from "./sponsor-policy.js"

export const PAYMASTER_METHODS = ["pm_getPaymasterStubData", "pm_getPaymasterData"] as const

/** The name wallets may show for the sponsor (ERC-7677 `sponsor`). */
const SPONSOR = { name: "PrediX" }

const hex = (value: bigint) => `0x${value.toString(16)}`

const decodeOperation = Schema.decodeUnknownEither(PaymasterUserOperation)

export const makePaymasterRpc = (options: Pick<AaOptions, "entryPoint" | "chainId">, sponsor: Pick<SponsorService, "sponsor" | "stub">) => {
  /** params -> the operation, or the VALIDATION_FAILED naming what is wrong. */
  const readParams = (params: ReadonlyArray<unknown>) =>
    Effect.gen(function* () {
      const decoded = decodeOperation(params[0])
      if (Either.isLeft(decoded))
        return yield* ValidationFailed.fromParseError(decoded.left, "params[0] is not an ERC-4337 v0.7 user operation")
      const entryPoint = params[1]
      if (typeof entryPoint !== "string" || entryPoint.toLowerCase() !== options.entryPoint.toLowerCase())
        return yield* new ValidationFailed({
          message: `the paymaster sponsors for EntryPoint ${options.entryPoint.toLowerCase()} only`,
          details: [{ path: "params.1", message: `not ${options.entryPoint.toLowerCase()}` }]
        })
      const chainId = params[2]
      let sameChain = false
      try {
        sameChain = (typeof chainId === "string" || typeof chainId === "number") && BigInt(chainId) === BigInt(options.chainId)
      } catch {
        sameChain = false
      }
      if (!sameChain)
        return yield* new ValidationFailed({
          message: `the paymaster sponsors on chain ${options.chainId} only`,
          details: [{ path: "params.2", message: `not ${hex(BigInt(options.chainId))}` }]
        })
      return toUserOperation(decoded.right)
    })

  /** Answers one JSON-RPC request (never fails: refusals are JSON-RPC errors). */
  const answer = (
    body: unknown,
    session: Effect.Effect<SessionUser, AuthRequired | AuthInvalid | IndexerUnavailable>
  ): Effect.Effect<RpcAnswer> => {
    const call = readCall(body)
    if (isAnswer(call)) return Effect.succeed(call)
    const { id, method, params } = call
    if (method !== "pm_getPaymasterStubData" && method !== "pm_getPaymasterData")
      return Effect.succeed(
        rpcError(id, METHOD_NOT_FOUND, `method ${method.slice(0, 64)} is not served here; methods: ${PAYMASTER_METHODS.join(", ")}`)
      )
    return Effect.gen(function* () {
      const user = yield* session
      const op = yield* readParams(params)
      if (method === "pm_getPaymasterStubData") {
        const stub = yield* sponsor.stub(op, user)
        return rpcResult(id, {
          paymaster: stub.paymaster,
          paymasterData: stub.paymasterData,
          paymasterVerificationGasLimit: hex(stub.paymasterVerificationGasLimit),
          paymasterPostOpGasLimit: hex(stub.paymasterPostOpGasLimit),
          isFinal: false,
          sponsor: SPONSOR
        })
      }
      const sponsored = yield* sponsor.sponsor(op, user)
      return rpcResult(id, {
        paymaster: sponsored.paymaster,
        paymasterData: sponsored.paymasterData,
        paymasterVerificationGasLimit: hex(sponsored.paymasterVerificationGasLimit),
        paymasterPostOpGasLimit: hex(sponsored.paymasterPostOpGasLimit)
      })
    }).pipe(Effect.catchAll((refusal) => Effect.succeed(rpcErrorOf(id, refusal))))
  }

  return { answer }
}
