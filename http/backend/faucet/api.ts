/**
 * The faucet group (handlers: `handlers.ts`): POST /api/faucet [auth] sends test USDC and a
 * little ETH to the session user's smart account, once per address ever; GET /api/faucet/status
 * tells whether an address (a smart account or its owner) has claimed.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { BackendItem } from "../../../schema/envelopes.js"
import { IndexerUnavailable, InsufficientBalance, InvalidAddress, RateLimitExceeded } from "../../../schema/errors.js"
import { Money } from "../../../schema/primitives.js"
import { RequireUser } from "../auth/api.js"
import { AddressString, strictQuery } from "../../core/params.js"

/**
 * `nextClaimAt` of an address that has claimed: one claim per address ever (beta rule 1), so
 * the end of time as a unix timestamp (9999-12-31T23:59:59Z); 0 for an address that may claim.
 */
export const NEVER_AGAIN = 253_402_300_799

/** The body must be exactly `{}`. */
export const FaucetBody = Schema.Record({ key: Schema.String, value: Schema.Unknown }).pipe(
  Schema.filter((body) => Object.keys(body).length === 0 || "the body must be the empty JSON object {}"),
  Schema.annotations({ identifier: "FaucetClaimBody", description: "exactly {}" })
)

export const FaucetClaim = Schema.Struct({
  address: Schema.String.annotations({
    description: "the session user's smart account (the factory's counterfactual address for the owner), lowercase"
  }),
  txHash: Schema.String.annotations({ description: "the transfer's transaction hash" }),
  eth: Money,
  usdc: Money,
  nextClaimAt: Schema.Int.annotations({
    description: `when the address may claim again, unix seconds: ${NEVER_AGAIN} (never; one claim per address)`
  })
}).annotations({ identifier: "FaucetClaimResult" })

export const FaucetStatus = Schema.Struct({
  address: Schema.String.annotations({ description: "the address asked about, lowercase" }),
  claimed: Schema.Boolean,
  claimedAddress: Schema.NullOr(Schema.String).annotations({
    description: "the smart account the claim paid (the asked address, or the account it owns)"
  }),
  claimedAt: Schema.NullOr(Schema.Int).annotations({ description: "unix seconds" }),
  txHash: Schema.NullOr(Schema.String),
  confirmed: Schema.Boolean.annotations({ description: "the transfer's receipt was seen" }),
  nextClaimAt: Schema.Int.annotations({ description: `0 when the address may claim; ${NEVER_AGAIN} (never) once it has` })
}).annotations({ identifier: "FaucetStatus" })

export class FaucetGroup extends HttpApiGroup.make("faucet")
  .add(
    HttpApiEndpoint.post("claim", "/api/faucet")
      .setPayload(FaucetBody)
      .addSuccess(BackendItem(FaucetClaim))
      .addError(RateLimitExceeded.wire)
      .addError(InsufficientBalance.wire)
      .addError(IndexerUnavailable.wire)
      .middleware(RequireUser)
      .annotate(
        OpenApi.Summary,
        "Sends 10,000 test USDC and a little ETH (FAUCET_ETH) to the session user's smart account, once per address ever; waits for the receipt. A second claim: RATE_LIMIT_EXCEEDED with claimedAt and txHash in details. The faucet's own wallet too low to pay (dry): INSUFFICIENT_BALANCE, the claim released. Faucet not configured (no FAUCET_PRIVATE_KEY) or its chain unreachable: INDEXER_UNAVAILABLE (503), the message says which"
      )
  )
  .add(
    HttpApiEndpoint.get("status", "/api/faucet/status")
      .setUrlParams(strictQuery({ address: AddressString }))
      .addSuccess(BackendItem(FaucetStatus))
      .addError(InvalidAddress.wire)
      .addError(IndexerUnavailable.wire)
      .annotate(
        OpenApi.Summary,
        "Whether an address (a smart account, or the owner of one) has claimed: when, the transaction, nextClaimAt"
      )
  ) {}
