/**
 * The `/ws/realtime` message protocol (docs/websocket.md shows a session).
 *
 * Client: `subscribe` / `unsubscribe` {topic, marketId} or {topic, subject} for user topics,
 * `resume` {topic, marketId|subject, stream, seq} after a gap or a reconnect, `pong`.
 * Server: `subscribed`, `snapshot` {stream, seq, block, hash, data}, `delta` {stream, seq, block,
 * hash, reorg, changes} with seq + 1 per (topic, market or subject) stream, `unsubscribed`,
 * `error` {code, message}, `ping`.
 */
import { Schema } from "effect"

const Target = {
  topic: Schema.String,
  marketId: Schema.optional(Schema.String),
  subject: Schema.optional(Schema.String)
}

export const ClientMessage = Schema.Union(
  Schema.Struct({ type: Schema.Literal("subscribe", "unsubscribe"), ...Target }),
  Schema.Struct({
    type: Schema.Literal("resume"),
    ...Target,
    /** The `stream` of the snapshot the client holds: seq numbers count within one stream. */
    stream: Schema.String,
    seq: Schema.NonNegativeInt
  }),
  Schema.Struct({ type: Schema.Literal("pong") })
)
export type ClientMessage = typeof ClientMessage.Type

/** Codes of `error` messages. */
export type ErrorCode =
  | "BAD_JSON"
  | "BAD_MESSAGE"
  | "INVALID_TOPIC"
  | "INVALID_MARKET_ID"
  | "INVALID_ADDRESS"
  | "MARKET_NOT_FOUND"
  | "AUTH_REQUIRED"
  | "FORBIDDEN"
  | "TOO_MANY_SUBSCRIPTIONS"
  | "TOO_MANY_CONNECTIONS"
  | "SERVICE_UNAVAILABLE"

/** Close codes the server uses (4xxx: application codes). */
export const CLOSE = {
  /** No `pong` within the timeout after a `ping`. */
  heartbeatTimeout: 4000,
  /** The client read too slowly: its send buffer went over the bound. */
  slowConsumer: 4008,
  /** Over the per-IP or global connection limit (1013: try again later). */
  overloaded: 1013,
  /** The server is shutting down. */
  goingAway: 1001
} as const

export type Change =
  { readonly op: "upsert"; readonly key: string; readonly value: unknown } | { readonly op: "remove"; readonly key: string }

export interface StreamAddress {
  readonly topic: string
  readonly marketId?: string
  readonly subject?: string
}

export interface Position {
  readonly stream: string
  readonly seq: number
  /** The indexed head the data holds; null before the indexer's first commit. */
  readonly block: number | null
  readonly hash: string | null
}

export type ServerMessage =
  | ({ readonly type: "subscribed" | "unsubscribed" } & StreamAddress)
  | ({ readonly type: "snapshot"; readonly data: ReadonlyArray<{ readonly key: string; readonly value: unknown }> } & StreamAddress &
      Position)
  | ({ readonly type: "delta"; readonly reorg: boolean; readonly changes: ReadonlyArray<Change> } & StreamAddress & Position)
  | ({ readonly type: "error"; readonly code: ErrorCode; readonly message: string } & Partial<StreamAddress>)
  | { readonly type: "ping" }
