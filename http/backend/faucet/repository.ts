/**
 * The faucet's rows: claims (`faucet_claim`, one per destination address, ever) and what the
 * signer allocated (`signer_nonce`, written by `signer.ts` under its row lock, only read here).
 *
 * Invariants (`handlers.ts` says why): a claim is taken by one conditional INSERT on its primary
 * key, so of concurrent claims for one address exactly one gets the row; a claim's signed
 * transaction is recorded before it is broadcast; a released claim takes its delivery
 * notification with it. Times are unix seconds, as every answer gives them.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Signed } from "./signer.js"
import { int, nullable, oneOf, rowDecoder, text, type RowOf } from "../../core/rows.js"

const claimColumns = {
  address: text(),
  owner: text(),
  /** Set once signed (with `raw_tx` and `tx_hash`); a nonce fits a safe integer. */
  nonce: nullable(int),
  tx_hash: nullable(text()),
  raw_tx: nullable(text()),
  status: oneOf("claimed", "signed", "confirmed"),
  /** Unix seconds. */
  claimed_at: int
}
const decodeClaim = rowDecoder(claimColumns)
export type ClaimRow = RowOf<typeof claimColumns>

const CLAIM_COLUMNS = "address, owner, nonce, tx_hash, raw_tx, status, floor(extract(epoch from claimed_at))::bigint AS claimed_at"

/** Takes the claim of `address` for `owner`; false when the address has claimed already (its row is someone's). */
export const takeClaim = (claim: { address: string; owner: string; usdcRaw: bigint; ethRaw: bigint }) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`INSERT INTO faucet_claim (address, owner, usdc_raw, eth_raw, status)
      VALUES (${claim.address}, ${claim.owner}, ${claim.usdcRaw.toString()}, ${claim.ethRaw.toString()}, 'claimed')
      ON CONFLICT (address) DO NOTHING RETURNING address`
  ).pipe(Effect.map((rows) => rows.length > 0))

/** The claim of `address`, if any. */
export const claimOf = (address: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT ${sql.literal(CLAIM_COLUMNS)} FROM faucet_claim WHERE address = ${address}`).pipe(
    Effect.map((rows) => (rows[0] === undefined ? undefined : decodeClaim(rows[0])))
  )

/** Records the claim's signed transaction (before it is broadcast). */
export const recordSigned = (address: string, signer: string, signed: Pick<Signed, "nonce" | "rawTx" | "hash">) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (
      sql
    ) => sql`UPDATE faucet_claim SET signer = ${signer}, nonce = ${signed.nonce}, raw_tx = ${signed.rawTx}, tx_hash = ${signed.hash}, status = 'signed'
      WHERE address = ${address}`
  ).pipe(Effect.asVoid)

/** The claim goes back (the address may claim again), and its delivery notification with it. */
export const releaseClaim = (address: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`DELETE FROM faucet_claim WHERE address = ${address}`.pipe(
      Effect.zipRight(sql`DELETE FROM notification WHERE type = 'faucetDelivered' AND source = ${"faucet:" + address}`)
    )
  )

export const confirmClaim = (address: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`UPDATE faucet_claim SET status = 'confirmed', confirmed_at = now() WHERE address = ${address}`
  )

/** Every confirmed claim is open again: the chain was rewound, each is verified anew. */
export const reopenConfirmedClaims = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql`UPDATE faucet_claim SET status = 'signed', confirmed_at = NULL WHERE status = 'confirmed'`
)

/**
 * The claims to reconcile: every unconfirmed one, and those `signer` confirmed at a nonce from
 * `minedNonce` on (the chain has not mined it: it lost them). Lowest nonce first, never-signed first.
 */
export const openClaims = (signer: string, minedNonce: number) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`SELECT ${sql.literal(CLAIM_COLUMNS)} FROM faucet_claim
      WHERE status <> 'confirmed' OR (signer = ${signer} AND nonce >= ${minedNonce}) ORDER BY nonce NULLS FIRST, address`
  ).pipe(Effect.map((rows) => rows.map(decodeClaim)))

const decodeNextNonce = rowDecoder({ next_nonce: int })

/** The next nonce `signer` would allocate, or undefined before its first. */
export const nextNonceOf = (signer: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT next_nonce FROM signer_nonce WHERE signer = ${signer}`).pipe(
    Effect.map((rows) => (rows[0] === undefined ? undefined : decodeNextNonce(rows[0]).next_nonce))
  )

const decodeStatus = rowDecoder({ address: text(), tx_hash: nullable(text()), status: claimColumns.status, claimed_at: int })

/** The claim paying `address`, else the one `address` made as owner: what GET /api/faucet/status shows. */
export const claimStatusOf = (address: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`SELECT address, tx_hash, status, floor(extract(epoch from claimed_at))::bigint AS claimed_at FROM faucet_claim
      WHERE address = ${address} OR owner = ${address} ORDER BY address = ${address} DESC LIMIT 1`
  ).pipe(Effect.map((rows) => (rows[0] === undefined ? undefined : decodeStatus(rows[0]))))
