/** Handlers of the auth and admin groups, and the session middlewares behind `RequireUser` / `RequireModerator` / `RequireAdmin`. */
import { HttpApiBuilder, HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Either, FiberRef, Layer, Option, Redacted } from "effect"
import { AuthInvalid, AuthRequired, Forbidden, IndexerUnavailable, ValidationFailed } from "../../../schema/errors.js"
import {
  Challenge,
  CurrentUser,
  Logout,
  RequireAdmin,
  RequireModerator,
  RequireUser,
  SessionInfo,
  Settings,
  UserRecord,
  WsTicket
} from "./api.js"
import { BackendApi } from "../definition.js"
import { NotFound } from "../errors.js"
import { resolvedSession } from "../edge/guard.js"
import { parseAddress } from "../lookup.js"
import { own } from "../respond.js"
import { applyReferral, referrerForSignIn } from "../rewards/referrals.js"
import {
  AuthSettings,
  roleRank,
  SESSION_COOKIE,
  SESSION_TTL_MS,
  Sessions,
  type Role,
  type SessionUser,
  type SessionsService
} from "./sessions.js"
import { parseMessage } from "./siwe.js"

const seconds = (ms: number) => Math.floor(ms / 1000)

export const sessionInfo = (user: SessionUser) => ({
  address: user.address,
  role: user.role,
  method: user.method,
  owner: user.owner,
  smartAccount: user.smartAccount,
  createdAt: seconds(user.createdAt),
  expiresAt: seconds(user.expiresAt)
})

export const databaseDown = () => new IndexerUnavailable({ message: "the database is unavailable" })

/**
 * The address a sign-in body signs for: `address`, else the address of `message` (the body schema
 * has parsed it). Lowercase either way, as every stored address is.
 */
const signerOf = (payload: { readonly address?: string | undefined; readonly message?: string | undefined }) => {
  if (payload.address !== undefined) return parseAddress(payload.address)
  const parsed = payload.message === undefined ? undefined : Either.getOrUndefined(parseMessage(payload.message))
  if (parsed === undefined) {
    const problem = "required unless message (the signed challenge, which names its address) is sent"
    return Effect.fail(new ValidationFailed({ message: `address: ${problem}`, details: [{ path: "address", message: problem }] }))
  }
  return parseAddress(parsed.address)
}

/** The cookie's session (looked up by the guard, or here). */
export const authenticate = (sessions: SessionsService) => (cookie: Redacted.Redacted) =>
  Effect.gen(function* () {
    const token = Redacted.value(cookie)
    if (token === "") {
      return yield* new AuthRequired({
        message: "this endpoint needs a session: sign in with GET /api/auth/challenge and POST /api/auth/verify"
      })
    }
    const known = yield* FiberRef.get(resolvedSession)
    const lookup =
      Option.isSome(known) && known.value.token === token
        ? known.value.lookup
        : yield* sessions.lookup(token).pipe(Effect.mapError(databaseDown))
    if (lookup._tag === "Invalid") return yield* new AuthInvalid({ message: `${lookup.reason}: sign in again` })
    return lookup.user
  })

/** The session middleware demanding `minimum`. */
const authorize = (sessions: SessionsService, minimum: Role) => (cookie: Redacted.Redacted) =>
  Effect.gen(function* () {
    const user = yield* authenticate(sessions)(cookie)
    if (roleRank[user.role] < roleRank[minimum]) {
      return yield* new Forbidden({ message: `this endpoint needs the ${minimum} role; the session's user is a ${user.role}` })
    }
    return user
  })

export const SessionMiddlewareLive = Layer.mergeAll(
  Layer.effect(
    RequireUser,
    Effect.map(Sessions, (s) => RequireUser.of({ session: authenticate(s) }))
  ),
  Layer.effect(
    RequireModerator,
    Effect.map(Sessions, (s) => RequireModerator.of({ "session:moderator": authorize(s, "moderator") }))
  ),
  Layer.effect(
    RequireAdmin,
    Effect.map(Sessions, (s) => RequireAdmin.of({ "session:admin": authorize(s, "admin") }))
  )
)

export const setCookie = (value: string, maxAgeSeconds: number, secure: boolean) =>
  HttpApp.appendPreResponseHandler((_request, response) =>
    Effect.succeed(
      HttpServerResponse.unsafeSetCookie(response, SESSION_COOKIE, value, {
        httpOnly: true,
        sameSite: "lax",
        path: "/",
        maxAge: `${maxAgeSeconds} seconds`,
        secure
      })
    )
  )

const challengeAnswer = own(Challenge)
/** A session's description: `me`, and every sign-in (SIWE here, passkey and ECDSA in `aa/handlers.ts`). */
export const sessionAnswer = own(SessionInfo)
const settingsAnswer = own(Settings)
const ticketAnswer = own(WsTicket)
const logoutAnswer = own(Logout)
const userAnswer = own(UserRecord)

