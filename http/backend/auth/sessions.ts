/**
 * Users, roles, settings, SIWE challenges and sessions, all in Postgres (shared by every backend
 * instance; nothing here lives in one process's memory).
 *
 * Invariants:
 * - a nonce signs in at most once: it is consumed by one conditional UPDATE (`consumed_at is
 *   null`) in the same statement that creates the session, and a session's nonce is unique;
 * - only SHA-256 hashes of session tokens are stored or logged; the token exists only in the
 *   client's cookie (256 random bits, so a fast hash is as good as a slow one);
 * - time comes from Effect's `Clock` (tests move it), never from the database's `now()`.
 *
 * Which issued challenge a signature signs, and each refusal's words: `signed-challenge.ts`.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Context, Effect, Layer, Schedule } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { AuthInvalid } from "../../../schema/errors.js"
import { CHALLENGE_REFUSALS, CHALLENGE_TTL_MS, KEEP_MS, signedChallenges } from "./signed-challenge.js"
import { buildMessage, signatureProblem, signatureVerifier, siteOf, type SiweSite } from "./siwe.js"
import { makeTickets } from "./ws-tickets.js"

export const SESSION_COOKIE = "predix_session"
export const SESSION_TTL_MS = 7 * 24 * 3600 * 1000
export { CHALLENGE_TTL_MS }

export const ROLES = ["user", "moderator", "admin"] as const
export type Role = (typeof ROLES)[number]
export const roleRank: Record<Role, number> = { user: 0, moderator: 1, admin: 2 }

export const NOTIFICATION_TYPES = [
  "orderFilled",
  "tradeExecuted",
  "orderCancelled",
  "marketResolved",
  "redemptionAvailable",
  "marketPaused",
  "faucetDelivered",
  "commentReply"
] as const
export type NotificationType = (typeof NOTIFICATION_TYPES)[number]
export type NotificationPreferences = Record<NotificationType, boolean>

export interface UserSettings {
  readonly locale: "en" | "vi" | "ja" | "ko"
  readonly notifications: NotificationPreferences
}

/** Configuration of sign-in, passed in by whoever serves the backend. */
export interface AuthOptions {
  /** The origin apps sign in from: SIWE domain and URI; http on localhost turns the cookie's Secure off. */
  readonly publicUrl: string
  readonly chainId: number
  /** The chain's RPC: smart-account (ERC-1271 / ERC-6492) signatures verify only with one. */
  readonly rpcUrl?: string | undefined
  /** Made admins at start. */
  readonly adminAddresses?: ReadonlyArray<string>
  /** Further origins allowed to send credentialed requests (the public URL's origin always is). */
  readonly corsOrigins?: ReadonlyArray<string>
}

/** The signed-in user of a request, as the session middleware provides it. */
export interface SessionUser {
  /** The signed-in address: the SIWE signer, or the smart account of a passkey or ECDSA sign-in. */
  readonly address: string
  readonly role: Role
  /** siwe, passkey or ecdsa. */
  readonly method: string
  /** The smart account's owner encoding (passkey: abi.encode(x, y); ecdsa: the EOA); null for SIWE. */
  readonly owner: string | null
  /** The session's smart account (equal to `address`); null for SIWE. */
  readonly smartAccount: string | null
  readonly createdAt: number
  readonly expiresAt: number
}

export type SessionLookup = { readonly _tag: "Valid"; readonly user: SessionUser } | { readonly _tag: "Invalid"; readonly reason: string }

export interface Challenge {
  readonly message: string
  readonly nonce: string
  readonly issuedAt: number
  readonly expiresAt: number
}

export interface SignIn {
  /** The session token: goes into the cookie and nowhere else. */
  readonly token: string
  readonly user: SessionUser
}

export const hashToken = (token: string): string => createHash("sha256").update(token).digest("hex")

/** 32 random bytes, base64url: 43 characters. */
const SANE_TOKEN = /^[A-Za-z0-9_-]{43}$/

const invalid = (message: string) => new AuthInvalid({ message })

