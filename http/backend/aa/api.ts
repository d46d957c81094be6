/**
 * The account-abstraction group (issue 18; handlers: `handlers.ts`): passkey and ECDSA sign-in to
 * ERC-4337 smart accounts, the bundler proxy and the paymaster's sponsor endpoint.
 *
 * Passkey flow: POST .../passkey/register/challenge -> options for navigator.credentials.create;
 * POST .../passkey/register/verify with the credential -> the passkey's smart account;
 * POST .../passkey/login/challenge -> options for navigator.credentials.get;
 * POST .../passkey/login with the assertion -> the session (cookie), as SIWE's, of the smart account.
 * ECDSA flow: POST .../ecdsa/challenge {address} -> a SIWE message; POST .../ecdsa/verify with the
 * owner's signature -> the session of the owner's smart account.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { BackendItem } from "../../../schema/envelopes.js"
import {
  AuthInvalid,
  Forbidden,
  IndexerUnavailable,
  InsufficientBalance,
  InvalidAddress,
  MarketNotFound,
  MarketPaused,
  RateLimitExceeded,
  SlippageExceeded
} from "../../../schema/errors.js"
import { Challenge, RequireUser, SessionInfo, VerifyBody } from "../auth/api.js"
import { ALLOWED_METHODS } from "./bundler-proxy.js"
import { FaucetBody } from "../faucet/api.js"
import { ADDRESS_INPUT_PATTERN } from "../../../schema/primitives.js"
import { AddressString } from "../../core/params.js"

const EmptyBody = FaucetBody.annotations({ identifier: "EmptyBody", description: "exactly {}" })

const base64url = (description: string) =>
  Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9_-]*={0,2}$/), Schema.maxLength(65_536)).annotations({ description })

const hexData = (description: string) =>
  Schema.String.pipe(Schema.pattern(/^0x([0-9a-fA-F]{2})*$/), Schema.maxLength(65_538)).annotations({ description })
const quantity = (description: string) =>
  Schema.String.pipe(Schema.pattern(/^0x[0-9a-fA-F]{1,64}$/)).annotations({ description: `${description} (hex quantity)` })
/** An address field of a user operation: what the one address parser accepts (kept as sent; the bundler reads it). */
const address = (description: string) => Schema.String.pipe(Schema.pattern(ADDRESS_INPUT_PATTERN)).annotations({ description })

const Options = Schema.Record({ key: Schema.String, value: Schema.Unknown })

export const PasskeyChallenge = Schema.Struct({
  challenge: Schema.String.annotations({ description: "the challenge (32 random bytes, base64url); single use, valid 5 minutes" }),
  expiresAt: Schema.Int.annotations({ description: "unix seconds" }),
  options: Options.annotations({
    description:
      "PublicKeyCredentialCreationOptionsJSON (register) or PublicKeyCredentialRequestOptionsJSON (login): give to @simplewebauthn/browser or PublicKeyCredential.parse*OptionsFromJSON"
  })
}).annotations({ identifier: "PasskeyChallenge" })

const ClientExtensionResults = Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.Unknown }), { default: () => ({}) })

export const PasskeyRegistration = Schema.Struct({
  response: Schema.Struct({
    id: base64url("the credential id"),
    rawId: base64url("the credential id"),
    type: Schema.Literal("public-key"),
    response: Schema.Struct({
      clientDataJSON: base64url("clientDataJSON"),
      attestationObject: base64url("attestationObject"),
      transports: Schema.optional(Schema.Array(Schema.String.pipe(Schema.maxLength(32))).pipe(Schema.maxItems(8)))
    }),
    authenticatorAttachment: Schema.optional(Schema.String),
    clientExtensionResults: ClientExtensionResults
  }).annotations({
    description: "the RegistrationResponseJSON of navigator.credentials.create (as @simplewebauthn/browser's startRegistration returns it)"
  })
}).annotations({ identifier: "PasskeyRegistrationBody" })

export const PasskeyAssertion = Schema.Struct({
  response: Schema.Struct({
    id: base64url("the credential id"),
    rawId: base64url("the credential id"),
    type: Schema.Literal("public-key"),
    response: Schema.Struct({
      clientDataJSON: base64url("clientDataJSON"),
      authenticatorData: base64url("authenticatorData"),
      signature: base64url("the DER ECDSA signature"),
      userHandle: Schema.optional(base64url("the user handle"))
    }),
    authenticatorAttachment: Schema.optional(Schema.String),
    clientExtensionResults: ClientExtensionResults
  }).annotations({
    description: "the AuthenticationResponseJSON of navigator.credentials.get (as @simplewebauthn/browser's startAuthentication returns it)"
  })
}).annotations({ identifier: "PasskeyLoginBody" })

