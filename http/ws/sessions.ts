/**
 * Who the upgrade request's session proves a client to be, for the user topics. The session
 * layer (SIWE sessions: cookie `predix_session`, token hashes in Postgres) gives the real lookup
 * (`SessionsRealtime`); `NoSessions` proves nobody, and user topics then answer AUTH_REQUIRED.
 */
import { Cookies } from "@effect/platform"
import { Context, Effect, Layer } from "effect"
import { authSettingsOf, makeSessions, SESSION_COOKIE, type AuthOptions, type SessionLookup } from "../backend/auth/sessions.js"

export interface SessionCredentials {
  /** The Cookie header, only when the request's Origin is allowed (a cross-site page must not ride a cookie). */
  readonly cookie: string | undefined
  /** The `?token=` of the upgrade URL (the deployed protocol's form). */
  readonly token: string | undefined
  /** The `?ticket=` of the upgrade URL (`POST /api/auth/ws-ticket`): single use, 30 s. */
  readonly ticket?: string | undefined
  /** The upgrade request's Origin header (browsers send it; scripts need not). */
  readonly origin?: string | undefined
}

export class RealtimeSessions extends Context.Tag("predix/RealtimeSessions")<
  RealtimeSessions,
  {
    /** The lowercase addresses the session stands for (its address and smart account); empty without a valid session. */
    readonly identify: (credentials: SessionCredentials) => Effect.Effect<ReadonlyArray<string>>
  }
>() {}

export const NoSessions = Layer.succeed(RealtimeSessions, { identify: () => Effect.succeed([]) })

/**
 * The SIWE sessions of `http/backend/auth/sessions.ts`: the `predix_session` cookie, the same
 * token as `?token=`, or a ticket as `?ticket=`, looked up by its hash. A ticket counts only from
 * an allowed origin (PUBLIC_URL's or CORS_ORIGINS, as for the REST API's credentialed requests) or
 * from a client that sends no Origin (not a browser page): a page of another site that got hold of
 * one proves nothing with it, and the ticket is not spent. A ticket is spent when the connection
 * opens, whether or not a user topic follows. The stream reads sessions only; the backend's own
 * layer bootstraps admins and sweeps expired rows.
 */
export const SessionsRealtime = (options: AuthOptions) =>
  Layer.effect(
    RealtimeSessions,
    Effect.map(makeSessions(options), (sessions) => {
      const { allowedOrigins } = authSettingsOf(options)
      const addresses = (found: SessionLookup): ReadonlyArray<string> => (found._tag === "Valid" ? [found.user.address] : [])
      return {
        identify: ({ cookie, token, ticket, origin }: SessionCredentials) => {
          const fromCookie = cookie === undefined ? undefined : Cookies.parseHeader(cookie)[SESSION_COOKIE]
          const value = fromCookie ?? token
          const ticketAllowed = ticket !== undefined && (origin === undefined || allowedOrigins.has(origin))
          const lookup: Effect.Effect<SessionLookup | undefined, unknown> =
            value !== undefined
              ? sessions.lookup(value)
              : ticketAllowed
                ? sessions
                    .redeemTicket(ticket)
                    .pipe(
                      Effect.tap((found) =>
                        found._tag === "Invalid"
                          ? Effect.logInfo("stream ticket refused").pipe(Effect.annotateLogs({ reason: found.reason }))
                          : Effect.void
                      )
                    )
                : ticket !== undefined
                  ? Effect.as(
                      Effect.logInfo("stream ticket from a disallowed origin ignored").pipe(Effect.annotateLogs({ origin })),
                      undefined
                    )
                  : Effect.succeed(undefined)
          return lookup.pipe(
            Effect.map((found) => (found === undefined ? [] : addresses(found))),
            Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("stream session lookup failed", cause), []))
          )
        }
      }
    })
  )
