/**
 * Which database failures are outages. A statement can fail because the database is not there
 * (connection refused or lost, a timeout, an administrator's shutdown, resources exhausted) or
 * because of the statement itself (a value the type refuses, a constraint, a bug in the SQL).
 * Only the first kind says anything about the database's health: a breaker counts it, and it is
 * answered 503. The second kind is the request's doing or ours, and must never open a breaker
 * (one cheap bad request would otherwise take reads away from every user).
 *
 * The rule, by SQLSTATE class (PostgreSQL Appendix A): 08 connection exception, 28 invalid
 * authorization, 3D invalid catalog name, 53 insufficient resources, 57 operator intervention
 * (57014 a statement timeout, 57P01 admin shutdown), 58 system error and XX internal error are
 * outages; every other class (22 data exception, 23 integrity constraint, 42 syntax or access
 * rule, ...) is a statement error. A failure without a SQLSTATE (the driver's socket errors, a
 * pool that cannot connect) is an outage.
 */
import { SqlError } from "@effect/sql/SqlError"

const OUTAGE_CLASSES = new Set(["08", "28", "3D", "53", "57", "58", "XX"])

/** The SQLSTATE the database answered with, if the failure came from the database. */
export const sqlState = (error: SqlError): string | undefined => {
  // The driver's DatabaseError carries the server's severity beside its code; a socket error's
  // code (EPIPE, ECONNRESET) is no SQLSTATE even when it has five letters.
  const cause = error.cause as { readonly code?: unknown; readonly severity?: unknown } | null | undefined
  if (typeof cause !== "object" || cause === null || typeof cause.severity !== "string") return undefined
  return typeof cause.code === "string" && /^[0-9A-Z]{5}$/.test(cause.code) ? cause.code : undefined
}

/** Whether `error` says the database is unreachable or unwell (not that a statement was refused). */
export const isDatabaseOutage = (error: SqlError): boolean => {
  const state = sqlState(error)
  return state === undefined || OUTAGE_CLASSES.has(state.slice(0, 2))
}

/** A statement refused because of a value the request carried (class 22, data exception). */
export const isRefusedValue = (error: unknown): error is SqlError => error instanceof SqlError && sqlState(error)?.startsWith("22") === true
