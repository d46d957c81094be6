/**
 * The backend's market and event records (spec: "Backend market record", "Event (multi-outcome)
 * record"; protocol-facts section 5).
 *
 * A market record is a union on `kind`; a record of kind K carries a property named K with that
 * kind's data, so clients switch exhaustively on `kind`. Which kind a market is:
 * - `binary`: a standalone YES/NO market;
 * - `multi`: a market that is one outcome of a multi-outcome event (its `multi` names the event,
 *   its index in the event and the event's other members);
 * - `scalar`, `sports`, `grouped`: shapes fixed here for clients and documented in OpenAPI; the
 *   protocol has no on-chain marker for them, so today no market is given these kinds.
 */
import { Schema } from "effect"
import { MARKET_STATUS_DESCRIPTION, MARKET_STATUSES } from "./market-status.js"
import { Address, BlockNumber, LocalizedString, MarketIdHex, Money, Price, Timestamp, Uint256 } from "./primitives.js"

export { MARKET_STATUSES }
export const MarketStatus = Schema.Literal(...MARKET_STATUSES).annotations({
  identifier: "BackendMarketStatus",
  title: "Market status",
  description: MARKET_STATUS_DESCRIPTION
})
export type MarketStatus = typeof MarketStatus.Type

export const Capabilities = Schema.Struct({
  trade: Schema.Boolean.annotations({ description: "the router accepts trades now" }),
  redeem: Schema.Boolean.annotations({ description: "winning tokens can be redeemed (resolved)" }),
  refund: Schema.Boolean.annotations({ description: "tokens can be refunded (refund mode)" })
}).annotations({ identifier: "MarketCapabilities", title: "Market capabilities", description: "what a user can do with the market now" })

export const BinaryData = Schema.Struct({
  yesToken: Address,
  noToken: Address,
  yesPrice: Schema.NullOr(Price).annotations({ description: "latest YES price; null before the first trade" }),
  noPrice: Schema.NullOr(Price).annotations({ description: "1 - yesPrice; null before the first trade" })
}).annotations({ identifier: "BinaryData", title: "Binary data", description: "a YES/NO market's tokens and prices" })

export const MultiMember = Schema.Struct({
  marketId: MarketIdHex,
  index: Schema.Int.annotations({ description: "position in the event (winningIndex indexes it)" }),
  title: LocalizedString,
  yesPrice: Schema.NullOr(Price),
  volume: Money,
  status: MarketStatus
}).annotations({ identifier: "MultiMember", title: "Multi-outcome member", description: "one outcome (market) of an event" })

export const MultiData = Schema.Struct({
  eventId: Uint256.annotations({ description: "the event this market is an outcome of" }),
  index: Schema.Int.annotations({ description: "this market's position among the event's members" }),
  yesToken: Address,
  noToken: Address,
  yesPrice: Schema.NullOr(Price),
  noPrice: Schema.NullOr(Price),
  members: Schema.Array(MultiMember).annotations({ description: "every outcome of the event, this one included, in order" })
}).annotations({
  identifier: "MultiData",
  title: "Multi-outcome data",
  description: "a market that is one outcome of a multi-outcome event"
})

export const ScalarData = Schema.Struct({
  lowerBound: Schema.String.annotations({ description: "value at which YES pays 0 (decimal string)" }),
  upperBound: Schema.String.annotations({ description: "value at which YES pays 1 (decimal string)" }),
  unit: Schema.String.annotations({ description: 'unit of the bounds, e.g. "USD"' }),
  yesPrice: Schema.NullOr(Price)
}).annotations({
  identifier: "ScalarData",
  title: "Scalar data",
  description: "a market on a value within a range (no on-chain source yet)"
})

export const SportsData = Schema.Struct({
  league: Schema.String,
  homeTeam: LocalizedString,
  awayTeam: LocalizedString,
  startTime: Timestamp,
  yesPrice: Schema.NullOr(Price)
}).annotations({ identifier: "SportsData", title: "Sports data", description: "a market on a match (no on-chain source yet)" })

