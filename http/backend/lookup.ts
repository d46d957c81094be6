/**
 * Market lookup by `idOrSlug` (spec: GET /api/markets/:idOrSlug): a decimal id, `0x` + 64 hex
 * digits (any case), or a display slug.
 *
 * Which error: something shaped like an id (all digits, or starting with 0x) that is not a valid
 * one (zero, beyond uint256, wrong length, not hex) is INVALID_MARKET_ID; neither id- nor
 * slug-shaped is INVALID_MARKET_ID too; a well-formed id or slug that names no market is
 * MARKET_NOT_FOUND.
 */
import { Effect, Either, Schema } from "effect"
import {
  EventNotFound,
  IndexerMarketNotFound,
  InvalidAddress,
  InvalidMarketId,
  InvalidParameter,
  MarketNotFound,
  ValidationFailed
} from "../../schema/errors.js"
import { Address, MarketId } from "../../schema/primitives.js"
import type { Market } from "../indexer/markets.js"
import { findMarketById, findMarketBySlug } from "./queries/markets.js"

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
    const market: Market | undefined = yield* "id" in key ? findMarketById(key.id) : findMarketBySlug(key.slug)
    return market === undefined ? yield* Effect.fail(marketNotFound(input)) : market
  })

type IndexerOnly = InstanceType<typeof IndexerMarketNotFound> | InstanceType<typeof EventNotFound> | InstanceType<typeof InvalidParameter>

/**
 * The indexer query modules' own errors as the backend's: no such market or event is
 * MARKET_NOT_FOUND (naming `input`), a rejected parameter combination (from after to) is
 * VALIDATION_FAILED.
 */
export const fromIndexer = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  input: string
): Effect.Effect<A, Exclude<E, IndexerOnly> | MarketNotFound | ValidationFailed, R> =>
  Effect.catchAll(effect, (error): Effect.Effect<never, Exclude<E, IndexerOnly> | MarketNotFound | ValidationFailed> => {
    if (error instanceof IndexerMarketNotFound || error instanceof EventNotFound) return Effect.fail(marketNotFound(input))
    if (error instanceof InvalidParameter)
      return Effect.fail(new ValidationFailed({ message: error.message, details: [{ path: "", message: error.message }] }))
    return Effect.fail(error as Exclude<E, IndexerOnly>)
  })
