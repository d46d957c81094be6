/** `GET /api/events` and `GET /api/events/{eventId}`: multi-outcome events (groups of markets). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { IndexerItem, IndexerList } from "../../schema/envelopes.js"
import { EventNotFound } from "../../schema/errors.js"
import { Address, Amount6, BlockNumber, Timestamp, TxHash, Uint256 } from "../../schema/primitives.js"
import { booleanParam, eventIdParam, literalParam, NoQuery, optional, page, slugParam, strictQuery } from "../core/params.js"
import { Count, DisplayMetadata } from "./records.js"

export const EVENT_STATUSES = ["active", "resolved", "refunding"] as const

export const Event = Schema.Struct({
  id: Uint256.annotations({ description: "event id, decimal string" }),
  name: Schema.String,
  creator: Address,
  oracle: Schema.NullOr(Address).annotations({ description: "the event's oracle; null when the deployed event carries none" }),
  endTime: Timestamp,
  marketIds: Schema.Array(Uint256).annotations({ description: "the member markets, in outcome order (winningIndex indexes this list)" }),
  marketCount: Count,
  state: Schema.Literal("CREATED", "RESOLVED", "REFUND"),
  status: Schema.Literal(...EVENT_STATUSES).annotations({ description: "active (CREATED), resolved (RESOLVED) or refunding (REFUND)" }),
  isResolved: Schema.Boolean,
  refundMode: Schema.Boolean,
  winningIndex: Schema.NullOr(Uint256).annotations({
    description:
      "index into marketIds of the winning market, a decimal string (a uint256 on-chain); from the event when it carries it, else the position of the member market resolved YES; null until resolved"
  }),
  winningMarketId: Schema.NullOr(Uint256).annotations({ description: "marketIds[winningIndex]; null until resolved" }),
  resolver: Schema.NullOr(Address),
  closedAt: Schema.NullOr(Timestamp).annotations({ description: "when it was resolved or put in refund mode" }),
  totalVolume: Amount6.annotations({ description: "router volume of the member markets (USDC)" }),
  createdAt: Timestamp,
  createdBlock: BlockNumber,
  createdTx: TxHash,
  metadata: Schema.NullOr(DisplayMetadata)
}).annotations({ identifier: "Event", title: "Event", description: "a multi-outcome event: a group of markets of which one wins" })
export type Event = typeof Event.Type

export const EventListQuery = strictQuery({
  status: optional(literalParam("status", EVENT_STATUSES, "only events in this state (default: all)")),
  category: optional(slugParam("category", "only events of this display category")),
  featured: optional(booleanParam("featured", "only featured (true) or only non-featured (false) events")),
  ...page
})
export type EventListQuery = typeof EventListQuery.Type

export const EventPath = Schema.Struct({ eventId: eventIdParam("eventId", "event id") })

export class EventsGroup extends HttpApiGroup.make("events")
  .add(
    HttpApiEndpoint.get("list", "/api/events")
      .setUrlParams(EventListQuery)
      .addSuccess(IndexerList(Event))
      .annotate(OpenApi.Summary, "Multi-outcome events, newest (highest id) first")
  )
  .add(
    HttpApiEndpoint.get("get", "/api/events/:eventId")
      .setPath(EventPath)
      .setUrlParams(NoQuery)
      .addSuccess(IndexerItem(Event))
      .addError(EventNotFound.wire)
      .annotate(OpenApi.Summary, "One event with its marketIds and winningIndex")
  ) {}