interface SessionRow {
  readonly address: string
  readonly role: Role
  readonly method: string
  readonly owner: string | null
  readonly smart_account: string | null
  readonly created_ms: number
  readonly expires_ms: number
  readonly revoked: boolean
}

const defaultNotifications = (): NotificationPreferences =>
  Object.fromEntries(NOTIFICATION_TYPES.map((t) => [t, true])) as NotificationPreferences

const settingsOf = (row: { locale: string; notifications: unknown } | undefined): UserSettings => {
  const stored = (row?.notifications ?? {}) as Record<string, unknown>
  const notifications = defaultNotifications()
  for (const type of NOTIFICATION_TYPES) if (typeof stored[type] === "boolean") notifications[type] = stored[type] as boolean
  return { locale: (row?.locale ?? "en") as UserSettings["locale"], notifications }
}

export const makeSessions = (options: AuthOptions) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const site: SiweSite = siteOf(options.publicUrl, options.chainId)
    const challenges = signedChallenges({ sql, site, verifySignature: signatureVerifier(options.rpcUrl) })
    const tickets = makeTickets(sql, hashToken)

    const ensureUser = (address: string) => sql`insert into app_user (address) values (${address}) on conflict (address) do nothing`

    const userSession = (row: SessionRow): SessionUser => ({
      address: row.address,
      role: row.role,
      method: row.method,
      owner: row.owner,
      smartAccount: row.smart_account,
      createdAt: Number(row.created_ms),
      expiresAt: Number(row.expires_ms)
    })

    /** A new challenge for `address` (lowercase). */
    const issueChallenge = (address: string) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const nonce = randomBytes(16).toString("hex")
        const expiresAt = now + CHALLENGE_TTL_MS
        const message = buildMessage(site, address, nonce, now, expiresAt)
        yield* sql`
          insert into auth_nonce (nonce, address, message, issued_at, expires_at)
          values (${nonce}, ${address}, ${message}, ${new Date(now)}, ${new Date(expiresAt)})`
        return { message, nonce, issuedAt: now, expiresAt } satisfies Challenge
      })

    /**
     * Signs `address` in with `signature` over a challenge issued to it. Checks, in order: the
     * signature's form (the body schema refuses a malformed one first); which issued message it
     * signs (with `message`: that one, by its nonce; else the named nonce's, else the address's
     * latest few) and that message's domain, URI, chain id, address, nonce and time window; the
     * stored expiry; that the nonce is unspent; then consumes the nonce and creates the session
     * in one statement. The signature is checked before the nonce is spent, so a forged signature
     * cannot burn a user's challenge. Every refusal is AUTH_INVALID whose message names the check
     * that failed (an expired challenge is "message expired" wherever that is found, never
     * "nonce already used").
     */
    const signIn = (
      input: {
        readonly address: string
        readonly signature: string
        readonly nonce?: string | undefined
        readonly message?: string | undefined
      },
      /** An ECDSA smart-account sign-in: the session is the owner's (`input.address`) smart account's. */
      asAccount?: { readonly smartAccount: string }
    ) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const problem = signatureProblem(input.signature)
        if (problem !== undefined) return yield* invalid(problem)
        const signed = yield* challenges.signedBy(input, now)
        if (signed.expired) return yield* invalid(CHALLENGE_REFUSALS.expired)
        if (signed.consumed) return yield* invalid(CHALLENGE_REFUSALS.used)
        const token = randomBytes(32).toString("base64url")
        const expiresAt = now + SESSION_TTL_MS
        const sessionAddress = asAccount?.smartAccount ?? input.address
        const method = asAccount === undefined ? "siwe" : "ecdsa"
        const owner = asAccount === undefined ? null : input.address
        yield* ensureUser(sessionAddress)
        const created = yield* sql<SessionRow>`
          with consumed as (
            update auth_nonce set consumed_at = ${new Date(now)}
            where nonce = ${signed.nonce} and address = ${input.address} and consumed_at is null and expires_at > ${new Date(now)}
            returning nonce
          ), session as (
            insert into auth_session (token_hash, address, method, nonce, owner, smart_account, created_at, expires_at)
            select decode(${hashToken(token)}, 'hex'), ${sessionAddress}, ${method}, nonce, ${owner}, ${asAccount?.smartAccount ?? null}, ${new Date(now)}, ${new Date(expiresAt)} from consumed
            returning address, method, owner, smart_account
          )
          select s.address, u.role, s.method, s.owner, s.smart_account, ${now}::float8 as created_ms, ${expiresAt}::float8 as expires_ms, false as revoked
          from session s join app_user u using (address)`
        const row = created[0]
        if (row === undefined) return yield* invalid(yield* challenges.whyNotSpent(signed.nonce, now))
        return { token, user: userSession(row) } satisfies SignIn
      })

    /**
     * Opens a session of `smartAccount` (a passkey sign-in; the caller has consumed its challenge
     * in the same transaction). The token goes into the cookie and nowhere else.
     */
    const openAccountSession = (input: { readonly method: "passkey"; readonly owner: string; readonly smartAccount: string }) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const token = randomBytes(32).toString("base64url")
        const expiresAt = now + SESSION_TTL_MS
        yield* ensureUser(input.smartAccount)
        const created = yield* sql<SessionRow>`
          with session as (
            insert into auth_session (token_hash, address, method, owner, smart_account, created_at, expires_at)
            values (decode(${hashToken(token)}, 'hex'), ${input.smartAccount}, ${input.method}, ${input.owner}, ${input.smartAccount}, ${new Date(now)}, ${new Date(expiresAt)})
            returning address, method, owner, smart_account
          )
          select s.address, u.role, s.method, s.owner, s.smart_account, ${now}::float8 as created_ms, ${expiresAt}::float8 as expires_ms, false as revoked
          from session s join app_user u using (address)`
        return { token, user: userSession(created[0]!) } satisfies SignIn
      })

    /** The session whose token hashes to `tokenHash` (hex): valid, or why not. */
    const lookupHash = (tokenHash: string) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const rows = yield* sql<SessionRow>`
          select s.address, u.role, s.method, s.owner, s.smart_account,
                 extract(epoch from s.created_at)::float8 * 1000 as created_ms,
                 extract(epoch from s.expires_at)::float8 * 1000 as expires_ms,
                 s.revoked_at is not null as revoked
          from auth_session s join app_user u using (address)
          where s.token_hash = decode(${tokenHash}, 'hex')`
        const row = rows[0]
        if (row === undefined) return { _tag: "Invalid", reason: "unknown session" } as SessionLookup
        if (row.revoked) return { _tag: "Invalid", reason: "session ended (signed out)" } as SessionLookup
        if (Number(row.expires_ms) <= now) return { _tag: "Invalid", reason: "session expired" } as SessionLookup
        return { _tag: "Valid", user: userSession(row) } as SessionLookup
      })

    /** The session of a cookie value: valid, or why not. */
    const lookup = (token: string) =>
      SANE_TOKEN.test(token)
        ? lookupHash(hashToken(token))
        : Effect.succeed({ _tag: "Invalid", reason: "session cookie malformed" } as SessionLookup)

    /** A WebSocket ticket of the live session `token` (`ws-tickets.ts`); undefined when the session is not live. */
    const issueTicket = (token: string) => (SANE_TOKEN.test(token) ? tickets.issue(token) : Effect.succeed(undefined))

    /** Spends a WebSocket ticket: the session it was issued for, as that session is now, or why none. */
    const redeemTicket = (ticket: string) =>
      Effect.flatMap(tickets.redeem(ticket), (redeemed) =>
        redeemed._tag === "Session"
          ? lookupHash(redeemed.sessionHash)
          : Effect.succeed({ _tag: "Invalid", reason: `ticket ${redeemed.reason}` } as SessionLookup)
      )

    /** Ends the session of `token`; true when it was live. */
    const revoke = (token: string) =>
      Effect.gen(function* () {
        if (!SANE_TOKEN.test(token)) return false
        const now = yield* Clock.currentTimeMillis
        const rows = yield* sql`
          update auth_session set revoked_at = ${new Date(now)}
          where token_hash = decode(${hashToken(token)}, 'hex') and revoked_at is null returning 1 as one`
        return rows.length > 0
      })

    const settings = (address: string) =>
      Effect.map(
        sql<{ locale: string; notifications: unknown }>`select locale, notifications from user_settings where address = ${address}`,
        (rows) => settingsOf(rows[0])
      )

    const updateSettings = (
      address: string,
      patch: { readonly locale?: UserSettings["locale"]; readonly notifications?: Partial<NotificationPreferences> }
    ) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        yield* ensureUser(address)
        const notifications = JSON.stringify(patch.notifications ?? {})
        const rows = yield* sql<{ locale: string; notifications: unknown }>`
          insert into user_settings (address, locale, notifications, updated_at)
          values (${address}, ${patch.locale ?? "en"}, ${notifications}::jsonb, ${new Date(now)})
          on conflict (address) do update set
            locale = coalesce(${patch.locale ?? null}, user_settings.locale),
            notifications = user_settings.notifications || excluded.notifications,
            updated_at = excluded.updated_at
          returning locale, notifications`
        return settingsOf(rows[0])
      })

    const user = (address: string) =>
      Effect.map(
        sql<{ address: string; role: Role; created_ms: number }>`
          select address, role, extract(epoch from created_at)::float8 * 1000 as created_ms from app_user where address = ${address}`,
        (rows) => rows[0]
      )

    const setRole = (address: string, role: Role) =>
      sql`insert into app_user (address, role) values (${address}, ${role}) on conflict (address) do update set role = excluded.role`

    /** Spent, expired challenges and long-expired sessions go; nothing a client could still use. */
    const sweep = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      yield* sql`delete from auth_nonce where expires_at < ${new Date(now - KEEP_MS)}`
      yield* tickets.sweep
      yield* sql`delete from auth_session where expires_at < ${new Date(now - KEEP_MS)}`
    })

    return {
      site,
      issueChallenge,
      signIn,
      openAccountSession,
      lookup,
      revoke,
      issueTicket,
      redeemTicket,
      settings,
      updateSettings,
      user,
      setRole,
      sweep
    } as const
  })

