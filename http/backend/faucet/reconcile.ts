/**
 * The faucet's reconciliation of its open claims with the chain as it is now (`faucet/service.ts`
 * runs it at start and after the chain was rewound, with claims held back meanwhile).
 *
 * Invariant: a claim only ever has its one recorded transaction: this re-broadcasts recorded
 * bytes, fills lost nonces with no-ops, confirms or releases; it never signs a claim anew, so a
 * claim is never paid twice.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type { Hex } from "viem"
import { nextNonceOf, openClaims, type ClaimRow } from "./repository.js"
import type { GapOutcome, ReceiptStatus, Signed, Signer, SignerError } from "./signer.js"

/** The faucet's own steps on one claim (`faucet/service.ts`). */
export interface ReconcileDeps {
  readonly signer: Signer
  /** Deletes the claim: the address may claim again. */
  readonly release: (address: string) => Effect.Effect<unknown, SqlError>
  readonly confirm: (address: string) => Effect.Effect<unknown, SqlError>
  /** Waits for the receipt: a success confirms the claim, a revert releases it. */
  readonly settle: (address: string, hash: Hex) => Effect.Effect<ReceiptStatus, SignerError | SqlError>
  /** Broadcasts recorded bytes; a failed broadcast settles the nonce ("cancelled": a no-op took it, the claim released). */
  readonly broadcastRecorded: (
    address: string,
    signed: Pick<Signed, "nonce" | "rawTx" | "hash" | "maxFeePerGas" | "maxPriorityFeePerGas">
  ) => Effect.Effect<GapOutcome, SignerError | SqlError>
}

/**
 * Finishes the open (unconfirmed) claims against the chain as it is now: at start (a process
 * killed mid-claim), and after the chain was rewound (`reverify` first marks every confirmed
 * claim open again). Claims wait meanwhile (`gate`). Each claim only ever has its one recorded
 * transaction, so it can never be paid twice:
 * - never signed: nothing was sent, released;
 * - its transaction is mined: confirmed (success) or released (reverted); a claim marked
 *   confirmed whose nonce the chain has not mined yet is open (the chain lost it);
 * - not mined, and its nonce taken by another transaction (a block shows it): it can never be
 *   mined, released (the owner may claim again); its nonce used and no block showing by what (a
 *   saved state ahead of its blocks): kept as paid, never sent again;
 * - not mined, its nonce still free: its recorded bytes are broadcast again, lowest nonce
 *   first, and any nonce below the signer's next one that no open claim holds (its claim was
 *   released, or a no-op took it, on a chain that lost it) is filled with a no-op, so no later
 *   transaction waits behind a gap; then each is settled like a new claim.
 */
export const reconcileClaims = (deps: ReconcileDeps) =>
  Effect.gen(function* () {
    const { signer, release, confirm, settle, broadcastRecorded } = deps
    // A claim confirmed at a nonce the chain has not mined was confirmed on a chain that lost it
    // (rewound, unnoticed by a reset: its index did not reach that block): it is open again.
    const first = yield* signer.minedNonce
    const open = yield* openClaims(signer.address, first)
    const outcome = (row: ClaimRow, status: string) =>
      Effect.logInfo("faucet: recovered a claim").pipe(Effect.annotateLogs({ address: row.address, tx_hash: row.tx_hash, status }))
    const unmined: Array<ClaimRow & { readonly nonce: number; readonly raw_tx: string; readonly tx_hash: string }> = []
    for (const row of open) {
      if (row.raw_tx === null || row.tx_hash === null || row.nonce === null) {
        // Claimed, never signed (killed before the signing transaction committed): nothing was sent.
        yield* release(row.address)
        yield* outcome(row, "released")
        continue
      }
      const mined = yield* signer.onChain(row.tx_hash as Hex)
      if (mined === "success") yield* confirm(row.address)
      if (mined === "reverted") yield* release(row.address)
      if (mined === "absent") unmined.push({ ...row, nonce: row.nonce, raw_tx: row.raw_tx, tx_hash: row.tx_hash })
      else yield* outcome(row, mined === "success" ? "confirmed" : "released")
    }
    const allocated = yield* nextNonceOf(signer.address)
    const byNonce = new Map(unmined.map((row) => [row.nonce, row]))
    const last = Math.max(allocated === undefined ? 0 : allocated - 1, ...byNonce.keys())
    const sent: Array<ClaimRow & { readonly nonce: number; readonly tx_hash: string }> = []
    for (const row of unmined) {
      if (row.nonce >= first) continue
      // The nonce is used and the claim's transaction is not on the chain. Released only when a
      // block shows the other transaction that took it; otherwise the chain's state is ahead of its
      // blocks (an anvil state saved while a block was being mined holds the transfer's effects and
      // the key's nonce, not the block): the transfer may well be paid, so the claim is kept as paid
      // and never sent again. Never paying twice comes before never paying zero.
      const since = row.claimed_at - 120
      const taker = yield* signer.minedAtNonce(row.nonce, since)
      if (taker !== undefined) {
        yield* release(row.address)
        yield* outcome(row, "released: its nonce was taken by another transaction")
      } else {
        yield* confirm(row.address)
        yield* Effect.logWarning("faucet: a claim's nonce is used but no block holds its transaction; kept as paid, not sent again").pipe(
          Effect.annotateLogs({ address: row.address, tx_hash: row.tx_hash, nonce: row.nonce })
        )
      }
    }
    for (let nonce = first; nonce <= last; nonce++) {
      const row = byNonce.get(nonce)
      if (row === undefined) {
        // A failure here (the node holds another transaction at this nonce after all) is not fatal:
        // the claims above are still sent, and any left pending are retried by the next reconciliation.
        yield* signer.fillNonce(nonce).pipe(
          Effect.tap((hash) =>
            Effect.logInfo("faucet: filled a nonce the chain lost with a no-op").pipe(Effect.annotateLogs({ nonce, tx_hash: hash }))
          ),
          Effect.catchAll((e) =>
            Effect.logWarning("faucet: could not fill a nonce the chain lost").pipe(Effect.annotateLogs({ nonce, error: e.message }))
          )
        )
        continue
      }
      // The replacement fees (if the broadcast fails) are bumped from today's base fee: the recorded fees are not kept.
      const broadcast = yield* broadcastRecorded(row.address, {
        nonce,
        rawTx: row.raw_tx as Hex,
        hash: row.tx_hash as Hex,
        maxFeePerGas: 0n,
        maxPriorityFeePerGas: 0n
      })
      if (broadcast === "cancelled") yield* outcome(row, "released")
      else sent.push(row)
    }
    for (const row of sent) {
      const hash = row.tx_hash as Hex
      let status: ReceiptStatus | "released" = yield* settle(row.address, hash)
      if (status === "pending" && (yield* signer.nonceUsed(row.nonce)) && (yield* signer.receipt(hash, 1)) === "pending") {
        yield* release(row.address)
        status = "released"
      }
      yield* outcome(row, status)
    }
  })