export const GroupedData = Schema.Struct({
  groupId: Schema.String,
  members: Schema.Array(MarketIdHex)
}).annotations({
  identifier: "GroupedData",
  title: "Grouped data",
  description: "markets shown together without a shared resolution (no on-chain source yet)"
})

/** Fields every market record has, whatever its kind. */
export const marketCommonFields = {
  marketId: MarketIdHex,
  id: Uint256.annotations({ description: "the same id as a decimal string" }),
  slug: Schema.NullOr(Schema.String).annotations({ description: "URL slug (display metadata); null when none" }),
  title: LocalizedString,
  question: Schema.String.annotations({ description: "the question as created on-chain" }),
  category: Schema.NullOr(Schema.String),
  featured: Schema.Boolean,
  icon: Schema.NullOr(Schema.String),
  status: MarketStatus,
  endTime: Timestamp,
  createdAt: Timestamp,
  createdBlock: BlockNumber,
  creator: Address,
  oracle: Address,
  volume: Money,
  openInterest: Money.annotations({ description: "collateral locked in the market (USDC)" }),
  tradeCount: Schema.Int,
  lastTradeAt: Schema.NullOr(Timestamp),
  outcome: Schema.NullOr(Schema.Literal("YES", "NO")).annotations({
    description: "winning side once resolved; null before or in refund mode"
  }),
  resolvedAt: Schema.NullOr(Timestamp),
  capabilities: Capabilities
}

const variant = <K extends string, D extends Schema.Schema.Any>(kind: K, data: D, identifier: string) =>
  Schema.Struct({ kind: Schema.Literal(kind), ...marketCommonFields, [kind]: data } as const as {
    kind: Schema.Literal<[K]>
  } & typeof marketCommonFields & { [P in K]: D }).annotations({ identifier, title: `${kind} market` })

export const BinaryMarket = variant("binary", BinaryData, "BinaryMarket")
export const MultiMarket = variant("multi", MultiData, "MultiMarket")
export const ScalarMarket = variant("scalar", ScalarData, "ScalarMarket")
export const SportsMarket = variant("sports", SportsData, "SportsMarket")
export const GroupedMarket = variant("grouped", GroupedData, "GroupedMarket")

export const BackendMarket = Schema.Union(BinaryMarket, MultiMarket, ScalarMarket, SportsMarket, GroupedMarket).annotations({
  identifier: "BackendMarket",
  title: "Market",
  description: "a market record: a union on kind; the property named after the kind holds that kind's data"
})
export type BackendMarket = typeof BackendMarket.Type

export const EVENT_STATUSES = ["active", "resolved", "refunding"] as const

export const BackendEvent = Schema.Struct({
  eventId: Uint256,
  slug: Schema.NullOr(Schema.String),
  name: LocalizedString,
  category: Schema.NullOr(Schema.String),
  featured: Schema.Boolean,
  icon: Schema.NullOr(Schema.String),
  status: Schema.Literal(...EVENT_STATUSES),
  endTime: Timestamp,
  childMarketCount: Schema.Int,
  totalVolume: Money,
  winningIndex: Schema.NullOr(Schema.Int),
  capabilities: Capabilities
}).annotations({ identifier: "BackendEvent", title: "Event", description: "a multi-outcome event (list form)" })
export type BackendEvent = typeof BackendEvent.Type

export const BackendEventDetail = Schema.Struct({
  ...BackendEvent.fields,
  marketIds: Schema.Array(MarketIdHex).annotations({ description: "the member markets in outcome order" }),
  creator: Address,
  oracle: Schema.NullOr(Address),
  winningChildMarketId: Schema.NullOr(MarketIdHex),
  refundModeActive: Schema.Boolean,
  resolvedAt: Schema.NullOr(Timestamp),
  members: Schema.Array(MultiMember)
}).annotations({ identifier: "BackendEventDetail", title: "Event detail", description: "a multi-outcome event with its members" })
export type BackendEventDetail = typeof BackendEventDetail.Type

export const ResolvedMarketId = Schema.Struct({
  marketId: MarketIdHex,
  id: Uint256,
  slug: Schema.NullOr(Schema.String)
}).annotations({
  identifier: "ResolvedMarketId",
  title: "Resolved market id",
  description: "the canonical ids of a market named by id or slug"
})
