/**
 * The faucet: claims (one per destination address, ever), sent through the faucet key's signer
 * (`signer.ts`) as one transaction to the dispenser contract (test USDC and ETH to the
 * smart account together), answered once the receipt is seen.
 *
 * Invariants:
 * - the claim row is inserted (primary key: the destination) before anything is signed, so of
 *   any number of concurrent claims for one address exactly one proceeds; the others get
 *   RATE_LIMIT_EXCEEDED naming the claim's time and transaction;
 * - the signed transaction is recorded in the row before it is broadcast; `recover` (at start)
 *   re-broadcasts recorded, unconfirmed transactions byte for byte and waits for them, so a
 *   process killed between broadcast and receipt never pays twice;
 * - a claim has one transaction, ever: the recorded one. After the chain was rewound (the devnet
 *   restarted from a saved state) every confirmed claim is verified again (`reverify`, or the
 *   database reset at start marks them): one whose transfer the chain lost is re-sent with its
 *   recorded bytes when its nonce is still free, else released; never signed anew, so never paid
 *   twice. Claims wait while this runs (`gate`);
 * - a claim that cannot be paid (faucet dry, transfer refused or reverted) is deleted, so the
 *   address may claim again once the faucet is refilled;
 * - the destination is always the session user's own smart account (spec: Authentication 5).
 */
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option, type Redacted } from "effect"
import { encodeFunctionData, parseAbi, type Address, type Hex } from "viem"
import type { SqlError } from "@effect/sql/SqlError"
import { IndexerUnavailable, InsufficientBalance, RateLimitExceeded } from "../../../schema/errors.js"
import { formatUnits } from "../../../schema/primitives.js"
import { NEVER_AGAIN } from "./api.js"
import { makeSigner, type GapOutcome, type Signed, type Signer, type SignerError } from "./signer.js"
import { reconcileClaims } from "./reconcile.js"
import { claimOf, confirmClaim, recordSigned, releaseClaim, reopenConfirmedClaims, takeClaim } from "./repository.js"

/** Claims take one permit each, reconciliation all of them: claims run together, never beside a reconciliation. */
const GATE_PERMITS = 1_000_000

/** 10,000 test USDC (6 decimals): beta rule 1. */
export const FAUCET_USDC = 10_000n * 1_000_000n

export interface FaucetOptions {
  readonly rpcUrl: string
  readonly chainId: number
  readonly privateKey: Redacted.Redacted<Hex>
  readonly testUsdc: Address
  /** The dispenser contract (tools/devnet/contracts/Live.sol) the faucet key has approved for its USDC. */
  readonly dispenser: Address
  /**
   * The ECDSA accounts' factory (SimpleAccountFactory v0.7, `getAddress(address owner, uint256 salt)`):
   * the owner's counterfactual account at salt 0 is the destination, the one the AA endpoints derive.
   */
  readonly accountFactory: Address
  readonly ethWei: bigint
  /** How long a claim waits for its receipt. Default 15 s (a block a second on the devnet). */
  readonly receiptTimeoutMs?: number
  /**
   * Completes once each time the chain restarted from a saved state (it may have lost its last
   * seconds of blocks, claims' transfers among them): the faucet then verifies every claim again.
   */
  readonly chainRestarts?: Effect.Effect<void>
}

const ABI = parseAbi([
  "function dispense(address token, address to, uint256 tokenAmount) payable",
  "function getAddress(address owner, uint256 salt) view returns (address)",
  "function balanceOf(address) view returns (uint256)"
])

export const unavailable = (message: string) => new IndexerUnavailable({ message })
export const databaseDown = () => unavailable("the database is unavailable")
const money = (raw: bigint, decimals: number, unit: "USDC" | "ETH") => ({
  decimal: formatUnits(raw, decimals),
  raw: raw.toString(),
  decimals,
  unit
})

/**
 * The closed code set has no "faucet" code: a faucet that is not configured or cannot reach its
 * chain is a backend dependency that is down (INDEXER_UNAVAILABLE, 503, the set's one 503); a
 * faucet whose own wallet is too low to pay is INSUFFICIENT_BALANCE (400, "wallet balance too
 * low": the faucet's wallet, as the message says). Every message says what happened to the claim.
 */
export const NOT_CONFIGURED =
  "the faucet is not configured on this server: it has no FAUCET_PRIVATE_KEY (the default live devnet configures one)"
const chainDown = (what: string) => unavailable(`the faucet cannot reach its chain (${what}); nothing was sent, try again later`)
const dry = (what: string) =>
  new InsufficientBalance({
    message: `the faucet has run dry: ${what}; nothing was sent and the claim was released, try again once the faucet is refilled`
  })

