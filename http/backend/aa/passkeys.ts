/**
 * Passkey (WebAuthn) registration and sign-in with `@simplewebauthn/server`, in Postgres.
 *
 * The library verifies a response against what it is given; these are the checks it leaves to
 * us, each with a test that fails without it (test/http/backend/aa-auth.test.ts):
 * - the challenge is one this server issued for this purpose, 5 minutes ago at most, and it is
 *   spent by the same transaction that stores the credential or opens the session (one
 *   conditional UPDATE: `consumed_at is null and expires_at > now`), so a response is accepted
 *   once: a replayed assertion is refused;
 * - the expected origin and RP id come from configuration (never from the request);
 * - the signature counter: the credential's stored counter is what the library compares with, so
 *   the new counter is written back, conditionally on the old one (two concurrent logins with one
 *   counter value: one wins);
 * - only ES256 (P-256) keys register: the smart account's WebAuthn validator verifies P-256.
 *
 * A passkey's smart account is the factory's `getAddress(abi.encode(x, y), 0)`.
 */
import { SqlClient } from "@effect/sql"
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type RegistrationResponseJSON
} from "@simplewebauthn/server"
import { Clock, Effect } from "effect"
import { randomBytes } from "node:crypto"
import { encodeAbiParameters, type Hex } from "viem"
import { AuthInvalid } from "../../../schema/errors.js"
import type { AccountOf } from "./accounts.js"
import type { WebAuthnOptions } from "./config.js"
import type { SessionsService } from "../auth/sessions.js"

export const PASSKEY_CHALLENGE_TTL_MS = 5 * 60 * 1000
/** COSE algorithm ES256: ECDSA P-256 with SHA-256. */
const ES256 = -7

type Purpose = "register" | "login"

const invalid = (message: string) => new AuthInvalid({ message })

/** The `challenge` a response's clientDataJSON carries (base64url), or a refusal. */
export const challengeOf = (clientDataJSON: unknown): Effect.Effect<string, AuthInvalid> =>
  Effect.try({
    try: () => {
      const parsed = JSON.parse(Buffer.from(String(clientDataJSON), "base64url").toString("utf8")) as { challenge?: unknown }
      if (typeof parsed.challenge !== "string" || !/^[A-Za-z0-9_-]{43}$/.test(parsed.challenge)) throw new Error("no challenge")
      return parsed.challenge
    },
    catch: () => invalid("clientDataJSON malformed: base64url JSON with this server's challenge expected")
  })

/**
 * x and y of an EC2 P-256 COSE key (RFC 9053): a CBOR map {1: 2, 3: -7, -1: 1, -2: x, -3: y}.
 * Only the CBOR this shape needs is read (small integers, byte strings).
 */
export const p256OfCose = (cose: Uint8Array): { x: bigint; y: bigint } | undefined => {
  let at = 0
  const head = () => {
    const byte = cose[at++]
    if (byte === undefined) throw new Error("truncated")
    const major = byte >> 5
    const info = byte & 31
    let value: number
    if (info < 24) value = info
    else if (info === 24) value = cose[at++]!
    else if (info === 25) value = (cose[at++]! << 8) | cose[at++]!
    else throw new Error("unsupported length")
    return { major, value }
  }
  try {
    const map = head()
    if (map.major !== 5) return undefined
    const fields = new Map<number, number | Uint8Array>()
    for (let i = 0; i < map.value; i++) {
      const key = head()
      if (key.major !== 0 && key.major !== 1) return undefined
      const k = key.major === 0 ? key.value : -1 - key.value
      const item = head()
      if (item.major === 0) fields.set(k, item.value)
      else if (item.major === 1) fields.set(k, -1 - item.value)
      else if (item.major === 2) {
        fields.set(k, cose.slice(at, at + item.value))
        at += item.value
      } else return undefined
    }
    const x = fields.get(-2)
    const y = fields.get(-3)
    if (fields.get(1) !== 2 || fields.get(3) !== ES256 || fields.get(-1) !== 1) return undefined
    if (!(x instanceof Uint8Array) || !(y instanceof Uint8Array) || x.length !== 32 || y.length !== 32) return undefined
    return { x: BigInt(`0x${Buffer.from(x).toString("hex")}`), y: BigInt(`0x${Buffer.from(y).toString("hex")}`) }
  } catch {
    return undefined
  }
}