export const PasskeyRegistered = Schema.Struct({
  credentialId: Schema.String.annotations({ description: "the credential id, base64url" }),
  owner: Schema.String.annotations({
    description: "the smart account's owner encoding: abi.encode(uint256 x, uint256 y) of the passkey's P-256 key"
  }),
  smartAccount: Schema.String.annotations({
    description: "the passkey's smart account: factory getAddress(owner, 0), counterfactual, lowercase"
  }),
  transports: Schema.Array(Schema.String)
}).annotations({ identifier: "PasskeyRegistered" })

export const EcdsaChallengeBody = Schema.Struct({ address: AddressString }).annotations({
  identifier: "EcdsaChallengeBody",
  parseOptions: { onExcessProperty: "error" }
})

export const EcdsaChallenge = Schema.Struct({
  ...Challenge.fields,
  smartAccount: Schema.String.annotations({
    description: "the smart account this owner signs in to: factory getAddress(abi.encodePacked(owner), 0)"
  })
}).annotations({ identifier: "EcdsaChallenge" })

export const JsonRpcAnswer = Schema.Unknown.annotations({
  identifier: "JsonRpcAnswer",
  description:
    "always HTTP 200: the bundler's JSON-RPC 2.0 answer as it sent it ({jsonrpc, id, result} or {jsonrpc, id, error}), or the proxy's own JSON-RPC error: -32600 not a single JSON-RPC 2.0 call (batches are refused), -32601 method not allowed, -32602 params not an array, 4100 AUTH_REQUIRED / AUTH_INVALID (sends need a session), -32003 FORBIDDEN (another sender), the bundler's code (-32521) with data {code: SLIPPAGE_EXCEEDED | INSUFFICIENT_BALANCE | MARKET_PAUSED | MARKET_NOT_FOUND, revert, error, bundler, details} for a known protocol revert",
  jsonSchema: { type: "object" }
})

export const UserOperationRpc = Schema.Struct({
  sender: address("the smart account"),
  nonce: quantity("the EntryPoint nonce"),
  factory: Schema.optional(Schema.NullOr(address("the account factory, for the first operation"))),
  factoryData: Schema.optional(Schema.NullOr(hexData("createAccount(owner, 0) calldata"))),
  callData: hexData("the account's execute / executeBatch calldata"),
  callGasLimit: quantity("call gas"),
  verificationGasLimit: quantity("verification gas"),
  preVerificationGas: quantity("pre-verification gas"),
  maxFeePerGas: quantity("max fee per gas, wei"),
  maxPriorityFeePerGas: quantity("max priority fee per gas, wei"),
  paymaster: Schema.optional(Schema.NullOr(Schema.String)),
  paymasterVerificationGasLimit: Schema.optional(Schema.NullOr(Schema.String)),
  paymasterPostOpGasLimit: Schema.optional(Schema.NullOr(Schema.String)),
  paymasterData: Schema.optional(Schema.NullOr(Schema.String)),
  signature: Schema.optional(Schema.NullOr(Schema.String))
}).annotations({
  identifier: "UserOperationRpc",
  description:
    "an ERC-4337 v0.7 user operation in the bundler's RPC form; paymaster fields and signature are ignored (they are what is being asked for, and signed after)"
})

const gasBeforeEstimation = (description: string) =>
  Schema.optionalWith(quantity(`${description}; absent or 0x0 before estimation`), { default: () => "0x0" })

/** ERC-7677's user operation (pm_getPaymaster*Data params[0]): the RPC form, gas limits absent before estimation. */
export const PaymasterUserOperation = Schema.Struct({
  ...UserOperationRpc.fields,
  callGasLimit: gasBeforeEstimation("call gas"),
  verificationGasLimit: gasBeforeEstimation("verification gas"),
  preVerificationGas: gasBeforeEstimation("pre-verification gas")
}).annotations({ identifier: "PaymasterUserOperation" })

export const SponsorBody = Schema.Struct({
  userOperation: UserOperationRpc,
  entryPoint: Schema.optional(address("must be the configured EntryPoint v0.7 when given"))
}).annotations({ identifier: "SponsorBody", parseOptions: { onExcessProperty: "error" } })

