/**
 * `/ws/realtime` on a Node HTTP server (the backend's): an `upgrade` listener hands the path's
 * requests to a `ws` server; everything else keeps its HTTP meaning. Per connection: at most
 * `maxSubscriptions` streams, a JSON `ping` every `pingIntervalMs` answered by `pong` within
 * `pongTimeoutMs`, and a send buffer bounded by `maxBufferedBytes` (a client that reads slower
 * than its streams move is cut with 4008 rather than held in memory). Per instance: at most
 * `maxConnectionsPerIp` connections from one address and `maxConnections` in all.
 *
 * The stream reads the primary (the layer's `SqlClient`) even when the process reads its REST
 * answers from replicas (`DATABASE_READ_URL`): its feeds move on the primary's NOTIFY, which names
 * a commit a standby may not have replayed yet, and a feed's position and rows come from one
 * transaction on the database it reads (`topics.ts`), so they agree on every instance.
 *
 * Sending: a message is encoded once (`Frame`), as a whole WebSocket frame (`Frame.wire`), and
 * those bytes are written to every socket it goes to, straight onto the TCP socket under `ws`
 * (the server negotiates no extension, so a frame is the same bytes on every connection; `ws`
 * writes synchronously, so its own control frames never interleave with ours). The feeds hand
 * over a refresh's deltas as one batch (`DeliverAll`): a socket's frames of the batch go out in
 * one write, and sockets that get the same frames in a batch (the followers of the same streams)
 * get one buffer, built once: per socket a commit costs one `write` of shared bytes.
 */
import { PgClient } from "@effect/sql-pg"
import { SqlClient } from "@effect/sql"
import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Cause, Context, Effect, Either, Layer, Runtime, Schema } from "effect"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { ListenOptions } from "node:net"
import type { Duplex } from "node:stream"
import { WebSocketServer, type WebSocket } from "ws"
import { marketIdToHex, parseAddress, type Address } from "../../schema/primitives.js"
import { IndexedHeadsShared } from "../core/indexed-heads.js"
import { parseMarketId } from "../core/params.js"
import { FeedError, feedKey, makeFeeds, type DeliverAll, type FeedOptions, type Subscriber } from "./feeds.js"
import { ClientMessage, CLOSE, Frame, type ErrorCode } from "./protocol.js"
import { RealtimeSessions } from "./sessions.js"
import { MARKET_TOPICS, targetFields, USER_TOPICS, type Target, type Topic } from "./topics.js"

export interface RealtimeOptions extends FeedOptions {
  readonly path?: string
  readonly maxSubscriptions?: number
  readonly maxConnectionsPerIp?: number
  readonly maxConnections?: number
  readonly pingIntervalMs?: number
  readonly pongTimeoutMs?: number
  readonly maxBufferedBytes?: number
  /** How long a closing socket gets to flush its close frame before it is destroyed. */
  readonly closeGraceMs?: number
  /** Largest client message (bytes); larger ones close the socket with 1009. */
  readonly maxMessageBytes?: number
  /** Origins whose pages may use the session cookie; default: the request's own host. */
  readonly allowedOrigins?: ReadonlyArray<string>
}

export interface RealtimeStats {
  readonly connections: number
  readonly feeds: number
  /** Connections closed by the server, by reason. */
  readonly closed: { readonly heartbeat: number; readonly slowConsumer: number; readonly overloaded: number }
  /** Messages written to sockets since the start, and their JSON bytes (frame headers not counted). */
  readonly sent: { readonly messages: number; readonly bytes: number }
}

const decodeMessage = Schema.decodeUnknownEither(Schema.parseJson(ClientMessage))
const PING = new Frame({ type: "ping" })
/** A topic's market id, read by the parser the HTTP APIs use (`http/core/params.ts`). */
const marketOf = (input: string | undefined) => {
  if (input === undefined) return undefined
  const id = parseMarketId(input)
  return Either.isRight(id) ? { id: id.right, hex: marketIdToHex(id.right) } : undefined
}

/** A user topic's subject, read by the one address parser (lowercase). */
const subjectOf = (input: string | undefined): Address | undefined =>
  input === undefined ? undefined : Either.getOrUndefined(parseAddress(input))

