/**
 * Indexer rows -> the backend's records (`schema/backend-markets.ts`): the market union, events,
 * Money amounts and localized titles.
 */
import type { EventRecord as Event } from "../../read/events.js"
import type { MarketRecord } from "../../read/markets.js"
import type { BackendEvent, BackendEventDetail, BackendMarket, MarketStatus } from "../../../schema/backend-markets.js"
import { marketIdToHex, money } from "../../../schema/primitives.js"
import { marketSlug } from "../../../schema/market-slug.js"
import { localizedTitle, type Locale } from "../locale.js"

const capabilities = (status: MarketStatus) => ({
  trade: status === "active",
  redeem: status === "resolved",
  refund: status === "refunding"
})

const marketTitle = (market: MarketRecord, locale: Locale) =>
  localizedTitle(`market.${market.id}.title`, market.metadata?.title, locale, market.question)

const member = (market: MarketRecord, index: number, locale: Locale) => ({
  marketId: marketIdToHex(market.id),
  index,
  title: marketTitle(market, locale),
  yesPrice: market.yesPrice,
  volume: money(market.volume, 6, "USDC"),
  status: market.status
})

/**
 * The backend record of `market`; `members` are its event's markets in outcome order when it is
 * an outcome of an event (then it is `multi`), else undefined (`binary`).
 */
export const toBackendMarket = (market: MarketRecord, locale: Locale, members: ReadonlyArray<MarketRecord> | undefined): BackendMarket => {
  // The indexer's record's status (schema/market-status.ts), so every endpoint says the same.
  const status = market.status
  const common = {
    marketId: marketIdToHex(market.id),
    id: market.id,
    slug: marketSlug(market),
    title: marketTitle(market, locale),
    question: market.question,
    category: market.metadata?.category ?? null,
    featured: market.metadata?.featured ?? false,
    icon: market.metadata?.icon ?? null,
    status,
    endTime: market.endTime,
    createdAt: market.createdAt,
    createdBlock: market.createdBlock,
    creator: market.creator,
    oracle: market.oracle,
    volume: money(market.volume, 6, "USDC"),
    openInterest: money(market.totalCollateral, 6, "USDC"),
    tradeCount: market.tradeCount,
    lastTradeAt: market.lastTradeAt,
    outcome: market.isResolved && market.outcome !== null ? (market.outcome ? "YES" : "NO") : null,
    resolvedAt: market.resolvedAt,
    capabilities: capabilities(status)
  } as const
  const prices = { yesToken: market.yesToken, noToken: market.noToken, yesPrice: market.yesPrice, noPrice: market.noPrice }
  if (market.eventId === null || members === undefined) return { kind: "binary", ...common, binary: prices }
  return {
    kind: "multi",
    ...common,
    multi: {
      eventId: market.eventId,
      index: members.findIndex((m) => m.id === market.id),
      ...prices,
      members: members.map((m, i) => member(m, i, locale))
    }
  }
}

const eventTitle = (event: Event, locale: Locale) => localizedTitle(`event.${event.id}.name`, event.metadata?.title, locale, event.name)

export const toBackendEvent = (event: Event, locale: Locale): BackendEvent => ({
  eventId: event.id,
  slug: event.metadata?.slug ?? null,
  name: eventTitle(event, locale),
  category: event.metadata?.category ?? null,
  featured: event.metadata?.featured ?? false,
  icon: event.metadata?.icon ?? null,
  status: event.status,
  endTime: event.endTime,
  childMarketCount: event.marketCount,
  totalVolume: money(event.totalVolume, 6, "USDC"),
  winningIndex: event.winningIndex === null ? null : Number(event.winningIndex),
  capabilities: { trade: event.status === "active", redeem: event.status === "resolved", refund: event.status === "refunding" }
})

export const toBackendEventDetail = (event: Event, members: ReadonlyArray<MarketRecord>, locale: Locale): BackendEventDetail => ({
  ...toBackendEvent(event, locale),
  marketIds: event.marketIds.map(marketIdToHex),
  creator: event.creator,
  oracle: event.oracle,
  winningChildMarketId: event.winningMarketId === null ? null : marketIdToHex(event.winningMarketId),
  refundModeActive: event.refundMode,
  resolvedAt: event.closedAt,
  members: members.map((m, i) => member(m, i, locale))
})
