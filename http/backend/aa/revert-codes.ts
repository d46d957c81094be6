/**
 * Revert data -> the spec's error codes (pure). A user operation's simulation or estimation that
 * fails reaches apps as:
 * - SLIPPAGE_EXCEEDED: the Router's `InsufficientOutput(uint256 actual, uint256 minimum)`;
 * - INSUFFICIENT_BALANCE: a collateral or outcome-share shortfall, the tokens' `require`s
 *   `Error("ERC20: balance")` (a transfer) and `Error("ERC20: burn")` (a merge's burn);
 * - MARKET_PAUSED: the Diamond's `Paused()`, the Exchange's `ExchangePaused()`, and the Router's
 *   and Exchange's `MarketNotTradable(uint256)` (paused, or no longer open for trading);
 * - MARKET_NOT_FOUND: the Diamond's `UnknownMarket(uint256)`. The Router and the Exchange answer
 *   `MarketNotTradable` for a market that does not exist too: the decoded revert carries its
 *   `marketId` so the caller asks the chain (`refineRevert`) and answers MARKET_NOT_FOUND then.
 *
 * The protocol's revert sits inside whatever wraps it (the account's call, the EntryPoint's
 * `FailedOpWithRevert`, the bundler's message text), so every hex string of the bundler's error
 * is searched, at every byte offset, for one of these errors that decodes cleanly there.
 */
import { Effect } from "effect"
import { decodeErrorResult, parseAbi, toFunctionSelector, type Hex } from "viem"
import { InsufficientBalance, MarketNotFound, MarketPaused, SlippageExceeded, type ErrorDetail } from "../../../schema/errors.js"

export type RevertCode = "SLIPPAGE_EXCEEDED" | "INSUFFICIENT_BALANCE" | "MARKET_PAUSED" | "MARKET_NOT_FOUND"

const ERRORS = parseAbi([
  "error InsufficientOutput(uint256 actual, uint256 minimum)",
  "error Paused()",
  "error ExchangePaused()",
  "error MarketNotTradable(uint256 marketId)",
  "error UnknownMarket(uint256 marketId)",
  "error Error(string reason)"
])

const KNOWN_SELECTORS = new Set(
  [
    "InsufficientOutput(uint256,uint256)",
    "Paused()",
    "ExchangePaused()",
    "MarketNotTradable(uint256)",
    "UnknownMarket(uint256)",
    "Error(string)"
  ].map((signature) => toFunctionSelector(signature).slice(2))
)

/** Error(string) reasons of a shortfall. */
const SHORTFALL_REASONS = new Set(["ERC20: balance", "ERC20: burn"])

export interface DecodedRevert {
  readonly code: RevertCode
  /** The error's signature and arguments, e.g. `InsufficientOutput(90, 100)`. */
  readonly error: string
  /** The protocol's revert data as found (from its selector on). */
  readonly data: Hex
  /** The market a `MarketNotTradable` names: paused, closed, or (`refineRevert`) nonexistent. */
  readonly marketId?: bigint
}

const describe = (name: string, args: ReadonlyArray<unknown> | undefined) =>
  `${name}(${(args ?? []).map((a) => (typeof a === "string" ? JSON.stringify(a) : String(a))).join(", ")})`

/** The known error at the start of `data`, if it decodes exactly there. */
const decodeAt = (data: Hex): DecodedRevert | undefined => {
  let decoded
  try {
    decoded = decodeErrorResult({ abi: ERRORS, data })
  } catch {
    return undefined
  }
  const error = describe(decoded.errorName, decoded.args as ReadonlyArray<unknown> | undefined)
  switch (decoded.errorName) {
    case "InsufficientOutput":
      return { code: "SLIPPAGE_EXCEEDED", error, data }
    case "Paused":
    case "ExchangePaused":
      return { code: "MARKET_PAUSED", error, data }
    case "MarketNotTradable":
      return { code: "MARKET_PAUSED", error, data, marketId: decoded.args[0] }
    case "UnknownMarket":
      return { code: "MARKET_NOT_FOUND", error, data }
    case "Error":
      return SHORTFALL_REASONS.has(decoded.args[0]) ? { code: "INSUFFICIENT_BALANCE", error, data } : undefined
  }
}

