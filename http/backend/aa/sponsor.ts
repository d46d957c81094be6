/**
 * The verifying paymaster's signer, behind both POST /api/aa/paymaster/sponsor (REST) and
 * ERC-7677's pm_getPaymasterData (`paymaster-rpc.ts`): one `sponsor` checks the policy
 * (`sponsor-policy.ts`), simulates the execution (`simulation.ts`), charges the session's smart
 * account's daily budget, and signs. ERC-7677's pm_getPaymasterStubData is `stub`: the same
 * checks, an unusable signature, no charge.
 *
 * Invariants:
 * - nothing is charged or signed for an operation the policy refuses or whose execution would
 *   revert (or run out of its callGasLimit): the refusal carries the mapped revert code
 *   (SLIPPAGE_EXCEEDED, INSUFFICIENT_BALANCE, MARKET_PAUSED, MARKET_NOT_FOUND), or
 *   VALIDATION_FAILED for another revert, with the raw revert in details;
 * - a stub is never a valid sponsorship: its signature's r is above the curve order, so the
 *   paymaster's recover answers address(0) (SIG_VALIDATION_FAILED, as estimation expects);
 * - the budget is charged before anything is signed, by one INSERT .. ON CONFLICT DO UPDATE whose
 *   WHERE keeps spent <= budget, so concurrent requests cannot overspend it (the row lock
 *   serialises them; a refused charge changes nothing);
 * - the validity window starts at the chain's latest block time (what the EntryPoint compares
 *   with) and lasts `validitySeconds` <= 600; validUntil is never 0 (0 would mean forever);
 * - the signer key is held Redacted and never logged; the signed hash is protocol-facts section
 *   5's layout (`paymasterHash` of schema/protocol/aa.ts, tested equal to the contract's getHash), signed
 *   as an EIP-191 message.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Redacted } from "effect"
import type { Address, Hex } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { encodePaymasterAndData, encodePaymasterData, paymasterHash } from "../../../schema/protocol/aa.js"
import { Forbidden, IndexerUnavailable, RateLimitExceeded, ValidationFailed } from "../../../schema/errors.js"
import { capsOf, type AaOptions } from "./config.js"
import { decodeRevert, refineRevert, revertError } from "./revert-codes.js"
import type { AaChain } from "./simulation.js"
import { checkPolicy, decodeAccountCalls, maxCostWei, tokenCandidates, type UserOperation } from "./sponsor-policy.js"
import type { SessionUser } from "../auth/sessions.js"

export interface Sponsorship {
  readonly paymaster: Address
  readonly paymasterVerificationGasLimit: bigint
  readonly paymasterPostOpGasLimit: bigint
  /** abi.encode(uint48 validUntil, uint48 validAfter) ++ signature (65 bytes). */
  readonly paymasterData: Hex
  readonly paymasterAndData: Hex
  readonly validUntil: number
  readonly validAfter: number
  readonly maxCostWei: bigint
  readonly budget: { readonly limitWei: bigint; readonly spentWei: bigint; readonly operations: number }
}

/** What pm_getPaymasterStubData answers: the real paymaster and gas limits, a signature that never validates. */
export interface StubSponsorship {
  readonly paymaster: Address
  readonly paymasterVerificationGasLimit: bigint
  readonly paymasterPostOpGasLimit: bigint
  readonly paymasterData: Hex
}

/** 65 bytes whose r (all ones) is above secp256k1's order: ecrecover fails, the paymaster answers SIG_VALIDATION_FAILED. */
export const STUB_SIGNATURE = `0x${"ff".repeat(32)}${"7f".repeat(32)}1c` as Hex

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10)

