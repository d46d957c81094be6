/**
 * Market lookup by `idOrSlug` (spec: GET /api/markets/:idOrSlug): a decimal id, `0x` + 64 hex
 * digits (any case), or a display slug.
 *
 * Which error: something shaped like an id (all digits, or starting with 0x) that is not a valid
 * one (zero, beyond uint256, wrong length, not hex) is INVALID_MARKET_ID; neither id- nor
 * slug-shaped is INVALID_MARKET_ID too; a well-formed id or slug that names no market is
 * MARKET_NOT_FOUND.
 *
 * Event lookup by `eventIdOrSlug` (GET /api/events/:eventIdOrSlug): all digits is an id, anything
 * else a slug. One that is neither a valid id nor a slug is malformed, 400 VALIDATION_FAILED, and
 * never queried; a well-formed one that names no event is 404 NOT_FOUND. (MARKET_NOT_FOUND would
 * tell the client a market is missing: the spec's closed set has no event code, and NOT_FOUND is
 * the backend's one code beyond it, `errors.ts`.)
 */
import { Effect, Either, Schema } from "effect"
import {
  IndexerMarketNotFound,
  InvalidAddress,
  InvalidMarketId,
  InvalidParameter,
  MarketNotFound,
  ValidationFailed
} from "../../schema/errors.js"
import { Address, MarketId } from "../../schema/primitives.js"
import type { MarketRecord } from "../read/markets.js"
import { NotFound } from "./errors.js"
import { findMarketById, findMarketBySlug } from "./markets/repository.js"

const SLUG = /^[a-z0-9]+(-[a-z0-9]+)*$/
const decodeMarketId = Schema.decodeUnknownEither(MarketId)
const decodeAddress = Schema.decodeUnknownEither(Address)

export type MarketKey = { readonly id: bigint } | { readonly slug: string }

const shown = (s: string) => JSON.stringify(s.length > 80 ? `${s.slice(0, 77)}...` : s)

export const parseIdOrSlug = (input: string): Effect.Effect<MarketKey, InvalidMarketId> => {
  if (/^[0-9]+$/.test(input) || /^0[xX]/.test(input)) {
    const id = decodeMarketId(input)
    return Either.isRight(id)
      ? Effect.succeed({ id: id.right })
      : Effect.fail(
          new InvalidMarketId({ message: `invalid market id ${shown(input)}: a decimal id from 1, or 0x followed by 64 hex digits` })
        )
  }
  return input.length <= 64 && SLUG.test(input)
    ? Effect.succeed({ slug: input })
    : Effect.fail(
        new InvalidMarketId({ message: `invalid market id or slug ${shown(input)}: a decimal id, 0x followed by 64 hex digits, or a slug` })
      )
}

/** A market id alone (no slug): the `/pricing` and trading paths. */
export const parseMarketId = (input: string): Effect.Effect<bigint, InvalidMarketId> => {
  const id = decodeMarketId(input)
  return Either.isRight(id)
    ? Effect.succeed(id.right)
    : Effect.fail(
        new InvalidMarketId({ message: `invalid market id ${shown(input)}: a decimal id from 1, or 0x followed by 64 hex digits` })
      )
}

export const parseAddress = (input: string): Effect.Effect<Address, InvalidAddress> => {
  const address = decodeAddress(input)
  return Either.isRight(address)
    ? Effect.succeed(address.right)
    : Effect.fail(new InvalidAddress({ message: `invalid address ${shown(input)}: 0x followed by 40 hex digits` }))
}

export const marketNotFound = (input: string) => new MarketNotFound({ message: `no market ${shown(input)}` })

/** The market `input` names. */
export const findMarket = (input: string) =>
  Effect.gen(function* () {
    const key = yield* parseIdOrSlug(input)
    const market: MarketRecord | undefined = yield* "id" in key ? findMarketById(key.id) : findMarketBySlug(key.slug)
    return market === undefined ? yield* Effect.fail(marketNotFound(input)) : market
  })

export type EventKey = { readonly id: bigint } | { readonly slug: string }

export const parseEventIdOrSlug = (input: string): Effect.Effect<EventKey, ValidationFailed> => {
  if (/^[1-9][0-9]{0,77}$/.test(input) && BigInt(input) < 1n << 256n) return Effect.succeed({ id: BigInt(input) })
  if (!/^[0-9]+$/.test(input) && input.length <= 64 && SLUG.test(input)) return Effect.succeed({ slug: input })
  const problem = /^[0-9]+$/.test(input)
    ? `invalid event id ${shown(input)}: a decimal id from 1, below 2^256`
    : `invalid event id or slug ${shown(input)}: a decimal id from 1, or a slug (lowercase letters and digits in hyphen-separated words, at most 64 characters)`
  return Effect.fail(new ValidationFailed({ message: problem, details: [{ path: "eventIdOrSlug", message: problem }] }))
}

export const eventNotFound = (input: string) => new NotFound({ message: `no event ${shown(input)}` })

type IndexerOnly = InstanceType<typeof IndexerMarketNotFound> | InstanceType<typeof InvalidParameter>

/**
 * The indexer query modules' own errors as the backend's: no such market is MARKET_NOT_FOUND
 * (naming `input`), a rejected parameter combination (from after to) is VALIDATION_FAILED. (No
 * such event is the caller's to say: `eventNotFound`.)
 */
export const fromIndexer = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  input: string
): Effect.Effect<A, Exclude<E, IndexerOnly> | MarketNotFound | ValidationFailed, R> =>
  Effect.catchAll(effect, (error): Effect.Effect<never, Exclude<E, IndexerOnly> | MarketNotFound | ValidationFailed> => {
    if (error instanceof IndexerMarketNotFound) return Effect.fail(marketNotFound(input))
    if (error instanceof InvalidParameter)
      return Effect.fail(new ValidationFailed({ message: error.message, details: [{ path: "", message: error.message }] }))
    return Effect.fail(error as Exclude<E, IndexerOnly>)
  })