/** Hex strings (0x + even number of hex digits, at least a selector) anywhere in `value`. */
export const hexStringsIn = (value: unknown, found: Array<Hex> = [], depth = 0): Array<Hex> => {
  if (depth > 8 || found.length > 64) return found
  if (typeof value === "string") {
    for (const match of value.matchAll(/0x[0-9a-fA-F]{8,}/g)) {
      const hex = match[0].length % 2 === 0 ? match[0] : match[0].slice(0, -1)
      found.push(hex.toLowerCase() as Hex)
    }
  } else if (Array.isArray(value)) {
    for (const item of value) hexStringsIn(item, found, depth + 1)
  } else if (value !== null && typeof value === "object") {
    for (const item of Object.values(value)) hexStringsIn(item, found, depth + 1)
  }
  return found
}

/** Hex this long is not searched (a body limit keeps real errors far below). */
const MAX_SEARCHED_BYTES = 16_384

/**
 * The first known protocol revert inside `hex` (revert data, possibly wrapped): tried at every
 * byte offset, outermost first; at an offset, the shortest whole number of 32-byte words after
 * the selector that decodes is the error's exact encoding.
 */
export const decodeRevert = (hex: Hex): DecodedRevert | undefined => {
  const digits = hex.slice(2)
  if (digits.length / 2 > MAX_SEARCHED_BYTES) return undefined
  for (let at = 0; at + 8 <= digits.length; at += 2) {
    const selector = digits.slice(at, at + 8)
    if (!KNOWN_SELECTORS.has(selector)) continue
    const tail = digits.slice(at)
    for (let words = 0; 8 + words * 64 <= tail.length; words++) {
      const cut = `0x${tail.slice(0, 8 + words * 64)}` as Hex
      const decoded = decodeAt(cut)
      if (decoded !== undefined) return decoded
    }
  }
  return undefined
}

/** The first known protocol revert anywhere in a bundler error (its message, data, nested objects). */
export const decodeBundlerError = (error: unknown): DecodedRevert | undefined => {
  for (const hex of hexStringsIn(error)) {
    const decoded = decodeRevert(hex)
    if (decoded !== undefined) return decoded
  }
  return undefined
}

/**
 * `MarketNotTradable(id)` of a market the chain does not know becomes MARKET_NOT_FOUND; every
 * other revert stays as decoded. `exists` reads the chain (the indexer may not have seen a market
 * launched a block ago); when it cannot answer, the revert stays MARKET_PAUSED.
 */
export const refineRevert = <E, R>(
  revert: DecodedRevert,
  exists: (marketId: bigint) => Effect.Effect<boolean, E, R>
): Effect.Effect<DecodedRevert, never, R> =>
  revert.marketId === undefined
    ? Effect.succeed(revert)
    : exists(revert.marketId).pipe(
        Effect.map((known) => (known ? revert : { ...revert, code: "MARKET_NOT_FOUND" as const })),
        Effect.orElseSucceed(() => revert)
      )

/** The typed error of a decoded revert: its code, `message`, and the raw revert first in details. */
export const revertError = (revert: DecodedRevert, message: string, more: ReadonlyArray<ErrorDetail> = []) => {
  const details = [{ path: "revert", message: revert.data }, { path: "error", message: revert.error }, ...more]
  switch (revert.code) {
    case "SLIPPAGE_EXCEEDED":
      return new SlippageExceeded({ message, details })
    case "INSUFFICIENT_BALANCE":
      return new InsufficientBalance({ message, details })
    case "MARKET_NOT_FOUND":
      return new MarketNotFound({ message, details })
    case "MARKET_PAUSED":
      return new MarketPaused({ message, details })
  }
}
