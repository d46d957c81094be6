/** Handlers of the markets and events groups. */
import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { BackendCandle, BackendPricePoint, BackendTrade, OrderBook } from "../../../schema/backend-activity.js"
import { BackendEvent, BackendEventDetail, BackendMarket, ResolvedMarketId } from "../../../schema/backend-markets.js"
import { marketIdToHex } from "../../../schema/primitives.js"
import { marketSlug } from "../../../schema/market-slug.js"
import type { MarketRecord } from "../../read/markets.js"
import { read } from "../../core/db.js"
import { getEvent, listEvents } from "../../read/events.js"
import { readOrderBook } from "../../read/market-book.js"
import { listCandles, listPrices } from "../../read/market-prices.js"
import { listMarketTrades } from "../../read/market-trades.js"
import { toBackendBook, toBackendCandle, toBackendPricePoint, toBackendTrade } from "../trading/convert.js"
import { BackendApi } from "../definition.js"
import type { Locale } from "../locale.js"
import { eventNotFound, findMarket, fromIndexer, marketNotFound, parseEventIdOrSlug, parseIdOrSlug } from "../lookup.js"
import { MarketOutcome } from "./api.js"
import { chainNowAtHead, listHotRows, listMarketRows, readEventMembers } from "./repository.js"
import { marketJson } from "./market-json.js"
import { toBackendEvent, toBackendEventDetail, toBackendMarket } from "./records.js"
import { item, list } from "../respond.js"

const marketItem = item(BackendMarket, "hot", marketJson)
const marketList = list(BackendMarket, "hot", marketJson)

/** Backend records of `markets`, with their events' members for those that are outcomes of an event. */
const withMembers = (markets: ReadonlyArray<MarketRecord>, locale: Locale) =>
  Effect.map(readEventMembers([...new Set(markets.flatMap((m) => (m.eventId === null ? [] : [m.eventId])))]), (byEvent) =>
    markets.map((m) => toBackendMarket(m, locale, m.eventId === null ? undefined : byEvent.get(m.eventId.toString())))
  )

const chainNow = chainNowAtHead

/** The event `input` (an id or slug, `parseEventIdOrSlug`) names; none is NOT_FOUND, never MARKET_NOT_FOUND. */
const findEvent = (input: string) =>
  Effect.gen(function* () {
    const key = yield* parseEventIdOrSlug(input)
    let id: bigint | undefined
    if ("id" in key) id = key.id
    else {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* read(sql<{ id: string }>`select id from display_metadata where kind = 'event' and slug = ${key.slug}`)
      id = rows[0] === undefined ? undefined : BigInt(rows[0].id)
    }
    if (id === undefined) return yield* Effect.fail(eventNotFound(input))
    const answer = yield* getEvent(id).pipe(Effect.catchTag("EventNotFound", () => Effect.fail(eventNotFound(input))))
    return answer.data
  })