export const makeSponsor = (options: AaOptions, chain: AaChain) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const caps = capsOf(options.caps)
    const signer = privateKeyToAccount(Redacted.value(options.paymasterSignerKey))

    const outcomeTokensAmong = (addresses: ReadonlyArray<string>) =>
      addresses.length === 0
        ? Effect.succeed(new Set<string>())
        : sql<{ token: string }>`select yes_token as token from market where yes_token in ${sql.in(addresses)}
            union select no_token from market where no_token in ${sql.in(addresses)}`.pipe(
            Effect.map((rows) => new Set(rows.map((r) => r.token.toLowerCase()))),
            Effect.mapError(() => new IndexerUnavailable({ message: "the database is unavailable" }))
          )

    /** Charges `cost` to `account`'s budget of the day; the day's totals, or undefined when it would overspend. */
    const charge = (account: string, cost: bigint) =>
      Effect.gen(function* () {
        const day = utcDay(yield* Clock.currentTimeMillis)
        const budget = caps.dailyBudgetWei.toString()
        const rows = yield* sql<{ spent: string; operations: number }>`
          insert into sponsorship_budget as b (address, day, spent_wei, operations)
          select ${account}, ${day}::date, ${cost.toString()}::numeric, 1 where ${cost.toString()}::numeric <= ${budget}::numeric
          on conflict (address, day) do update set spent_wei = b.spent_wei + excluded.spent_wei, operations = b.operations + 1
            where b.spent_wei + excluded.spent_wei <= ${budget}::numeric
          returning spent_wei::text as spent, operations`
        const row = rows[0]
        if (row !== undefined) return { spentWei: BigInt(row.spent), operations: row.operations }
        const held = yield* sql<{
          spent: string
        }>`select spent_wei::text as spent from sponsorship_budget where address = ${account} and day = ${day}::date`
        return { refused: true as const, spentWei: BigInt(held[0]?.spent ?? "0") }
      }).pipe(Effect.mapError(() => new IndexerUnavailable({ message: "the database is unavailable" })))

    /**
     * The policy's and the simulation's verdict on `op` for `user`: the session's smart account and
     * the latest block (the window's start), or the refusal. `callGas`: the gas the simulation gives
     * the account's execution (the operation's callGasLimit; a stub's may still be 0).
     */
    const admit = (op: UserOperation, user: SessionUser, callGas: bigint) =>
      Effect.gen(function* () {
        if (user.smartAccount === null || user.owner === null) {
          return yield* new Forbidden({
            message: "sponsorship is for smart-account sessions: sign in with a passkey or ECDSA (/api/aa/auth/...)"
          })
        }
        const calls = decodeAccountCalls(op.callData) ?? []
        const outcomeTokens = yield* outcomeTokensAmong(tokenCandidates(calls, options.protocol))
        const refusal = checkPolicy(op, {
          account: user.smartAccount,
          owner: user.owner,
          accountFactory: options.accountFactory,
          ecdsaAccountFactory: options.ecdsaAccountFactory,
          protocol: options.protocol,
          outcomeTokens,
          caps
        })
        if (refusal !== undefined) {
          if (refusal._tag === "NotYourAccount") return yield* new Forbidden({ message: refusal.message })
          if (refusal._tag === "NotSponsored") return yield* new Forbidden({ message: refusal.message, details: refusal.details })
          return yield* new ValidationFailed({ message: refusal.message, details: refusal.details })
        }
        const block = yield* chain.latestBlock
        const simulated = yield* chain.simulate(op, callGas, block)
        if (simulated._tag === "DeployReverts") {
          return yield* new ValidationFailed({
            message: "the operation's account deployment (factory, factoryData) would revert",
            details: [
              { path: "factoryData", message: simulated.reason },
              { path: "revert", message: simulated.data }
            ]
          })
        }
        if (simulated._tag === "Reverts") {
          const decoded = decodeRevert(simulated.data)
          if (decoded !== undefined) {
            const revert = yield* refineRevert(decoded, chain.marketExists)
            return yield* revertError(revert, `the operation would revert with ${revert.error}: not sponsored`)
          }
          return yield* new ValidationFailed({
            message: `the operation would revert (${simulated.reason}) with callGasLimit ${callGas}: not sponsored`,
            details: [
              { path: "callData", message: simulated.reason },
              { path: "revert", message: simulated.data }
            ]
          })
        }
        return { account: user.smartAccount, chainTime: Number(block.timestamp) }
      })

    /** ERC-7677 stub data: `admit`, nothing charged, a signature that never validates (for estimation only). */
    const stub = (op: UserOperation, user: SessionUser) =>
      Effect.gen(function* () {
        const { chainTime } = yield* admit(op, user, op.callGasLimit === 0n ? caps.maxCallGas : op.callGasLimit)
        return {
          paymaster: options.paymaster.toLowerCase() as Address,
          paymasterVerificationGasLimit: caps.paymasterVerificationGas,
          paymasterPostOpGasLimit: caps.paymasterPostOpGas,
          paymasterData: encodePaymasterData({ validUntil: chainTime + caps.validitySeconds, validAfter: chainTime }, STUB_SIGNATURE)
        } satisfies StubSponsorship
      })

    const sponsor = (op: UserOperation, user: SessionUser) =>
      Effect.gen(function* () {
        const admitted = yield* admit(op, user, op.callGasLimit)
        const cost = maxCostWei(op, caps)
        const validAfter = admitted.chainTime
        const validUntil = validAfter + caps.validitySeconds
        const charged = yield* charge(admitted.account, cost)
        if ("refused" in charged) {
          return yield* new RateLimitExceeded({
            message: `the daily sponsorship budget of ${admitted.account} is spent: ${charged.spentWei} of ${caps.dailyBudgetWei} wei used, this operation may cost ${cost}`,
            details: [
              { path: "budget.limitWei", message: caps.dailyBudgetWei.toString() },
              { path: "budget.spentWei", message: charged.spentWei.toString() },
              { path: "maxCostWei", message: cost.toString() }
            ]
          })
        }
        const window = { validUntil, validAfter }
        const hash = paymasterHash(
          {
            ...op,
            paymasterVerificationGasLimit: caps.paymasterVerificationGas,
            paymasterPostOpGasLimit: caps.paymasterPostOpGas,
            signature: "0x"
          },
          options.chainId,
          options.paymaster,
          window
        )
        const signature = yield* Effect.promise(() => signer.signMessage({ message: { raw: hash } }))
        const paymasterData = encodePaymasterData(window, signature)
        const paymasterAndData = encodePaymasterAndData({
          paymaster: options.paymaster,
          verificationGasLimit: caps.paymasterVerificationGas,
          postOpGasLimit: caps.paymasterPostOpGas,
          window,
          signature
        })
        yield* Effect.logInfo("paymaster: sponsored").pipe(
          Effect.annotateLogs({
            sender: admitted.account,
            nonce: op.nonce.toString(),
            max_cost_wei: cost.toString(),
            valid_until: validUntil
          })
        )
        return {
          paymaster: options.paymaster.toLowerCase() as Address,
          paymasterVerificationGasLimit: caps.paymasterVerificationGas,
          paymasterPostOpGasLimit: caps.paymasterPostOpGas,
          paymasterData,
          paymasterAndData,
          validUntil,
          validAfter,
          maxCostWei: cost,
          budget: { limitWei: caps.dailyBudgetWei, spentWei: charged.spentWei, operations: charged.operations }
        } satisfies Sponsorship
      })

    return { sponsor, stub, signerAddress: signer.address.toLowerCase() as Address, caps }
  })

export type SponsorService = Effect.Effect.Success<ReturnType<typeof makeSponsor>>