export const SponsorResult = Schema.Struct({
  paymaster: Schema.String.annotations({ description: "the verifying paymaster" }),
  paymasterVerificationGasLimit: Schema.String.annotations({ description: "hex quantity: use exactly this (it is signed)" }),
  paymasterPostOpGasLimit: Schema.String.annotations({ description: "hex quantity: use exactly this (it is signed)" }),
  paymasterData: Schema.String.annotations({ description: "abi.encode(uint48 validUntil, uint48 validAfter) ++ 65-byte signature" }),
  paymasterAndData: Schema.String.annotations({
    description: "the packed field: paymaster | verificationGas(16) | postOpGas(16) | paymasterData"
  }),
  validUntil: Schema.Int.annotations({ description: "unix seconds (chain time); never 0; at most 10 minutes after validAfter" }),
  validAfter: Schema.Int.annotations({ description: "unix seconds (the chain's latest block time when signed)" }),
  maxCostWei: Schema.String.annotations({
    description: "decimal wei: the most this operation can cost the paymaster (what the budget was charged)"
  }),
  budget: Schema.Struct({
    limitWei: Schema.String.annotations({ description: "decimal wei per smart account per UTC day" }),
    spentWei: Schema.String.annotations({ description: "decimal wei charged today, this operation included" }),
    operations: Schema.Int.annotations({ description: "operations sponsored today" })
  })
}).annotations({ identifier: "Sponsorship" })

const SESSION_COOKIE_NOTE = "sets the predix_session cookie (HttpOnly, SameSite=Lax, Path=/, 7 days), the same session SIWE creates"

