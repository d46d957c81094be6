/**
 * Who the upgrade request's session proves a client to be, for the user topics. The session
 * layer (SIWE sessions: cookie `predix_session`, token hashes in Postgres) gives the real lookup
 * (`SessionsRealtime`); `NoSessions` proves nobody, and user topics then answer AUTH_REQUIRED.
 */
import { Cookies } from "@effect/platform"
import { Context, Effect, Layer } from "effect"
import { makeSessions, SESSION_COOKIE, type AuthOptions } from "../backend/auth/sessions.js"

export interface SessionCredentials {
  /** The Cookie header, only when the request's Origin is allowed (a cross-site page must not ride a cookie). */
  readonly cookie: string | undefined
  /** The `?token=` of the upgrade URL (the deployed protocol's form). */
  readonly token: string | undefined
}

export class RealtimeSessions extends Context.Tag("RealtimeSessions")<
  RealtimeSessions,
  {
    /** The lowercase addresses the session stands for (its address and smart account); empty without a valid session. */
    readonly identify: (credentials: SessionCredentials) => Effect.Effect<ReadonlyArray<string>>
  }
>() {}

export const NoSessions = Layer.succeed(RealtimeSessions, { identify: () => Effect.succeed([]) })

/**
 * The SIWE sessions of `http/backend/auth/sessions.ts`: the `predix_session` cookie, or the same
 * token as `?token=`, looked up by its hash. The stream reads sessions only; the backend's own
 * layer bootstraps admins and sweeps expired rows.
 */
export const SessionsRealtime = (options: AuthOptions) =>
  Layer.effect(
    RealtimeSessions,
    Effect.map(makeSessions(options), (sessions) => ({
      identify: ({ cookie, token }: SessionCredentials) => {
        const fromCookie = cookie === undefined ? undefined : Cookies.parseHeader(cookie)[SESSION_COOKIE]
        const value = fromCookie ?? token
        if (value === undefined) return Effect.succeed([])
        return sessions.lookup(value).pipe(
          Effect.map((found): ReadonlyArray<string> => (found._tag === "Valid" ? [found.user.address] : [])),
          Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("stream session lookup failed", cause), []))
        )
      }
    }))
  )