export type SessionsService = Effect.Effect.Success<ReturnType<typeof makeSessions>>

export class Sessions extends Context.Tag("predix/Sessions")<Sessions, SessionsService>() {}

/** The auth configuration the middlewares read. */
export class AuthSettings extends Context.Tag("predix/AuthSettings")<
  AuthSettings,
  {
    readonly options: AuthOptions
    /** Origins allowed to send credentialed requests: the public URL's and CORS_ORIGINS. */
    readonly allowedOrigins: ReadonlySet<string>
    /** Whether the cookie carries `Secure` (not for a public URL that is plain http on localhost). */
    readonly secureCookie: boolean
  }
>() {}

const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"])

export const authSettingsOf = (options: AuthOptions) => {
  const url = new URL(options.publicUrl)
  return {
    options,
    allowedOrigins: new Set([url.origin, ...(options.corsOrigins ?? []).map((o) => new URL(o).origin)]),
    secureCookie: !(url.protocol === "http:" && LOCAL_HOSTS.has(url.hostname))
  }
}

/** Sessions over the provided SqlClient; admins from the options made at start; a sweep every 10 minutes. */
export const SessionsLive = (options: AuthOptions) =>
  Layer.merge(
    Layer.scoped(
      Sessions,
      Effect.gen(function* () {
        const sessions = yield* makeSessions(options)
        for (const address of options.adminAddresses ?? []) yield* sessions.setRole(address.toLowerCase(), "admin")
        yield* sessions.sweep.pipe(
          Effect.catchAllCause((cause) => Effect.logWarning("session sweep failed", cause)),
          Effect.repeat(Schedule.spaced("10 minutes")),
          Effect.forkScoped
        )
        return sessions
      })
    ),
    Layer.succeed(AuthSettings, authSettingsOf(options))
  )