/** A claim that could not be signed (nothing was broadcast; the claim is released by the caller). */
const signingFailed = (e: SignerError | SqlError) =>
  e._tag === "SqlError"
    ? databaseDown()
    : e.kind === "dry"
      ? dry(e.message)
      : e.kind === "refused"
        ? unavailable(`the faucet's transfer would revert (${e.message}); nothing was sent and the claim was released`)
        : chainDown(e.message)

/** The faucet's work over a configured signer. */
export const makeFaucet = (options: FaucetOptions) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const signer: Signer = makeSigner({ rpcUrl: options.rpcUrl, chainId: options.chainId, privateKey: options.privateKey })
    const timeout = options.receiptTimeoutMs ?? 15_000

    const accountOf = (owner: Address) =>
      signer
        .read("deriving the smart account", (c) =>
          c.readContract({ address: options.accountFactory, abi: ABI, functionName: "getAddress", args: [owner, 0n] })
        )
        .pipe(Effect.map((a) => a.toLowerCase() as Address))

    /** The faucet's key must hold a claim's USDC (its ETH is checked when signing, with the gas). */
    const requireUsdc = signer
      .read("reading the faucet's USDC", (c) =>
        c.readContract({ address: options.testUsdc, abi: ABI, functionName: "balanceOf", args: [signer.address] })
      )
      .pipe(
        Effect.mapError((e) => chainDown(e.message)),
        Effect.filterOrFail(
          (held) => held >= FAUCET_USDC,
          (held) =>
            dry(`its key ${signer.address} holds ${formatUnits(held, 6)} test USDC, less than a claim's ${formatUnits(FAUCET_USDC, 6)}`)
        )
      )

    /** The claim goes back (the address may claim again), and a delivery notification sent for it on a chain that lost it with it. */
    const release = (address: string) => Effect.provideService(releaseClaim(address), SqlClient.SqlClient, sql)
    const confirm = (address: string) => Effect.provideService(confirmClaim(address), SqlClient.SqlClient, sql)

    /** Waits for `hash`; a success confirms the claim, a revert releases it. */
    const settle = (address: string, hash: Hex) =>
      Effect.gen(function* () {
        const status = yield* signer.receipt(hash, timeout)
        if (status === "success") yield* confirm(address)
        if (status === "reverted") yield* release(address)
        return status
      })

    /**
     * Broadcasts a recorded transaction. When the broadcast fails its nonce is settled
     * (`fillGap`): "sent" (the node has it after all) or "cancelled" (a no-op took the nonce:
     * the claim is released, as nothing can pay it any more).
     */
    const broadcastRecorded = (
      address: string,
      signed: Pick<Signed, "nonce" | "rawTx" | "hash" | "maxFeePerGas" | "maxPriorityFeePerGas">
    ) =>
      signer.broadcast(signed.rawTx).pipe(
        Effect.as("sent" as GapOutcome),
        Effect.catchAll((failed) =>
          Effect.gen(function* () {
            yield* Effect.logWarning("faucet: broadcast failed; settling its nonce").pipe(
              Effect.annotateLogs({ address, tx_hash: signed.hash, nonce: signed.nonce, error: failed.message })
            )
            const outcome = yield* signer.fillGap(signed, timeout)
            if (outcome === "cancelled") yield* release(address)
            return outcome
          })
        )
      )

    /**
     * A claim of `owner` (the session's address). `smartAccount`: the session's own smart account
     * (a passkey or ECDSA session, whose address it is); else the factory's account of the owner.
     */
    const claim = (ownerAddress: Address, smartAccount?: Address) =>
      Effect.gen(function* () {
        const owner = ownerAddress.toLowerCase() as Address
        const address =
          (smartAccount?.toLowerCase() as Address | undefined) ??
          (yield* accountOf(owner).pipe(Effect.mapError((e) => chainDown(e.message))))
        const taken = yield* takeClaim({ address, owner, usdcRaw: FAUCET_USDC, ethRaw: options.ethWei }).pipe(Effect.mapError(databaseDown))
        if (!taken) {
          const held = yield* claimOf(address).pipe(Effect.mapError(databaseDown))
          return yield* new RateLimitExceeded({
            message: `the faucet pays each address once; ${address} has claimed`,
            details: [
              { path: "claimedAt", message: String(held?.claimed_at ?? 0) },
              { path: "txHash", message: held?.tx_hash ?? "(being sent)" }
            ]
          })
        }
        // Checked once the claim is ours (the losers of a race need no chain call); a dry faucet releases it.
        yield* requireUsdc.pipe(Effect.tapError(() => release(address).pipe(Effect.ignore)))
        const data = encodeFunctionData({ abi: ABI, functionName: "dispense", args: [options.testUsdc, address, FAUCET_USDC] })
        const signed = yield* signer
          .sign({ to: options.dispenser, data, value: options.ethWei }, (signed) => recordSigned(address, signer.address, signed))
          .pipe(
            // Nothing was broadcast: the claim goes back.
            Effect.tapError(() => release(address).pipe(Effect.ignore)),
            Effect.mapError(signingFailed)
          )
        const sent = yield* broadcastRecorded(address, signed).pipe(
          Effect.mapError((e) =>
            e._tag === "SqlError"
              ? databaseDown()
              : unavailable(
                  `the faucet's transfer ${signed.hash} could not be broadcast and its nonce is not settled yet (${e.message}); the claim stays open and is finished when the faucet restarts: see GET /api/faucet/status`
                )
          )
        )
        if (sent === "cancelled") return yield* chainDown(`broadcasting the transfer failed and it was withdrawn; the claim was released`)
        yield* Effect.logInfo("faucet: broadcast").pipe(Effect.annotateLogs({ address, tx_hash: signed.hash, nonce: signed.nonce }))
        const status = yield* settle(address, signed.hash).pipe(
          Effect.mapError((e) => (e._tag === "SqlError" ? databaseDown() : chainDown(e.message)))
        )
        if (status === "reverted") return yield* unavailable(`the faucet's transfer ${signed.hash} reverted; the claim was released`)
        if (status === "pending")
          return yield* unavailable(`the faucet's transfer ${signed.hash} was sent but is not mined yet; see GET /api/faucet/status`)
        yield* Effect.logInfo("faucet: paid").pipe(Effect.annotateLogs({ address, tx_hash: signed.hash }))
        return {
          address,
          txHash: signed.hash,
          eth: money(options.ethWei, 18, "ETH"),
          usdc: money(FAUCET_USDC, 6, "USDC"),
          nextClaimAt: NEVER_AGAIN
        }
      })

    const reconcile = reconcileClaims({ signer, release, confirm, settle, broadcastRecorded }).pipe(
      Effect.provideService(SqlClient.SqlClient, sql)
    )

    /** New claims wait while open claims are reconciled (the nonces below theirs must be settled first). */
    const gate = yield* Effect.makeSemaphore(GATE_PERMITS)
    const recover = gate.withPermits(GATE_PERMITS)(reconcile)

    /** After the chain was rewound: every confirmed claim is verified again on the chain as it is now, then reconciled. */
    const reverify = gate.withPermits(GATE_PERMITS)(
      reopenConfirmedClaims.pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.zipRight(reconcile))
    )

    return {
      claim: (owner: Address, smartAccount?: Address) => gate.withPermits(1)(claim(owner, smartAccount)),
      accountOf,
      recover,
      reverify,
      signerAddress: signer.address
    }
  })

