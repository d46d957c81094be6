/**
 * WebSocket tickets: a short-lived, single-use credential a signed-in app trades its session for
 * (`POST /api/auth/ws-ticket`) and hands to the stream as `?ticket=` (`http/ws/sessions.ts`). An
 * app on another origin cannot give its HttpOnly session cookie to a WebSocket, and putting the
 * 7-day session token itself in a URL would leave it in logs and histories; a ticket there is
 * worthless a moment later.
 *
 * Invariants:
 * - a ticket is 256 random bits; only its SHA-256 is stored or logged;
 * - it is valid `TICKET_TTL_MS` after issue and opens at most one connection: spending it is one
 *   conditional UPDATE (`consumed_at is null and expires_at > now`), so two connections racing
 *   with one ticket get one session;
 * - it is worth what its session is worth when spent: a signed-out or expired session's tickets
 *   prove nobody (and its rows go with the session's);
 * - time comes from Effect's `Clock`, as for sessions.
 */
import type { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import { randomBytes } from "node:crypto"

/** How long a ticket may wait to be used: enough to open a socket right after asking, no more. */
export const TICKET_TTL_MS = 30_000

/** 32 random bytes, base64url: 43 characters. Anything else is no ticket and is never looked up. */
export const TICKET_FORM = /^[A-Za-z0-9_-]{43}$/

export interface Ticket {
  readonly ticket: string
  readonly expiresAt: number
}

/** The session a spent ticket stood for, or why it stands for none. */
export type Redeemed =
  | { readonly _tag: "Session"; readonly sessionHash: string }
  | { readonly _tag: "Refused"; readonly reason: "malformed" | "unknown" | "used" | "expired" }

export const makeTickets = (sql: SqlClient.SqlClient, hashToken: (token: string) => string) => {
  /** A ticket for the live session of `sessionToken`; undefined when that session is not live. */
  const issue = (sessionToken: string) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const ticket = randomBytes(32).toString("base64url")
      const expiresAt = now + TICKET_TTL_MS
      const rows = yield* sql`
        insert into ws_ticket (ticket_hash, session_hash, created_at, expires_at)
        select decode(${hashToken(ticket)}, 'hex'), token_hash, ${new Date(now)}, ${new Date(expiresAt)}
        from auth_session
        where token_hash = decode(${hashToken(sessionToken)}, 'hex') and revoked_at is null and expires_at > ${new Date(now)}
        returning 1 as one`
      return rows.length === 0 ? undefined : ({ ticket, expiresAt } satisfies Ticket)
    })

  /** Spends `ticket`: its session's token hash (the caller checks the session), or why not. */
  const redeem = (ticket: string) =>
    Effect.gen(function* () {
      if (!TICKET_FORM.test(ticket)) return { _tag: "Refused", reason: "malformed" } as Redeemed
      const now = yield* Clock.currentTimeMillis
      const hash = hashToken(ticket)
      const spent = yield* sql<{ session_hash: string }>`
        update ws_ticket set consumed_at = ${new Date(now)}
        where ticket_hash = decode(${hash}, 'hex') and consumed_at is null and expires_at > ${new Date(now)}
        returning encode(session_hash, 'hex') as session_hash`
      if (spent[0] !== undefined) return { _tag: "Session", sessionHash: spent[0].session_hash } as Redeemed
      const [row] = yield* sql<{ used: boolean }>`
        select consumed_at is not null as used from ws_ticket where ticket_hash = decode(${hash}, 'hex')`
      return { _tag: "Refused", reason: row === undefined ? "unknown" : row.used ? "used" : "expired" } as Redeemed
    })

  /** Tickets past their expiry go (a minute later: nothing can spend them). */
  const sweep = Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    yield* sql`delete from ws_ticket where expires_at < ${new Date(now - 60_000)}`
  })

  return { issue, redeem, sweep } as const
}
