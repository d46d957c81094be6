/**
 * Which issued SIWE challenge a sign-in's signature signs, checked again, for `Sessions.signIn`
 * (`sessions.ts`), which then spends it.
 *
 * Invariants:
 * - the signature is checked before anything else about a challenge is said, so without the
 *   address's key nothing is learnt about the address's challenges;
 * - each refusal is AUTH_INVALID whose message starts with the check that failed;
 * - an expired challenge is "message expired" wherever that is found (the message's text, the
 *   stored `expires_at`, or after a failed spend), never "nonce already used".
 */
import type { SqlClient } from "@effect/sql"
import { Effect, Either } from "effect"
import type { Hex } from "viem"
import { AuthInvalid } from "../../../schema/errors.js"
import { checkMessage, differingField, parseMessage, type SignatureVerifier, type SiweSite } from "./siwe.js"

export const CHALLENGE_TTL_MS = 10 * 60 * 1000
/** Spent or expired challenges are kept this long (so a replay is named as one), then swept. */
export const KEEP_MS = 24 * 3600 * 1000
/** Challenges of an address a signature is tried against when the client names no nonce. */
const CANDIDATE_CHALLENGES = 5

/** Refusals of a challenge's state: the same words whichever step finds it. */
export const CHALLENGE_REFUSALS = {
  unknown: "unknown nonce: it was never issued or has been swept; ask /api/auth/challenge again",
  expired: `message expired: a challenge is valid ${CHALLENGE_TTL_MS / 60_000} minutes; ask /api/auth/challenge again`,
  used: "nonce already used: a signed challenge signs in once"
} as const

export interface NonceRow {
  readonly nonce: string
  readonly address: string
  readonly message: string
  readonly consumed: boolean
  /** Past the stored `expires_at`: the authority the spending statement checks, not the message's text. */
  readonly expired: boolean
}

export interface SignedInput {
  readonly address: string
  readonly signature: string
  readonly nonce?: string | undefined
  /** The message the client signed, when it sends it: then refusals name the field that differs. */
  readonly message?: string | undefined
}

const invalid = (message: string) => new AuthInvalid({ message })

const rpcNote = (unchecked: boolean) =>
  unchecked ? " (the chain's RPC did not answer, so smart-account signatures could not be checked; try again)" : ""

export const signedChallenges = (deps: {
  readonly sql: SqlClient.SqlClient
  readonly site: SiweSite
  readonly verifySignature: SignatureVerifier
}) => {
  const { sql, site } = deps
  const verify = (address: string, message: string, signature: string) =>
    Effect.promise(() => deps.verifySignature(address, message, signature as Hex))
  const columns = (now: number) =>
    sql`nonce, address, message, consumed_at is not null as consumed, expires_at <= ${new Date(now)} as expired`

  /** The challenges a signature may be for: the named one (which must be `address`'s), else the address's latest. */
  const candidates = (address: string, nonce: string | undefined, now: number) =>
    Effect.gen(function* () {
      if (nonce !== undefined) {
        const rows = yield* sql<NonceRow>`select ${columns(now)} from auth_nonce where nonce = ${nonce}`
        const row = rows[0]
        if (row === undefined) return yield* invalid(CHALLENGE_REFUSALS.unknown)
        if (row.address !== address) return yield* invalid("nonce issued to another address")
        return rows
      }
      const rows = yield* sql<NonceRow>`
        select ${columns(now)} from auth_nonce
        where address = ${address} and issued_at > ${new Date(now - KEEP_MS)}
        order by issued_at desc limit ${CANDIDATE_CHALLENGES}`
      if (rows.length === 0) return yield* invalid("no challenge issued to this address: ask /api/auth/challenge first")
      return rows
    })

  /** Without the message: the issued one the signature signs (the named nonce's, else one of the address's latest), checked again. */
  const storedMessageSigned = (input: SignedInput, now: number) =>
    Effect.gen(function* () {
      const rows = yield* candidates(input.address, input.nonce, now)
      let unchecked = false
      for (const row of rows) {
        const verdict = yield* verify(input.address, row.message, input.signature)
        unchecked ||= verdict === "unchecked"
        if (verdict !== "valid") continue
        const checked = checkMessage(row.message, { site, address: input.address, nonce: row.nonce }, now)
        if (Either.isLeft(checked)) return yield* invalid(checked.left)
        return row
      }
      const what = input.nonce === undefined ? "any challenge issued to it" : "the challenge with this nonce"
      return yield* invalid(
        `signature invalid: it does not match the address: not a signature by ${input.address} of ${what}${rpcNote(unchecked)}`
      )
    })

  /**
   * With the message the client signed: the signature must be the address's over it, its fields
   * must be this site's, and it must be, unchanged, the message issued with its nonce; the first
   * check that fails, in that order, is the refusal.
   */
  const clientMessageSigned = (input: SignedInput, text: string, now: number) =>
    Effect.gen(function* () {
      const verdict = yield* verify(input.address, text, input.signature)
      if (verdict !== "valid")
        return yield* invalid(
          `signature invalid: it does not match the address: not a signature by ${input.address} of this message${rpcNote(verdict === "unchecked")}`
        )
      const parsed = parseMessage(text)
      if (Either.isLeft(parsed)) return yield* invalid(parsed.left)
      const nonce = input.nonce ?? parsed.right.nonce
      const checked = checkMessage(text, { site, address: input.address, nonce }, now)
      if (Either.isLeft(checked)) return yield* invalid(checked.left)
      const [row] = yield* candidates(input.address, nonce, now)
      // Field by field against the stored challenge, so the refusal names what was changed; then
      // the text itself, so a message signs in only as it was issued, byte for byte.
      const issued = parseMessage(row!.message)
      const changed = Either.isLeft(issued) ? "the stored challenge does not parse" : differingField(parsed.right, issued.right)
      if (changed !== undefined || row!.message !== text)
        return yield* invalid(
          `message differs from the challenge issued with its nonce: ${changed ?? "same fields, other text"}; sign the message /api/auth/challenge returned, unchanged`
        )
      return row!
    })

  return {
    /** The issued challenge `input` signs, its message checked again; its state (expired, consumed) is the caller's to judge. */
    signedBy: (input: SignedInput, now: number) =>
      input.message === undefined ? storedMessageSigned(input, now) : clientMessageSigned(input, input.message, now),
    /** Why a challenge that passed every check was not spent: another request spent it, or it expired meanwhile. */
    whyNotSpent: (nonce: string, now: number) =>
      Effect.map(
        sql<{ consumed: boolean; expired: boolean }>`
          select consumed_at is not null as consumed, expires_at <= ${new Date(now)} as expired from auth_nonce where nonce = ${nonce}`,
        ([row]) => (row === undefined ? CHALLENGE_REFUSALS.unknown : row.expired ? CHALLENGE_REFUSALS.expired : CHALLENGE_REFUSALS.used)
      )
  }
}