/** The faucet of this process: none when no key is configured (then claims answer 503). */
export class Faucet extends Context.Tag("predix/Faucet")<Faucet, Option.Option<Effect.Effect.Success<ReturnType<typeof makeFaucet>>>>() {}

export const FaucetServiceLive = (options: FaucetOptions | undefined) =>
  Layer.effect(
    Faucet,
    options === undefined
      ? Effect.succeed(Option.none())
      : Effect.gen(function* () {
          const faucet = yield* makeFaucet(options)
          // Claims cut off by a crash are finished before any new one is taken (in the background: start is not held up).
          yield* Effect.forkDaemon(
            faucet.recover.pipe(
              Effect.catchAll((e) =>
                Effect.logWarning("faucet: recovery failed; retried at the next start").pipe(
                  Effect.annotateLogs("error", String((e as { message?: string }).message ?? e))
                )
              )
            )
          )
          // The chain restarted from a saved state (the devnet's anvil, by its keeper): what it lost is found and finished.
          if (options.chainRestarts !== undefined)
            yield* Effect.forkDaemon(
              options.chainRestarts.pipe(
                Effect.zipRight(Effect.logWarning("faucet: the chain restarted from a saved state; verifying every claim against it")),
                Effect.zipRight(faucet.reverify),
                Effect.catchAll((e) =>
                  Effect.logWarning("faucet: verifying the claims failed; retried at the next restart or start").pipe(
                    Effect.annotateLogs("error", String((e as { message?: string }).message ?? e))
                  )
                ),
                Effect.forever
              )
            )
          yield* Effect.logInfo("faucet: ready").pipe(Effect.annotateLogs({ signer: faucet.signerAddress, dispenser: options.dispenser }))
          return Option.some(faucet)
        })
  )
