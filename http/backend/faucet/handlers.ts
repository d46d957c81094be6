/** Handlers of the faucet group: a claim by the session's user, and any address's claim status (the service: `service.ts`). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import type { Address } from "viem"
import { CurrentUser } from "../auth/api.js"
import { BackendApi } from "../definition.js"
import { parseAddress } from "../lookup.js"
import { own } from "../respond.js"
import { FaucetClaim, FaucetStatus, NEVER_AGAIN } from "./api.js"
import { claimStatusOf } from "./repository.js"
import { databaseDown, Faucet, NOT_CONFIGURED, unavailable } from "./service.js"

const claimAnswer = own(FaucetClaim)
const statusAnswer = own(FaucetStatus)

export const FaucetLive = HttpApiBuilder.group(BackendApi, "faucet", (handlers) =>
  Effect.gen(function* () {
    const faucet = yield* Faucet
    return handlers
      .handle("claim", () =>
        claimAnswer(() =>
          Effect.gen(function* () {
            if (Option.isNone(faucet)) return yield* unavailable(NOT_CONFIGURED)
            const user = yield* CurrentUser
            return yield* faucet.value.claim(user.address as Address, (user.smartAccount ?? undefined) as Address | undefined)
          })
        )
      )
      .handle("status", ({ urlParams }) =>
        statusAnswer(() =>
          Effect.gen(function* () {
            const address = yield* parseAddress(urlParams.address)
            const row = yield* claimStatusOf(address).pipe(Effect.mapError(databaseDown))
            return {
              address,
              claimed: row !== undefined,
              claimedAddress: row?.address ?? null,
              claimedAt: row?.claimed_at ?? null,
              txHash: row?.tx_hash ?? null,
              confirmed: row?.status === "confirmed",
              nextClaimAt: row === undefined ? 0 : NEVER_AGAIN
            }
          })
        )
      )
  })
)
