/**
 * Referral codes and the referral a sign-in applies (`POST /api/auth/verify?ref=<code>`).
 *
 * Invariants:
 * - a user has at most one code, made on first use (8 random characters of [a-z0-9], unique);
 * - a user is referred at sign-in at most once: the first code wins (the link's primary key is
 *   the referred user; a later code changes nothing), never by themselves (checked here and by
 *   the table), and never by someone they referred themselves (no two-user loop);
 * - the code is checked BEFORE the signature consumes the challenge, so a bad code is a
 *   VALIDATION_FAILED that changes nothing; the link is written after the session exists.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import { randomInt } from "node:crypto"
import { ValidationFailed } from "../../../schema/errors.js"
import { codeOwner, REFERRAL_CODE } from "./repository.js"

const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"

const newCode = () => Array.from({ length: 8 }, () => ALPHABET[randomInt(ALPHABET.length)]).join("")

const refused = (message: string) => new ValidationFailed({ message, details: [{ path: "ref", message }] })

/** `address`'s code (a signed-in user: app_user has its row), made now if it has none (a collision with another user's code draws again). */
export const referralCodeOf = (address: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    for (;;) {
      const now = yield* Clock.currentTimeMillis
      const rows = yield* sql<{ code: string }>`
        with made as (
          insert into referral_code (address, code, created_at) values (${address}, ${newCode()}, ${new Date(now)})
          on conflict do nothing returning code
        )
        select code from made union all select code from referral_code where address = ${address}`
      if (rows[0] !== undefined) return rows[0].code
      // The drawn code was another user's: draw again.
    }
  })

/** The referrer `code` names for `referee`: VALIDATION_FAILED for a malformed or unknown code, or one's own. */
export const referrerForSignIn = (code: string, referee: string) =>
  Effect.gen(function* () {
    if (!REFERRAL_CODE.test(code)) return yield* refused("ref must be a referral code: 8 characters a-z0-9")
    const owner = yield* codeOwner(code)
    if (owner === undefined) return yield* refused(`no referral code ${code}`)
    if (owner === referee) return yield* refused("a user cannot refer themselves")
    return owner
  })

/** Links `referee` to `referrer` unless it has a referrer already or referred `referrer` itself; true when linked now. */
export const applyReferral = (referee: string, referrer: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const now = yield* Clock.currentTimeMillis
    const rows = yield* sql`
      insert into referral_link (referee, referrer, created_at)
      select ${referee}, ${referrer}, ${new Date(now)}
      where not exists (select 1 from referral_link where referee = ${referrer} and referrer = ${referee})
      on conflict (referee) do nothing
      returning referee`
    return rows.length > 0
  })
