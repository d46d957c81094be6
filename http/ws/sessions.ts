/**
 * Who the upgrade request's session proves a client to be, for the user topics. The session
 * layer (SIWE sessions: cookie `predix_session`, token hashes in Postgres) provides the real
 * lookup; until it is merged, `NoSessions` proves nobody and user topics answer AUTH_REQUIRED.
 */
import { Context, Effect, Layer } from "effect"

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