/** Whether a page from `origin` may act with the request's cookies. */
const originAllowed = (request: IncomingMessage, allowed: ReadonlyArray<string> | undefined) => {
  const origin = request.headers.origin
  if (origin === undefined) return true // not a browser page: no ambient cookie to abuse
  if (allowed !== undefined) return allowed.includes(origin)
  try {
    return new URL(origin).host === request.headers.host
  } catch {
    return false
  }
}

/** Serves `/ws/realtime` on `server` for as long as the scope lives; answers its live figures. */
export const serveRealtime = (server: Server, options: RealtimeOptions) =>
  Effect.gen(function* () {
    const path = options.path ?? "/ws/realtime"
    const maxSubscriptions = options.maxSubscriptions ?? 50
    const maxPerIp = options.maxConnectionsPerIp ?? 20
    const maxConnections = options.maxConnections ?? 5_000
    const pingIntervalMs = options.pingIntervalMs ?? 30_000
    const pongTimeoutMs = options.pongTimeoutMs ?? 10_000
    const maxBuffered = options.maxBufferedBytes ?? 1 << 20
    const closeGraceMs = options.closeGraceMs ?? 1_000
    const sent = { messages: 0, bytes: 0 }
    // The frames of the batch being delivered, per socket in order; undefined outside a batch.
    let batch: Map<Duplex, { readonly socket: WebSocket; readonly frames: Array<Frame> }> | undefined
    /** Writes each socket's frames of a batch at once; the same frames in the same order are one buffer. */
    const flush = (pending: NonNullable<typeof batch>) => {
      const joined = new Map<string, Buffer>()
      for (const [raw, { socket, frames }] of pending) {
        // A socket closed during the batch has had its close frame: nothing may follow it.
        if (socket.readyState !== socket.OPEN || !raw.writable) continue
        if (frames.length === 1) {
          raw.write(frames[0]!.wire)
          continue
        }
        let key = String(frames[0]!.id)
        for (let i = 1; i < frames.length; i++) key += `,${frames[i]!.id}`
        let bytes = joined.get(key)
        if (bytes === undefined) joined.set(key, (bytes = Buffer.concat(frames.map((frame) => frame.wire))))
        raw.write(bytes)
      }
    }
    const deliverAll: DeliverAll = (deliver) => {
      if (batch !== undefined) return deliver()
      const pending = (batch = new Map())
      try {
        deliver()
      } finally {
        batch = undefined
        flush(pending)
      }
    }
    const feeds = yield* makeFeeds(options, deliverAll)
    const sessions = yield* RealtimeSessions
    const runtime = yield* Effect.runtime<SqlClient.SqlClient | PgClient.PgClient>()
    const run = Runtime.runPromise(runtime)
    // No per-message deflate (nor any extension): `Frame.wire` is what goes on every connection.
    const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxMessageBytes ?? 4_096, perMessageDeflate: false })
    const perIp = new Map<string, number>()
    const clients = new Set<WebSocket>()
    const closed = { heartbeat: 0, slowConsumer: 0, overloaded: 0 }

    /** Closes with `code`, and destroys the socket if the close frame is not through in time. */
    const shut = (socket: WebSocket, code: number, reason: string) => {
      if (socket.readyState === socket.CLOSING || socket.readyState === socket.CLOSED) return
      socket.close(code, reason)
      setTimeout(() => socket.terminate(), closeGraceMs).unref()
    }

    /** `raw`: the TCP socket under `socket` (the upgrade's), which our frames are written to. */
    const onConnection = (socket: WebSocket, request: IncomingMessage, raw: Duplex) => {
      const ip = request.socket.remoteAddress ?? "unknown"
      const send = (frame: Frame) => {
        if (socket.readyState !== socket.OPEN || !raw.writable) return
        // What the socket has not sent yet, ours and `ws`'s (its count includes the TCP socket's buffer).
        if (socket.bufferedAmount > maxBuffered) {
          closed.slowConsumer++
          shut(socket, CLOSE.slowConsumer, "slow consumer")
          return
        }
        sent.messages++
        sent.bytes += frame.bytes.length
        if (batch === undefined) raw.write(frame.wire)
        else {
          const pending = batch.get(raw)
          if (pending === undefined) batch.set(raw, { socket, frames: [frame] })
          else pending.frames.push(frame)
        }
      }
      const fail = (code: ErrorCode, message: string, target?: { topic?: string; marketId?: string; subject?: string }) =>
        send(new Frame({ type: "error", code, message, ...target }))

      if (clients.size >= maxConnections || (perIp.get(ip) ?? 0) >= maxPerIp) {
        closed.overloaded++
        fail(
          "TOO_MANY_CONNECTIONS",
          clients.size >= maxConnections ? "the server is at its connection limit" : `at most ${maxPerIp} connections per address`
        )
        shut(socket, CLOSE.overloaded, "too many connections")
        return
      }
      clients.add(socket)
      perIp.set(ip, (perIp.get(ip) ?? 0) + 1)

      const url = new URL(request.url ?? "/", "http://localhost")
      const identities = run(
        sessions.identify({
          cookie: originAllowed(request, options.allowedOrigins) ? request.headers.cookie : undefined,
          token: url.searchParams.get("token") ?? undefined,
          ticket: url.searchParams.get("ticket") ?? undefined,
          origin: request.headers.origin
        })
      ).catch(() => [] as ReadonlyArray<string>)
      const subscriber: Subscriber = { deliver: send }
      const subscriptions = new Set<string>()

      let pongDue: NodeJS.Timeout | undefined
      const pinger = setInterval(() => {
        if (pongDue !== undefined) return
        send(PING)
        pongDue = setTimeout(() => {
          closed.heartbeat++
          shut(socket, CLOSE.heartbeatTimeout, "no pong")
        }, pongTimeoutMs)
      }, pingIntervalMs)

      const handle = async (raw: string) => {
        const decoded = decodeMessage(raw)
        if (Either.isLeft(decoded)) {
          let json = true
          try {
            JSON.parse(raw)
          } catch {
            json = false
          }
          return json
            ? fail("BAD_MESSAGE", "expected {type: subscribe|unsubscribe|resume|pong, topic, marketId|subject}")
            : fail("BAD_JSON", "the message is not JSON")
        }
        const message = decoded.right
        if (message.type === "pong") {
          clearTimeout(pongDue)
          pongDue = undefined
          return
        }
        const { topic } = message
        let target: Target
        if ((USER_TOPICS as ReadonlyArray<string>).includes(topic)) {
          const subject = subjectOf(message.subject)
          if (subject === undefined) return fail("INVALID_ADDRESS", "a user topic needs subject: a 0x address", { topic })
          const proven = await identities
          if (proven.length === 0)
            return fail("AUTH_REQUIRED", "user topics need a session (cookie, ?ticket= or ?token=)", { topic, subject })
          if (!proven.includes(subject))
            return fail("FORBIDDEN", "the subject must be the session's address or smart account", { topic, subject })
          target = { subject }
        } else if ((MARKET_TOPICS as ReadonlyArray<string>).includes(topic)) {
          const market = marketOf(message.marketId)
          if (market === undefined)
            return fail("INVALID_MARKET_ID", "marketId: a decimal id from 1, or 0x followed by 64 hex digits", { topic })
          target = { marketId: market.id, marketHex: market.hex }
        } else return fail("INVALID_TOPIC", `topics: ${[...MARKET_TOPICS, ...USER_TOPICS].join(", ")}`, { topic })
        const key = feedKey(topic as Topic, target)
        const named = { topic, ...targetFields(target) }
        if (message.type === "unsubscribe") {
          subscriptions.delete(key)
          feeds.unsubscribe(key, subscriber)
          return send(new Frame({ type: "unsubscribed", ...named }))
        }
        if (!subscriptions.has(key) && subscriptions.size >= maxSubscriptions)
          return fail("TOO_MANY_SUBSCRIPTIONS", `at most ${maxSubscriptions} subscriptions per connection`, named)
        subscriptions.add(key)
        const resume = message.type === "resume" ? { stream: message.stream, seq: message.seq } : undefined
        const result = await run(
          feeds.subscribe(key, topic as Topic, target, subscriber, resume).pipe(
            // A thrown bug, not an outage: logged with its stack, and the client told so (not "try again").
            Effect.catchAllDefect((defect) =>
              Effect.logError("stream subscription failed", Cause.die(defect)).pipe(
                Effect.annotateLogs({ feed: key }),
                Effect.zipRight(Effect.fail(new FeedError("INTERNAL_ERROR", "the subscription could not be served; the server logged it")))
              )
            ),
            Effect.either
          )
        )
        if (Either.isLeft(result)) {
          subscriptions.delete(key)
          const error = result.left instanceof FeedError ? result.left : new FeedError("SERVICE_UNAVAILABLE", "try again")
          fail(error.code, error.message, named)
        } else if (socket.readyState !== socket.OPEN) feeds.unsubscribe(key, subscriber)
      }

      // One message at a time per connection, in arrival order.
      let queue = Promise.resolve()
      socket.on("message", (data, isBinary) => {
        const raw = isBinary ? "" : data.toString()
        queue = queue
          .then(() => handle(raw))
          .catch((error: unknown) => {
            // Never silent: what failed goes to the log, and the client learns it is the server's fault.
            run(Effect.logError("stream message not handled", Cause.die(error))).catch(() => undefined)
            fail("INTERNAL_ERROR", "the message could not be handled; the server logged it")
          })
      })
      socket.on("error", () => socket.terminate())
      socket.on("close", () => {
        clearInterval(pinger)
        clearTimeout(pongDue)
        clients.delete(socket)
        const left = (perIp.get(ip) ?? 1) - 1
        if (left === 0) perIp.delete(ip)
        else perIp.set(ip, left)
        for (const key of subscriptions) feeds.unsubscribe(key, subscriber)
        subscriptions.clear()
      })
    }

    const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      if (new URL(request.url ?? "/", "http://localhost").pathname !== path) {
        socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
        return
      }
      wss.handleUpgrade(request, socket, head, (ws) => onConnection(ws, request, socket))
    }
    server.on("upgrade", onUpgrade)
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        server.off("upgrade", onUpgrade)
        for (const socket of clients) socket.close(CLOSE.goingAway, "server shutting down")
        for (const socket of clients) socket.terminate()
        wss.close()
      })
    )
    return {
      stats: (): RealtimeStats => ({
        connections: clients.size,
        feeds: feeds.feedCount(),
        closed: { ...closed },
        sent: { ...sent }
      })
    }
  })

