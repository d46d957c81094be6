/** Handlers of the account-abstraction group (`api.ts`) over the service of this process (`service.ts`). */
import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server"
import { Effect, Option, Redacted } from "effect"
import { IndexerUnavailable, ValidationFailed } from "../../../schema/errors.js"
import { CurrentUser } from "../auth/api.js"
import { authenticate, databaseDown, sessionAnswer, sessionInfo, setCookie } from "../auth/handlers.js"
import { AuthSettings, SESSION_COOKIE, SESSION_TTL_MS, Sessions } from "../auth/sessions.js"
import { BackendApi } from "../definition.js"
import { parseAddress } from "../lookup.js"
import { own } from "../respond.js"
import { EcdsaChallenge, PasskeyChallenge, PasskeyRegistered, SponsorResult } from "./api.js"
import { Aa } from "./service.js"
import { toUserOperation } from "./sponsor-policy.js"

const seconds = (ms: number) => Math.floor(ms / 1000)

const notConfigured = () =>
  new IndexerUnavailable({
    message:
      "account abstraction is not configured: it needs the chain's EntryPoint, factory, paymaster, BUNDLER_URL and PAYMASTER_SIGNER_KEY (the default devnet configures them)"
  })

/** SqlError -> INDEXER_UNAVAILABLE; every other failure as it is. */
const orUnavailable = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catchIf(
    effect,
    (e): e is E => (e as { _tag?: unknown })?._tag === "SqlError",
    (e) =>
      Effect.zipRight(
        Effect.logWarning("account abstraction: database error").pipe(
          Effect.annotateLogs({ error: String((e as { cause?: unknown }).cause ?? e) })
        ),
        Effect.fail(databaseDown())
      )
  ) as Effect.Effect<A, Exclude<E, { _tag: "SqlError" }> | IndexerUnavailable, R>

const hexQuantity = (value: bigint) => `0x${value.toString(16)}`

const challengeAnswer = own(PasskeyChallenge)
const registeredAnswer = own(PasskeyRegistered)
const ecdsaChallengeAnswer = own(EcdsaChallenge)
const sponsorAnswer = own(SponsorResult)

export const AaLive = HttpApiBuilder.group(BackendApi, "aa", (handlers) =>
  Effect.gen(function* () {
    const aa = yield* Aa
    const sessions = yield* Sessions
    const settings = yield* AuthSettings
    const service = Option.match(aa, { onNone: () => Effect.fail(notConfigured()), onSome: Effect.succeed })
    /** A signed-in session: its cookie set, its description answered. */
    const signedIn = (signIn: { token: string; user: Parameters<typeof sessionInfo>[0] }) =>
      Effect.gen(function* () {
        yield* setCookie(signIn.token, seconds(SESSION_TTL_MS), settings.secureCookie)
        yield* Effect.logInfo("signed in").pipe(Effect.annotateLogs({ address: signIn.user.address, method: signIn.user.method }))
        return sessionInfo(signIn.user)
      })
    const challengeOf = (issued: { challenge: string; expiresAt: number; options: unknown }) => ({
      challenge: issued.challenge,
      expiresAt: seconds(issued.expiresAt),
      options: issued.options as Record<string, unknown>
    })

    return handlers
      .handle("passkeyRegisterChallenge", () =>
        challengeAnswer(() =>
          Effect.flatMap(service, ({ passkeys }) => Effect.map(orUnavailable(passkeys.registrationOptions), challengeOf))
        )
      )
      .handle("passkeyRegisterVerify", ({ payload }) =>
        registeredAnswer(() =>
          Effect.gen(function* () {
            const { passkeys } = yield* service
            const registered = yield* orUnavailable(passkeys.register(payload.response as unknown as RegistrationResponseJSON))
            yield* Effect.logInfo("passkey registered").pipe(Effect.annotateLogs({ smart_account: registered.smartAccount }))
            return registered
          })
        )
      )
      .handle("passkeyLoginChallenge", () =>
        challengeAnswer(() => Effect.flatMap(service, ({ passkeys }) => Effect.map(orUnavailable(passkeys.loginOptions), challengeOf)))
      )
      .handle("passkeyLogin", ({ payload }) =>
        sessionAnswer(() =>
          Effect.gen(function* () {
            const { passkeys } = yield* service
            return yield* signedIn(yield* orUnavailable(passkeys.login(payload.response as unknown as AuthenticationResponseJSON)))
          })
        )
      )
      .handle("ecdsaChallenge", ({ payload }) =>
        ecdsaChallengeAnswer(() =>
          Effect.gen(function* () {
            const { accountOf } = yield* service
            const owner = yield* parseAddress(payload.address)
            const smartAccount = yield* accountOf(owner)
            const challenge = yield* orUnavailable(sessions.issueChallenge(owner))
            return {
              message: challenge.message,
              nonce: challenge.nonce,
              issuedAt: seconds(challenge.issuedAt),
              expiresAt: seconds(challenge.expiresAt),
              smartAccount
            }
          })
        )
      )
      .handle("ecdsaVerify", ({ payload }) =>
        sessionAnswer(() =>
          Effect.gen(function* () {
            const { accountOf } = yield* service
            const owner = yield* parseAddress(payload.address)
            const smartAccount = yield* accountOf(owner)
            return yield* signedIn(
              yield* orUnavailable(
                sessions.signIn(
                  { address: owner, signature: payload.signature, nonce: payload.nonce, message: payload.message },
                  { smartAccount }
                )
              )
            )
          })
        )
      )
      .handle("bundler", ({ payload }) =>
        Effect.gen(function* () {
          const { proxy } = yield* service
          const request = yield* HttpServerRequest.HttpServerRequest
          // Asked only for sends: reads go through without a session.
          const session = authenticate(sessions)(Redacted.make(request.cookies[SESSION_COOKIE] ?? ""))
          return yield* proxy.forward(payload, session)
        })
      )
      .handle("paymaster", ({ payload }) =>
        Effect.gen(function* () {
          const { paymasterRpc } = yield* service
          const request = yield* HttpServerRequest.HttpServerRequest
          return yield* paymasterRpc.answer(payload, authenticate(sessions)(Redacted.make(request.cookies[SESSION_COOKIE] ?? "")))
        })
      )
      .handle("sponsor", ({ payload }) =>
        sponsorAnswer(() =>
          Effect.gen(function* () {
            const { sponsor, options } = yield* service
            const user = yield* CurrentUser
            if (payload.entryPoint !== undefined && payload.entryPoint.toLowerCase() !== options.entryPoint.toLowerCase()) {
              return yield* new ValidationFailed({
                message: `the paymaster sponsors for EntryPoint ${options.entryPoint.toLowerCase()} only`,
                details: [{ path: "entryPoint", message: `not ${options.entryPoint.toLowerCase()}` }]
              })
            }
            const sponsored = yield* sponsor.sponsor(toUserOperation(payload.userOperation), user)
            return {
              ...sponsored,
              paymasterVerificationGasLimit: hexQuantity(sponsored.paymasterVerificationGasLimit),
              paymasterPostOpGasLimit: hexQuantity(sponsored.paymasterPostOpGasLimit),
              maxCostWei: sponsored.maxCostWei.toString(),
              budget: {
                limitWei: sponsored.budget.limitWei.toString(),
                spentWei: sponsored.budget.spentWei.toString(),
                operations: sponsored.budget.operations
              }
            }
          })
        )
      )
  })
)
