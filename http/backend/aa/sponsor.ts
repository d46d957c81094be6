/**
 * The verifying paymaster's signer: POST /api/aa/paymaster/sponsor checks the policy
 * (`sponsor-policy.ts`), charges the session's smart account's daily budget, and signs.
 *
 * Invariants:
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
import { createPublicClient, http, type Address, type Hex } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { encodePaymasterAndData, encodePaymasterData, paymasterHash } from "../../../schema/protocol/aa.js"
import { Forbidden, IndexerUnavailable, RateLimitExceeded, ValidationFailed } from "../../../schema/errors.js"
import { capsOf, type AaOptions } from "./config.js"
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

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10)

export const makeSponsor = (options: AaOptions) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const caps = capsOf(options.caps)
    const signer = privateKeyToAccount(Redacted.value(options.paymasterSignerKey))
    const chain = createPublicClient({ transport: http(options.rpcUrl, { retryCount: 1, timeout: 10_000 }) })

    const chainTime = Effect.tryPromise({
      try: () => chain.getBlock({ blockTag: "latest" }),
      catch: () => new IndexerUnavailable({ message: "the chain's RPC did not answer: the sponsorship window could not be set" })
    }).pipe(Effect.map((block) => Number(block.timestamp)))

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

    const sponsor = (op: UserOperation, user: SessionUser) =>
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
        const cost = maxCostWei(op, caps)
        const validAfter = yield* chainTime
        const validUntil = validAfter + caps.validitySeconds
        const charged = yield* charge(user.smartAccount, cost)
        if ("refused" in charged) {
          return yield* new RateLimitExceeded({
            message: `the daily sponsorship budget of ${user.smartAccount} is spent: ${charged.spentWei} of ${caps.dailyBudgetWei} wei used, this operation may cost ${cost}`,
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
            sender: user.smartAccount,
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

    return { sponsor, signerAddress: signer.address.toLowerCase() as Address, caps }
  })

export type SponsorService = Effect.Effect.Success<ReturnType<typeof makeSponsor>>