export class AaGroup extends HttpApiGroup.make("aa")
  .add(
    HttpApiEndpoint.post("passkeyRegisterChallenge", "/api/aa/auth/passkey/register/challenge")
      .setPayload(EmptyBody)
      .addSuccess(BackendItem(PasskeyChallenge))
      .addError(IndexerUnavailable.wire)
      .annotate(OpenApi.Summary, "Passkey registration, step 1: creation options (ES256 only) with a single-use challenge valid 5 minutes")
  )
  .add(
    HttpApiEndpoint.post("passkeyRegisterVerify", "/api/aa/auth/passkey/register/verify")
      .setPayload(PasskeyRegistration)
      .addSuccess(BackendItem(PasskeyRegistered))
      .addError(AuthInvalid.wire)
      .addError(IndexerUnavailable.wire)
      .annotate(
        OpenApi.Summary,
        "Passkey registration, step 2: verifies the new credential (challenge, origin, RP id) and stores its public key, counter and transports; answers the passkey's smart account. Does not sign in"
      )
  )
  .add(
    HttpApiEndpoint.post("passkeyLoginChallenge", "/api/aa/auth/passkey/login/challenge")
      .setPayload(EmptyBody)
      .addSuccess(BackendItem(PasskeyChallenge))
      .addError(IndexerUnavailable.wire)
      .annotate(OpenApi.Summary, "Passkey sign-in, step 1: request options with a single-use challenge valid 5 minutes")
  )
  .add(
    HttpApiEndpoint.post("passkeyLogin", "/api/aa/auth/passkey/login")
      .setPayload(PasskeyAssertion)
      .addSuccess(BackendItem(SessionInfo))
      .addError(AuthInvalid.wire)
      .addError(IndexerUnavailable.wire)
      .annotate(
        OpenApi.Summary,
        `Passkey sign-in, step 2: verifies the assertion (challenge unspent, origin, RP id, signature, counter increased) and ${SESSION_COOKIE_NOTE}, for the passkey's smart account (method passkey)`
      )
  )
  .add(
    HttpApiEndpoint.post("ecdsaChallenge", "/api/aa/auth/ecdsa/challenge")
      .setPayload(EcdsaChallengeBody)
      .addSuccess(BackendItem(EcdsaChallenge))
      .addError(InvalidAddress.wire)
      .addError(IndexerUnavailable.wire)
      .annotate(
        OpenApi.Summary,
        "ECDSA smart-account sign-in, step 1: a SIWE message for the owner EOA to sign (single use, 10 minutes) and the smart account it signs in to"
      )
  )
  .add(
    HttpApiEndpoint.post("ecdsaVerify", "/api/aa/auth/ecdsa/verify")
      .setPayload(VerifyBody)
      .addSuccess(BackendItem(SessionInfo))
      .addError(InvalidAddress.wire)
      .addError(AuthInvalid.wire)
      .addError(IndexerUnavailable.wire)
      .annotate(
        OpenApi.Summary,
        `ECDSA smart-account sign-in, step 2: the owner's signature of the message; ${SESSION_COOKIE_NOTE}, for the owner's smart account (method ecdsa)`
      )
  )
  .add(
    HttpApiEndpoint.post("bundler", "/api/aa/bundler")
      .setPayload(
        Schema.Unknown.annotations({
          identifier: "JsonRpcRequest",
          description: "one JSON-RPC 2.0 call (no batches)",
          jsonSchema: { type: "object" }
        })
      )
      .addSuccess(JsonRpcAnswer)
      .addError(IndexerUnavailable.wire)
      .annotate(
        OpenApi.Summary,
        `JSON-RPC proxy to the ERC-4337 bundler, one call per request (body at most 64 KiB). Methods: ${ALLOWED_METHODS.join(", ")}; others are JSON-RPC error -32601. eth_sendUserOperation needs a smart-account session and its sender must be the session's account. The bundler's answers and errors come back unchanged, except a simulation that fails on a protocol revert: its JSON-RPC error carries data.code SLIPPAGE_EXCEEDED, INSUFFICIENT_BALANCE, MARKET_PAUSED or MARKET_NOT_FOUND and the raw revert. Refusals are JSON-RPC errors (HTTP 200) with data.code the backend code`
      )
  )
  .add(
    HttpApiEndpoint.post("paymaster", "/api/aa/paymaster")
      .setPayload(
        Schema.Unknown.annotations({
          identifier: "PaymasterRpcRequest",
          description:
            "one ERC-7677 JSON-RPC 2.0 call: pm_getPaymasterStubData or pm_getPaymasterData, params [userOperation (v0.7 RPC form), entryPoint, chainId (hex), context (ignored)]",
          jsonSchema: { type: "object" }
        })
      )
      .addSuccess(
        Schema.Unknown.annotations({
          identifier: "PaymasterRpcAnswer",
          description:
            "JSON-RPC 2.0, always HTTP 200. pm_getPaymasterStubData: {paymaster, paymasterData (unsigned stub: use only for estimation), paymasterVerificationGasLimit, paymasterPostOpGasLimit, isFinal: false, sponsor: {name}}; nothing charged. pm_getPaymasterData: {paymaster, paymasterData, paymasterVerificationGasLimit, paymasterPostOpGasLimit} (use exactly these: they are signed); charges the daily budget once. Refusals: error {code, message, data: {code (the backend code), details}}: 4100 AUTH_REQUIRED / AUTH_INVALID, -32003 FORBIDDEN (another sender, a non-protocol call), -32602 VALIDATION_FAILED (gas over the caps, bad params, another EntryPoint or chain, a revert without a code), -32005 RATE_LIMIT_EXCEEDED (budget spent), -32521 SLIPPAGE_EXCEEDED / INSUFFICIENT_BALANCE / MARKET_PAUSED / MARKET_NOT_FOUND (the simulated execution reverts; the raw revert in details), -32002 INDEXER_UNAVAILABLE, -32601 another method",
          jsonSchema: { type: "object" }
        })
      )
      .addError(IndexerUnavailable.wire)
      .annotate(
        OpenApi.Summary,
        "ERC-7677 paymaster web service (JSON-RPC; viem createPaymasterClient) with the session cookie: the same policy, simulation and daily budget as /api/aa/paymaster/sponsor"
      )
  )
  .add(
    HttpApiEndpoint.post("sponsor", "/api/aa/paymaster/sponsor")
      .setPayload(SponsorBody)
      .addSuccess(BackendItem(SponsorResult))
      .addError(Forbidden.wire)
      .addError(RateLimitExceeded.wire)
      .addError(SlippageExceeded.wire)
      .addError(InsufficientBalance.wire)
      .addError(MarketPaused.wire)
      .addError(MarketNotFound.wire)
      .addError(IndexerUnavailable.wire)
      .middleware(RequireUser)
      .annotate(
        OpenApi.Summary,
        "Signs paymasterAndData for a user operation of the session's smart account whose calls are protocol actions (router trades, split, merge, redeem, order place and cancel, approvals to the protocol), with gas under the caps, whose simulated execution does not revert, within the daily budget. Another sender or a non-protocol call: FORBIDDEN; gas over caps: VALIDATION_FAILED; a revert: its code (SLIPPAGE_EXCEEDED, INSUFFICIENT_BALANCE, MARKET_PAUSED, MARKET_NOT_FOUND; else VALIDATION_FAILED) with the raw revert in details, nothing charged; budget spent: RATE_LIMIT_EXCEEDED. The same as ERC-7677 pm_getPaymasterData at /api/aa/paymaster"
      )
  ) {}