export const MarketsLive = HttpApiBuilder.group(BackendApi, "markets", (handlers) =>
  handlers
    .handle("list", ({ urlParams: q }) =>
      marketList(({ locale }) =>
        Effect.gen(function* () {
          const now = yield* chainNow
          const filter = {
            ...q,
            includeEventChildren: q.includeEventChildren || q.eventId !== undefined
          }
          const page = yield* listMarketRows(filter, now)
          const rows = yield* withMembers(
            page.rows.map((r) => r.market),
            locale
          )
          return { rows, total: page.total, limit: q.limit, offset: q.offset }
        })
      )
    )
    .handle("resolve", ({ urlParams }) =>
      item(
        ResolvedMarketId,
        "hot"
      )(() => Effect.map(findMarket(urlParams.idOrSlug), (m) => ({ marketId: marketIdToHex(m.id), id: m.id, slug: marketSlug(m) })))
    )
    .handle("hot", ({ urlParams }) =>
      marketList(({ locale }) =>
        Effect.gen(function* () {
          const now = yield* chainNow
          const rows = yield* listHotRows(urlParams.limit, now)
          const markets = yield* withMembers(
            rows.map((r) => r.market),
            locale
          )
          return { rows: markets, total: markets.length, limit: urlParams.limit, offset: 0 }
        })
      )
    )
    .handle("get", ({ path }) =>
      marketItem(({ locale }) =>
        Effect.gen(function* () {
          const market = yield* findMarket(path.idOrSlug)
          const [record] = yield* withMembers([market], locale)
          return record!
        })
      )
    )
    .handle("outcome", ({ path }) =>
      item(
        MarketOutcome,
        "hot"
      )(({ locale }) =>
        Effect.gen(function* () {
          const side = path.outcomeSlug.toLowerCase()
          if (side === "yes" || side === "no") {
            const market = yield* findMarket(path.idOrSlug)
            const [record] = yield* withMembers([market], locale)
            return {
              outcome: side === "yes" ? ("YES" as const) : ("NO" as const),
              token: side === "yes" ? market.yesToken : market.noToken,
              price: side === "yes" ? market.yesPrice : market.noPrice,
              market: record!
            }
          }
          // A member market of the event the market (or the event's own slug) names.
          const key = yield* parseIdOrSlug(path.idOrSlug)
          const market = yield* Effect.either(findMarket(path.idOrSlug))
          const eventId =
            market._tag === "Right"
              ? market.right.eventId
              : "slug" in key
                ? yield* Effect.map(Effect.either(findEvent(key.slug)), (e) => (e._tag === "Right" ? e.right.id : null))
                : null
          if (eventId === null) return yield* Effect.fail(marketNotFound(`${path.idOrSlug}/outcomes/${path.outcomeSlug}`))
          const members = (yield* readEventMembers([eventId])).get(eventId.toString()) ?? []
          const chosen = members.find((m) => marketSlug(m) === path.outcomeSlug)
          if (chosen === undefined) return yield* Effect.fail(marketNotFound(`${path.idOrSlug}/outcomes/${path.outcomeSlug}`))
          return { outcome: null, token: null, price: chosen.yesPrice, market: toBackendMarket(chosen, locale, members) }
        })
      )
    )
    .handle("orderbook", ({ path }) =>
      item(
        OrderBook,
        "hot"
      )(() =>
        Effect.gen(function* () {
          const market = yield* findMarket(path.idOrSlug)
          const book = yield* fromIndexer(readOrderBook(market.id), path.idOrSlug)
          return toBackendBook(book.data)
        })
      )
    )
    .handle("trades", ({ path, urlParams }) =>
      list(
        BackendTrade,
        "hot"
      )(() =>
        Effect.gen(function* () {
          const market = yield* findMarket(path.idOrSlug)
          const answer = yield* fromIndexer(listMarketTrades(market.id, urlParams), path.idOrSlug)
          return { rows: answer.data.map(toBackendTrade), total: answer.meta.count, limit: urlParams.limit, offset: urlParams.offset }
        })
      )
    )
    .handle("prices", ({ path, urlParams }) =>
      list(
        BackendPricePoint,
        "warm"
      )(() =>
        Effect.gen(function* () {
          const market = yield* findMarket(path.idOrSlug)
          const answer = yield* fromIndexer(listPrices(market.id, urlParams), path.idOrSlug)
          return { rows: answer.data.map(toBackendPricePoint), total: answer.meta.count, limit: urlParams.limit, offset: urlParams.offset }
        })
      )
    )
    .handle("candles", ({ path, urlParams }) =>
      list(
        BackendCandle,
        "warm"
      )(() =>
        Effect.gen(function* () {
          const market = yield* findMarket(path.idOrSlug)
          const answer = yield* fromIndexer(listCandles(market.id, urlParams), path.idOrSlug)
          return { rows: answer.data.map(toBackendCandle), total: answer.meta.count, limit: urlParams.limit, offset: urlParams.offset }
        })
      )
    )
)

export const EventsLive = HttpApiBuilder.group(BackendApi, "events", (handlers) =>
  handlers
    .handle("list", ({ urlParams: q }) =>
      list(
        BackendEvent,
        "hot"
      )(({ locale }) =>
        Effect.map(listEvents({ ...q }), (answer) => ({
          rows: answer.data.map((e) => toBackendEvent(e, locale)),
          total: answer.meta.count,
          limit: q.limit,
          offset: q.offset
        }))
      )
    )
    .handle("get", ({ path }) =>
      item(
        BackendEventDetail,
        "hot"
      )(({ locale }) =>
        Effect.gen(function* () {
          const event = yield* findEvent(path.eventIdOrSlug)
          const members = (yield* readEventMembers([event.id])).get(event.id.toString()) ?? []
          return toBackendEventDetail(event, members, locale)
        })
      )
    )
)