/** The running stream's live figures. */
export class Realtime extends Context.Tag("predix/Realtime")<Realtime, { readonly stats: () => RealtimeStats }>() {}

/**
 * An `HttpServer` on a new Node server listening on `listen`, with the stream on its upgrade
 * requests. Like `NodeHttpServer.layer`, except that `serve` leaves upgrades alone: the stream
 * owns them (the backend's HttpApi has no socket routes, and its upgrade handler would answer
 * the same socket with a 404).
 */
export const httpServerWithRealtime = (listen: ListenOptions, options: RealtimeOptions) =>
  Layer.merge(
    Layer.scopedContext(
      Effect.gen(function* () {
        let node: Server | undefined
        // The server listens as soon as this layer is built, before the app is served (the rest of
        // the layers are still building: a restart takes seconds). A request arriving in between
        // would find no "request" listener and hang forever; it is held and handed to the app
        // once `serve` installs it.
        const early: Array<[IncomingMessage, ServerResponse]> = []
        const hold = (request: IncomingMessage, response: ServerResponse) => void early.push([request, response])
        // The Node server's lifecycle (listen, close) is NodeHttpServer's; only `serve` differs.
        const inner = yield* NodeHttpServer.make(() => (node = createServer(hold)), listen)
        const realtime = yield* serveRealtime(node!, options)
        const server = HttpServer.make({
          address: inner.address,
          serve: (app, middleware) =>
            Effect.gen(function* () {
              const handler = yield* middleware === undefined
                ? NodeHttpServer.makeHandler(app)
                : NodeHttpServer.makeHandler(app, middleware)
              yield* Effect.addFinalizer(() => Effect.sync(() => node?.off("request", handler)))
              node?.off("request", hold)
              node?.on("request", handler)
              for (const [request, response] of early.splice(0)) handler(request, response)
            })
        })
        return Context.make(HttpServer.HttpServer, server).pipe(Context.add(Realtime, realtime))
      })
    ).pipe(
      // The feeds follow the process's heads when one is provided, else a source of their own.
      Layer.provide(IndexedHeadsShared(options.chainId, options.checkEveryMs === undefined ? {} : { pollEveryMs: options.checkEveryMs }))
    ),
    NodeHttpServer.layerContext
  )