export const AuthLive = HttpApiBuilder.group(BackendApi, "auth", (handlers) =>
  Effect.gen(function* () {
    const sessions = yield* Sessions
    const settings = yield* AuthSettings
    const orUnavailable = <A, E>(effect: Effect.Effect<A, E>) =>
      Effect.catchIf(effect, (e): e is E => (e as { _tag?: unknown })?._tag === "SqlError", databaseDown) as Effect.Effect<
        A,
        Exclude<E, { _tag: "SqlError" }> | IndexerUnavailable
      >
    return handlers
      .handle("challenge", ({ urlParams }) =>
        challengeAnswer(() =>
          Effect.gen(function* () {
            const address = yield* parseAddress(urlParams.address)
            const challenge = yield* orUnavailable(sessions.issueChallenge(address))
            return {
              message: challenge.message,
              nonce: challenge.nonce,
              issuedAt: seconds(challenge.issuedAt),
              expiresAt: seconds(challenge.expiresAt)
            }
          })
        )
      )
      .handle("verify", ({ payload, urlParams }) =>
        sessionAnswer(() =>
          Effect.gen(function* () {
            const address = yield* signerOf(payload)
            // Rewards: a referral code is checked before the challenge is used, and applied once signed in (referrals.ts).
            const referrer =
              urlParams.ref === undefined
                ? undefined
                : yield* referrerForSignIn(urlParams.ref, address).pipe(Effect.catchTag("SqlError", databaseDown))
            const signIn = yield* orUnavailable(
              sessions.signIn({ address, signature: payload.signature, nonce: payload.nonce, message: payload.message })
            )
            if (referrer !== undefined) yield* applyReferral(address, referrer).pipe(Effect.catchTag("SqlError", databaseDown))
            yield* setCookie(signIn.token, seconds(SESSION_TTL_MS), settings.secureCookie)
            yield* Effect.logInfo("signed in").pipe(Effect.annotateLogs({ address, method: signIn.user.method }))
            return sessionInfo(signIn.user)
          })
        )
      )
      .handle("me", () => sessionAnswer(() => Effect.map(CurrentUser, sessionInfo)))
      .handle("settings", () => settingsAnswer(() => Effect.flatMap(CurrentUser, (user) => orUnavailable(sessions.settings(user.address)))))
      .handle("updateSettings", ({ payload }) =>
        settingsAnswer(() => Effect.flatMap(CurrentUser, (user) => orUnavailable(sessions.updateSettings(user.address, payload))))
      )
      .handle("wsTicket", () =>
        ticketAnswer(() =>
          Effect.gen(function* () {
            const request = yield* HttpServerRequest.HttpServerRequest
            // The middleware found this cookie's session live; a sign-out since then leaves no ticket.
            const issued = yield* orUnavailable(sessions.issueTicket(request.cookies[SESSION_COOKIE] ?? ""))
            if (issued === undefined) return yield* new AuthInvalid({ message: "session ended (signed out): sign in again" })
            return { ticket: issued.ticket, expiresAt: seconds(issued.expiresAt) }
          })
        )
      )
      .handle("logout", () =>
        logoutAnswer(() =>
          Effect.gen(function* () {
            const request = yield* HttpServerRequest.HttpServerRequest
            const token = request.cookies[SESSION_COOKIE]
            const revoked = token === undefined ? false : yield* orUnavailable(sessions.revoke(token))
            yield* setCookie("", 0, settings.secureCookie)
            return { revoked }
          })
        )
      )
  })
)

export const AdminLive = HttpApiBuilder.group(BackendApi, "admin", (handlers) =>
  Effect.gen(function* () {
    const sessions = yield* Sessions
    const record = (address: string) =>
      Effect.flatMap(sessions.user(address), (row) =>
        row === undefined
          ? Effect.fail(new NotFound({ message: `no user ${address}: nobody signed in with it` }))
          : Effect.succeed({ address: row.address, role: row.role, createdAt: seconds(Number(row.created_ms)) })
      )
    return handlers
      .handle("user", ({ path }) =>
        userAnswer(() =>
          Effect.flatMap(parseAddress(path.address), (address) => record(address).pipe(Effect.catchTag("SqlError", databaseDown)))
        )
      )
      .handle("setRole", ({ path, payload }) =>
        userAnswer(() =>
          Effect.gen(function* () {
            const address = yield* parseAddress(path.address)
            const admin = yield* CurrentUser
            yield* sessions.setRole(address, payload.role).pipe(Effect.catchTag("SqlError", databaseDown))
            yield* Effect.logInfo("role changed").pipe(Effect.annotateLogs({ address, role: payload.role, by: admin.address }))
            return yield* record(address).pipe(Effect.catchTag("SqlError", databaseDown))
          })
        )
      )
  })
)
