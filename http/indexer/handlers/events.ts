/** Handlers of the events group. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { IndexerItem, IndexerList } from "../../../schema/envelopes.js"
import { IndexerApi } from "../definition.js"
import { Event } from "../events.js"
import { getEvent, listEvents } from "../../read/events.js"
import { respond } from "../respond.js"

const list = respond(IndexerList(Event))
const item = respond(IndexerItem(Event))

export const EventsLive = HttpApiBuilder.group(IndexerApi, "events", (handlers) =>
  handlers
    .handle("list", ({ urlParams }) => Effect.flatMap(listEvents(urlParams), list))
    .handle("get", ({ path }) => Effect.flatMap(getEvent(path.eventId), item))
)
