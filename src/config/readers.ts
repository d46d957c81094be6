/**
 * The readers of configuration values: each turns the raw text of one environment variable into
 * its value, or into a message saying what is wrong (the caller adds the variable's name).
 *
 * Invariant: a reader is pure and never echoes a secret; messages quote the raw text only where
 * it cannot hold one (URLs are shown with their password hidden, keys not at all).
 */
import { Either, LogLevel, Redacted } from "effect"
import * as Path from "node:path"
import { parseTrustProxy, type TrustProxy } from "../../http/backend/edge/client-ip.js"
import { parseAddress } from "../../schema/primitives.js"

/** Raw text to value, or the message saying what is wrong with it. */
export type Reader<A> = (raw: string) => Either.Either<A, string>

/** Hides the password of a connection URL in messages. */
export const redactUrl = (raw: string): string => raw.replace(/(\/\/[^:/@]+:)[^@]*@/, "$1***@")

/**
 * A configured endpoint as logs and the start screen show it: `scheme://host:port`, with `/…` when
 * a path, a query or credentials were hidden. A provider's API key usually sits in the path
 * (`/v2/KEY`) or the query (`?apikey=`), a password in the user info.
 */
export const displayUrl = (raw: string): string => {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return "(not a URL)"
  }
  const hidden = (url.pathname !== "" && url.pathname !== "/") || url.search !== "" || url.username !== "" || url.password !== ""
  return `${url.protocol}//${url.host}${hidden ? "/…" : ""}`
}

/** An integer in [min, max], read from a decimal string with nothing else in it. */
export const boundedInteger =
  (min: number, max: number, what: string): Reader<number> =>
  (raw) => {
    const text = raw.trim()
    if (!/^\d+$/.test(text)) return Either.left(`expected ${what}, got "${raw}"`)
    const value = Number(text)
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      return Either.left(`expected ${what} between ${min} and ${max}, got ${text}`)
    }
    return Either.right(value)
  }

/** A positive integer as bigint (gas figures). */
export const positiveBigint: Reader<bigint> = (raw) =>
  Either.map(boundedInteger(1, Number.MAX_SAFE_INTEGER, "a positive integer")(raw), BigInt)

/** A URL with one of `schemes`, as written (trimmed). */
export const urlWithSchemes =
  (schemes: ReadonlyArray<string>): Reader<string> =>
  (raw) => {
    let url: URL
    try {
      url = new URL(raw.trim())
    } catch {
      return Either.left(`expected a URL (${schemes.join(", ")}), got "${redactUrl(raw)}"`)
    }
    const scheme = url.protocol.replace(/:$/, "")
    if (!schemes.includes(scheme)) return Either.left(`expected a URL with scheme ${schemes.join(", ")}, got "${scheme}:"`)
    return Either.right(raw.trim())
  }

/** A connection URL, kept redacted from here on: it may hold a password. */
export const secretUrl =
  (schemes: ReadonlyArray<string>): Reader<Redacted.Redacted<string>> =>
  (raw) =>
    Either.map(urlWithSchemes(schemes)(raw), Redacted.make)

const logLevels: Record<string, LogLevel.LogLevel> = {
  all: LogLevel.All,
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warning: LogLevel.Warning,
  warn: LogLevel.Warning,
  error: LogLevel.Error,
  fatal: LogLevel.Fatal,
  none: LogLevel.None
}

export const logLevel: Reader<LogLevel.LogLevel> = (raw) => {
  const level = logLevels[raw.trim().toLowerCase()]
  return level === undefined
    ? Either.left(`expected one of trace, debug, info, warning, error, fatal, none, got "${raw}"`)
    : Either.right(level)
}

export const nonEmpty: Reader<string> = (raw) => (raw.trim() === "" ? Either.left("must not be empty") : Either.right(raw.trim()))

/** A path, absolute from the working directory the process started in. */
export const path: Reader<string> = (raw) => Either.map(nonEmpty(raw), (p) => Path.resolve(p))

/** One of `values`, case-insensitive. */
export const oneOf =
  <A extends string>(values: ReadonlyArray<A>): Reader<A> =>
  (raw) => {
    const value = raw.trim().toLowerCase() as A
    return values.includes(value) ? Either.right(value) : Either.left(`expected one of ${values.join(", ")}, got "${raw}"`)
  }

/** `on` or `off`. */
export const onOff: Reader<boolean> = (raw) => Either.map(oneOf(["on", "off"] as const)(raw), (v) => v === "on")

// The value is never echoed: it is a secret.
export const privateKey: Reader<Redacted.Redacted<`0x${string}`>> = (raw) => {
  const key = raw.trim().toLowerCase()
  return /^0x[0-9a-f]{64}$/.test(key)
    ? Either.right(Redacted.make(key as `0x${string}`))
    : Either.left("expected 0x followed by 64 hex digits (value not shown)")
}

/** A decimal ETH amount as wei. */
export const ether: Reader<bigint> = (raw) => {
  const match = /^(\d+)(?:\.(\d{1,18}))?$/.exec(raw.trim())
  if (match === null) return Either.left(`expected a decimal amount of ETH with at most 18 decimal places, got "${raw}"`)
  return Either.right(BigInt(match[1]!) * 10n ** 18n + BigInt((match[2] ?? "").padEnd(18, "0")))
}

/** A comma-separated list, each item checked by `item` (which returns the normal form or an error message); empty items are skipped. */
export const commaList =
  (item: Reader<string>): Reader<ReadonlyArray<string>> =>
  (raw) => {
    const items: Array<string> = []
    for (const text of raw
      .split(",")
      .map((i) => i.trim())
      .filter((i) => i !== "")) {
      const parsed = item(text)
      if (Either.isLeft(parsed)) return Either.left(parsed.left)
      items.push(parsed.right)
    }
    return Either.right(items)
  }

export const origin: Reader<string> = (item) => {
  try {
    const url = new URL(item)
    if (url.protocol !== "http:" && url.protocol !== "https:") return Either.left(`expected an http(s) origin, got "${item}"`)
    return Either.right(url.origin)
  } catch {
    return Either.left(`expected an origin such as https://app.example.com, got "${item}"`)
  }
}

export const address = (item: string): Either.Either<string, string> =>
  Either.mapLeft(parseAddress(item), () => `expected 0x-prefixed 20-byte addresses, got "${item}"`)

export const trustProxy: Reader<TrustProxy> = parseTrustProxy
