/**
 * The `/ws/realtime` message protocol (docs/websocket.md shows a session).
 *
 * Client: `subscribe` / `unsubscribe` {topic, marketId} or {topic, subject} for user topics,
 * `resume` {topic, marketId|subject, stream, seq} after a gap or a reconnect, `pong`.
 * Server: `subscribed`, `snapshot` {stream, seq, block, hash, data}, `delta` {stream, prev, seq,
 * block, hash, reorg, changes}, `unsubscribed`, `error` {code, message}, `ping`.
 *
 * Positions: `seq` is the indexer's commit position of the state a message leaves the client
 * holding (`indexer_checkpoint.commit_seq`, one database sequence), not a per-process counter, and
 * `stream` is a function of (chain, topic, market or subject, window): every instance over one
 * database names the same state with the same (stream, seq). A delta applies to the state at
 * `prev` (the seq of the message before it on this stream, or the client's resume seq) and
 * numbers grow with gaps. A client whose seq is not a delta's `prev` missed something and resumes.
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
    /** The `stream` of the snapshot the client holds: seq numbers are positions within one stream. */
    stream: Schema.String,
    /** The seq of the last snapshot or delta the client applied: the position of the state it holds. */
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
  /** The server could not produce what was asked (a bug on its side, logged there): trying again will not help. */
  | "INTERNAL_ERROR"

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
  /** The same on every instance for one (chain, topic, market or subject, window). */
  readonly stream: string
  /** The commit position of the state the message leaves the client holding (0 before the first commit). */
  readonly seq: number
  /** The indexed head the data holds; null before the indexer's first commit. */
  readonly block: number | null
  readonly hash: string | null
}

export type ServerMessage =
  | ({ readonly type: "subscribed" | "unsubscribed" } & StreamAddress)
  | ({ readonly type: "snapshot"; readonly data: ReadonlyArray<{ readonly key: string; readonly value: unknown }> } & StreamAddress &
      Position)
  | ({
      readonly type: "delta"
      /** The seq of the state the changes apply to. */
      readonly prev: number
      readonly reorg: boolean
      readonly changes: ReadonlyArray<Change>
    } & StreamAddress &
      Position)
  | ({ readonly type: "error"; readonly code: ErrorCode; readonly message: string } & Partial<StreamAddress>)
  | { readonly type: "ping" }

let frames = 0

/**
 * A server message and its JSON text, encoded once on first use: a delta goes to every subscriber
 * of its stream as the same bytes (one `JSON.stringify` however many sockets it is written to, so
 * every subscriber gets a byte-identical frame).
 */
export class Frame {
  /** Unique in the process: names the frame in a batch's cache of concatenated frames. */
  readonly id = frames++
  private encoded: Buffer | undefined
  private framed: Buffer | undefined
  constructor(readonly message: ServerMessage) {}
  get bytes(): Buffer {
    return (this.encoded ??= Buffer.from(JSON.stringify(this.message)))
  }
  /** The message as one WebSocket text frame, as a server sends it (RFC 6455 5.2: final, unmasked, no extension). */
  get wire(): Buffer {
    return (this.framed ??= wsTextFrame(this.bytes))
  }
}

/** `payload` in one final, unmasked text frame: the header (2, 4 or 10 bytes) and the payload. */
export const wsTextFrame = (payload: Buffer): Buffer => {
  const length = payload.length
  const header = length < 126 ? 2 : length < 65_536 ? 4 : 10
  const frame = Buffer.allocUnsafe(header + length)
  frame[0] = 0x81 // FIN, opcode 1 (text)
  if (header === 2) frame[1] = length
  else if (header === 4) {
    frame[1] = 126
    frame.writeUInt16BE(length, 2)
  } else {
    frame[1] = 127
    frame.writeBigUInt64BE(BigInt(length), 2)
  }
  payload.copy(frame, header)
  return frame
}
