/**
 * The account-abstraction service of this process: passkey sign-in, smart-account resolution,
 * the sponsoring paymaster and the bundler proxy, over the chain's EntryPoint (handlers: `handlers.ts`).
 */
import { Context, Effect, Layer, Option } from "effect"
import { AuthSettings, Sessions } from "../auth/sessions.js"
import { accountResolver, type AccountOf } from "./accounts.js"
import { makeBundlerProxy } from "./bundler-proxy.js"
import { webauthnOf, type AaOptions } from "./config.js"
import { makePasskeys, type PasskeysService } from "./passkeys.js"
import { makePaymasterRpc } from "./paymaster-rpc.js"
import { makeAaChain } from "./simulation.js"
import { makeSponsor, type SponsorService } from "./sponsor.js"

export interface AaService {
  readonly options: AaOptions
  readonly accountOf: AccountOf
  readonly passkeys: PasskeysService
  readonly sponsor: SponsorService
  readonly proxy: ReturnType<typeof makeBundlerProxy>
  readonly paymasterRpc: ReturnType<typeof makePaymasterRpc>
}

/** The account-abstraction service of this process: none when not configured (then /api/aa answers 503). */
export class Aa extends Context.Tag("predix/Aa")<Aa, Option.Option<AaService>>() {}

export const AaServiceLive = (options: AaOptions | undefined) =>
  Layer.effect(
    Aa,
    options === undefined
      ? Effect.succeed(Option.none())
      : Effect.gen(function* () {
          const sessions = yield* Sessions
          const settings = yield* AuthSettings
          const accountOf = accountResolver(options.rpcUrl, {
            ecdsa: options.ecdsaAccountFactory,
            passkey: options.accountFactory
          })
          const webauthn = webauthnOf(settings.options.publicUrl, options.webauthn)
          const passkeys = yield* makePasskeys({ webauthn, accountOf, sessions })
          const chain = makeAaChain({ rpcUrl: options.rpcUrl, entryPoint: options.entryPoint, diamond: options.protocol.diamond })
          const sponsor = yield* makeSponsor(options, chain)
          yield* Effect.logInfo("account abstraction: ready").pipe(
            Effect.annotateLogs({
              entry_point: options.entryPoint,
              factory: options.accountFactory,
              ecdsa_factory: options.ecdsaAccountFactory,
              paymaster: options.paymaster,
              paymaster_signer: sponsor.signerAddress,
              rp_id: webauthn.rpId
            })
          )
          return Option.some({
            options,
            accountOf,
            passkeys,
            sponsor,
            proxy: makeBundlerProxy(options.bundlerUrl, chain.marketExists),
            paymasterRpc: makePaymasterRpc(options, sponsor)
          })
        })
  )
