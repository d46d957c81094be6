/**
 * Event groups (multi-outcome events of the event facet): created, resolved, refund mode.
 *
 * Invariants:
 * - an event is created once; its name, creator, end time and child market ids never change;
 * - `state` moves CREATED -> RESOLVED or CREATED -> REFUND and never back; a later resolution or
 *   refund of a closed event changes nothing (as isResolved never flips back for markets);
 * - `winningIndex` comes from the deployed EventResolved, which carries it; the spec form does
 *   not, and then it stays null.
 */
import type { DomainEventOf } from "../../schema/domain-events.js"
import type { Located } from "./model.js"
import { getRow, putRow, rowKey } from "./rows.js"
import type { State } from "./state.js"
import type { EventGroupRow } from "./model-governance.js"

export const eventGroupKey = (id: bigint) => rowKey(id)

const group = (s: State, id: bigint, what: string): EventGroupRow => {
  const row = getRow(s.rows.eventGroups, eventGroupKey(id), "event_group")
  if (row === undefined) throw new Error(`${what} for unknown event ${id}`)
  return row
}

export const onEventCreated = (s: State, e: DomainEventOf<"EventCreated">, at: Located): void => {
  const key = eventGroupKey(e.eventId)
  if (getRow(s.rows.eventGroups, key, "event_group") !== undefined) throw new Error(`event ${e.eventId} created twice`)
  putRow(
    s.rows.eventGroups,
    key,
    {
      id: e.eventId,
      name: e.name,
      creator: e.creator,
      endTime: e.endTime,
      marketIds: [...e.marketIds],
      oracle: e.oracle,
      winningIndex: null,
      state: "CREATED",
      resolver: null,
      closedAt: null,
      createdAt: at.timestamp,
      createdBlock: at.block,
      createdTx: at.txHash
    },
    "event_group"
  )
}

export const onEventResolved = (s: State, e: DomainEventOf<"EventResolved">, at: Located): void => {
  const g = group(s, e.eventId, e._tag)
  if (g.state !== "CREATED") return
  g.state = "RESOLVED"
  g.winningIndex = e.winningIndex
  g.resolver = e.resolver
  g.closedAt = at.timestamp
}

export const onEventRefundMode = (s: State, e: DomainEventOf<"EventRefundModeEnabled">, at: Located): void => {
  const g = group(s, e.eventId, e._tag)
  if (g.state !== "CREATED") return
  g.state = "REFUND"
  g.resolver = e.enabler
  g.closedAt = at.timestamp
}