/** The smart account's owner encoding of a P-256 key: abi.encode(uint256 x, uint256 y). */
export const passkeyOwner = (key: { x: bigint; y: bigint }): Hex =>
  encodeAbiParameters([{ type: "uint256" }, { type: "uint256" }], [key.x, key.y]).toLowerCase() as Hex

interface ChallengeRow {
  readonly consumed: boolean
  readonly expired: boolean
}

interface CredentialRow {
  readonly id: string
  readonly public_key: Uint8Array
  readonly owner: string
  readonly smart_account: string
  readonly counter: string
  readonly transports: ReadonlyArray<string>
}

const reason = (error: unknown) => (error instanceof Error ? error.message : String(error))

export const makePasskeys = (options: {
  readonly webauthn: WebAuthnOptions
  readonly accountOf: AccountOf
  readonly sessions: SessionsService
}) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const { webauthn, accountOf, sessions } = options

    const issue = (purpose: Purpose) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const bytes = randomBytes(32)
        const challenge = bytes.toString("base64url")
        const expiresAt = now + PASSKEY_CHALLENGE_TTL_MS
        yield* sql`insert into passkey_challenge (challenge, purpose, issued_at, expires_at)
          values (${challenge}, ${purpose}, ${new Date(now)}, ${new Date(expiresAt)})`
        return { challenge, bytes: new Uint8Array(bytes), issuedAt: now, expiresAt }
      })

    /**
     * Why a challenge of `purpose` cannot be spent now, or undefined when it can. Expiry is named
     * before use, here and after a failed spend alike, so an expired challenge is never reported
     * as a used one.
     */
    const whyUnusable = (challenge: string, purpose: Purpose) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const rows = yield* sql<ChallengeRow>`select consumed_at is not null as consumed, expires_at <= ${new Date(now)} as expired
          from passkey_challenge where challenge = ${challenge} and purpose = ${purpose}`
        const row = rows[0]
        if (row === undefined) return `unknown challenge: not issued by this server for ${purpose}; ask for a new one`
        if (row.expired) return `challenge expired (valid ${PASSKEY_CHALLENGE_TTL_MS / 60_000} minutes): ask for a new one`
        if (row.consumed) return "challenge already used: a WebAuthn response is accepted once"
        return undefined
      })

    /** A challenge of `purpose` that may still be spent, or why not (the spending itself comes later, atomically). */
    const usable = (challenge: string, purpose: Purpose) =>
      Effect.flatMap(whyUnusable(challenge, purpose), (why) => (why === undefined ? Effect.void : Effect.fail(invalid(why))))

    /** The refusal when `spend` found nothing to spend: used by a concurrent request, or expired meanwhile. */
    const notSpent = (challenge: string, purpose: Purpose) =>
      Effect.flatMap(whyUnusable(challenge, purpose), (why) =>
        Effect.fail(invalid(why ?? "challenge already used: a WebAuthn response is accepted once"))
      )

    /** Spends the challenge; false when another request spent it first or it just expired. */
    const spend = (challenge: string, purpose: Purpose) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const rows = yield* sql`update passkey_challenge set consumed_at = ${new Date(now)}
          where challenge = ${challenge} and purpose = ${purpose} and consumed_at is null and expires_at > ${new Date(now)}
          returning 1 as one`
        return rows.length > 0
      })

    const registrationOptions = Effect.gen(function* () {
      const issued = yield* issue("register")
      const creation = yield* Effect.promise(() =>
        generateRegistrationOptions({
          rpName: webauthn.rpName,
          rpID: webauthn.rpId,
          userName: "PrediX smart account",
          challenge: issued.bytes,
          timeout: PASSKEY_CHALLENGE_TTL_MS,
          attestationType: "none",
          authenticatorSelection: { residentKey: "required", userVerification: "preferred" },
          supportedAlgorithmIDs: [ES256]
        })
      )
      return { challenge: issued.challenge, expiresAt: issued.expiresAt, options: creation }
    })

    const register = (response: RegistrationResponseJSON) =>
      Effect.gen(function* () {
        const challenge = yield* challengeOf(response.response?.clientDataJSON)
        yield* usable(challenge, "register")
        const verified = yield* Effect.tryPromise({
          try: () =>
            verifyRegistrationResponse({
              response,
              expectedChallenge: challenge,
              expectedOrigin: [...webauthn.origins],
              expectedRPID: webauthn.rpId,
              requireUserVerification: false,
              supportedAlgorithmIDs: [ES256]
            }),
          catch: (error) => invalid(`registration refused: ${reason(error)}`)
        })
        if (!verified.verified) return yield* invalid("registration refused: the response did not verify")
        const { credential } = verified.registrationInfo
        const key = p256OfCose(credential.publicKey)
        if (key === undefined) return yield* invalid("registration refused: the credential's key is not an ES256 (P-256) key")
        const owner = passkeyOwner(key)
        const smartAccount = yield* accountOf(owner)
        const now = yield* Clock.currentTimeMillis
        const transports = [...(response.response.transports ?? [])]
          .filter((t) => typeof t === "string" && /^[a-z-]{1,32}$/.test(t))
          .slice(0, 8)
        yield* sql.withTransaction(
          Effect.gen(function* () {
            if (!(yield* spend(challenge, "register"))) return yield* notSpent(challenge, "register")
            const inserted =
              yield* sql`insert into passkey_credential (id, public_key, owner, smart_account, counter, transports, created_at)
              values (${credential.id}, ${Buffer.from(credential.publicKey)}, ${owner}, ${smartAccount}, ${credential.counter}, string_to_array(${transports.join(",")}, ','), ${new Date(now)})
              on conflict (id) do nothing returning id`
            if (inserted.length === 0) return yield* invalid("this credential is already registered: sign in with it")
          })
        )
        return { credentialId: credential.id, owner, smartAccount, transports }
      })

    const loginOptions = Effect.gen(function* () {
      const issued = yield* issue("login")
      const request = yield* Effect.promise(() =>
        generateAuthenticationOptions({
          rpID: webauthn.rpId,
          challenge: issued.bytes,
          timeout: PASSKEY_CHALLENGE_TTL_MS,
          userVerification: "preferred"
        })
      )
      return { challenge: issued.challenge, expiresAt: issued.expiresAt, options: request }
    })

    const login = (response: AuthenticationResponseJSON) =>
      Effect.gen(function* () {
        const challenge = yield* challengeOf(response.response?.clientDataJSON)
        yield* usable(challenge, "login")
        const rows = yield* sql<CredentialRow>`select id, public_key, owner, smart_account, counter::text as counter, transports
          from passkey_credential where id = ${String(response.id)}`
        const stored = rows[0]
        if (stored === undefined) return yield* invalid("unknown credential: register this passkey first")
        const counter = Number(stored.counter)
        const verified = yield* Effect.tryPromise({
          try: () =>
            verifyAuthenticationResponse({
              response,
              expectedChallenge: challenge,
              expectedOrigin: [...webauthn.origins],
              expectedRPID: webauthn.rpId,
              credential: { id: stored.id, publicKey: new Uint8Array(stored.public_key), counter, transports: [...stored.transports] },
              requireUserVerification: false
            }),
          catch: (error) => invalid(`sign-in refused: ${reason(error)}`)
        })
        if (!verified.verified) return yield* invalid("sign-in refused: the assertion did not verify")
        const next = verified.authenticationInfo.newCounter
        return yield* sql.withTransaction(
          Effect.gen(function* () {
            if (!(yield* spend(challenge, "login"))) return yield* notSpent(challenge, "login")
            const now = yield* Clock.currentTimeMillis
            // The counter the library compared with must still be the stored one.
            const moved = yield* sql`update passkey_credential set counter = ${next}, last_used_at = ${new Date(now)}
              where id = ${stored.id} and counter = ${counter} returning 1 as one`
            if (moved.length === 0) return yield* invalid("signature counter moved meanwhile: another sign-in used this passkey; try again")
            return yield* sessions.openAccountSession({ method: "passkey", owner: stored.owner, smartAccount: stored.smart_account })
          })
        )
      })

    return { registrationOptions, register, loginOptions, login }
  })

export type PasskeysService = Effect.Effect.Success<ReturnType<typeof makePasskeys>>
