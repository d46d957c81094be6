/**
 * The WebSocket stream against a live devnet: anvil, the protocol deployed, the indexer stepped by
 * the test, the backend (REST + /ws/realtime on one Node server) and real `ws` clients over
 * loopback. An order, a trade and the price it moves arrive as deltas that chain (each one's prev is the seq before); the
 * client's state (snapshot + deltas) equals the REST answer after every step, a reorg included; a
 * resume after a gap gets exactly the missed deltas. Then errors and limits, the heartbeat, and a
 * slow consumer cut off while another client keeps receiving.
 */
import { HttpServer } from "@effect/platform"
import { Context, Effect, Exit, Layer, Logger, LogLevel, Scope } from "effect"
import pg from "pg"
import { maxUint256 } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import WebSocket from "ws"
import { backendHttpLayer } from "../../../http/backend/api.js"
import { indexerServerLayer } from "../../../http/indexer/api.js"
import { httpServerWithRealtime, Realtime, type RealtimeStats } from "../../../http/ws/server.js"
import { encodeIndexedPayload, INDEXED_CHANNEL } from "../../../schema/indexed-notify.js"
import { RealtimeSessions } from "../../../http/ws/sessions.js"
import { BuildInfoLive } from "../../../src/build-info.js"
import type { Address } from "../../../tools/devnet/client.js"
import { ADMIN } from "../../../tools/devnet/deploy.js"
import { USDC, withIndexedDevnet, type IndexedDevnet } from "../../support/indexed-devnet.js"
import { tcpUrl } from "../backend/support/harness.js"

const ALICE = 2
const BOB = 3
const ZERO = "0x0000000000000000000000000000000000000000" as Address
const ZERO32 = `0x${"0".repeat(64)}`
const WINDOW = 50

const scope = Effect.runSync(Scope.make())
let client: IndexedDevnet["client"]
let devnet: IndexedDevnet["devnet"]
let database: IndexedDevnet["database"]
let databaseUrl: string
let index: IndexedDevnet["index"]
let fund: IndexedDevnet["fund"]
let launch: IndexedDevnet["launch"]
let base: string
let wsUrl: string
let stats: () => RealtimeStats
let market: { id: bigint; hex: string }
let booksOnly: { id: bigint; hex: string }
const quiet = Logger.withMinimumLogLevel(LogLevel.Error)

const send = (from: number, contract: string, address: Address, fn: string, args: ReadonlyArray<unknown> = []) =>
  client.send(from, contract, address, fn, args)

/** Sessions as the sessions branch will provide them: here a token names an address. */
const TestSessions = Layer.succeed(RealtimeSessions, {
  identify: ({ token, cookie }) =>
    Effect.succeed(token === "alice-token" || cookie === "predix_session=alice-cookie" ? [client.address(ALICE).toLowerCase()] : [])
})

beforeAll(async () => {
  ;({ client, devnet, database, databaseUrl, index, fund, launch } = await withIndexedDevnet(scope))
  const realtime = httpServerWithRealtime(
    { port: 0, host: "127.0.0.1" },
    {
      chainId: 130,
      window: WINDOW,
      maxSubscriptions: 3,
      maxConnectionsPerIp: 6,
      maxConnections: 9,
      // Short enough that the heartbeat test closes a silent socket in seconds; the pong timeout
      // long enough that a client answering on a loaded machine (CI at a load of 8+) is not cut.
      pingIntervalMs: 400,
      pongTimeoutMs: 2_000,
      maxBufferedBytes: 64 * 1024,
      closeGraceMs: 60_000,
      checkEveryMs: 60_000
    }
  )
  // A real indexer API on the same database: the backend's circuit breaker probes it, and a
  // dead URL here opened the breaker (503s) whenever reads were sparser than the probes.
  const indexerUrl = tcpUrl(
    await Effect.runPromise(
      Layer.buildWithScope(indexerServerLayer(130, { port: 0, host: "127.0.0.1" }).pipe(Layer.provide(database)), scope).pipe(quiet)
    )
  )
  const backend = backendHttpLayer({ chainId: 130, indexerUrl, cacheBytes: 0 }).pipe(
    Layer.provideMerge(realtime),
    Layer.provide([database, BuildInfoLive, TestSessions])
  )
  const context = await Effect.runPromise(Layer.buildWithScope(backend, scope).pipe(quiet))
  stats = Context.get(context, Realtime).stats
  const address = Context.get(context, HttpServer.HttpServer).address
  const port = address._tag === "TcpAddress" ? address.port : 0
  base = `http://127.0.0.1:${port}`
  wsUrl = `ws://127.0.0.1:${port}/ws/realtime`

  await fund([ADMIN, ALICE, BOB], 1_000_000n * USDC)
  const endTime = BigInt(await client.timestamp()) + 30n * 86_400n
  const id = await launch("Will the stream keep up?", endTime, 50_000n * USDC)
  market = { id, hex: `0x${id.toString(16).padStart(64, "0")}` }
  const books = await launch("Books only?", endTime, 0n)
  booksOnly = { id: books, hex: `0x${books.toString(16).padStart(64, "0")}` }
  await index()
}, 240_000)

// The servers, the database and anvil, in the reverse order of their start.
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

/** A `ws` client that keeps every message and lets the test take them in order. */
class Client {
  readonly messages: Array<any> = []
  private taken = 0
  private wake: (() => void) | undefined
  closed: { code: number; reason: string } | undefined
  autoPong = true
  pings = 0
  constructor(readonly ws: WebSocket) {
    ws.on("message", (data) => {
      const message = JSON.parse(data.toString())
      if (message.type === "ping") this.pings++
      if (message.type === "ping" && this.autoPong) ws.send(JSON.stringify({ type: "pong" }))
      if (message.type !== "ping") this.messages.push(message)
      this.wake?.()
    })
    ws.on("close", (code, reason) => {
      this.closed = { code, reason: reason.toString() }
      this.wake?.()
    })
  }
  static open(options: WebSocket.ClientOptions = {}, query = "", url = wsUrl) {
    const ws = new WebSocket(url + query, options)
    const client = new Client(ws)
    return new Promise<Client>((resolve, reject) => {
      ws.once("open", () => resolve(client))
      ws.once("error", reject)
    })
  }
  send(message: unknown) {
    this.ws.send(typeof message === "string" ? message : JSON.stringify(message))
  }
  /** The next message not yet taken; fails after `ms` (a hang, not a timing assertion). */
  async next(ms = 30_000): Promise<any> {
    const deadline = Date.now() + ms
    while (this.taken >= this.messages.length) {
      if (this.closed !== undefined) throw new Error(`closed ${this.closed.code} while waiting`)
      if (Date.now() > deadline) throw new Error("no message")
      await new Promise<void>((resolve) => {
        this.wake = resolve
        setTimeout(resolve, 200)
      })
    }
    return this.messages[this.taken++]
  }
  async closedWith(ms = 30_000) {
    const deadline = Date.now() + ms
    while (this.closed === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    return this.closed
  }
  pending() {
    return this.messages.slice(this.taken)
  }
}

/** A client's view of one stream: snapshot + deltas applied, with the seq check a client does. */
class View {
  state = new Map<string, unknown>()
  stream = ""
  seq = -1
  block: number | null = null
  readonly deltas: Array<any> = []
  apply(message: any) {
    if (message.type === "snapshot") {
      this.state = new Map(message.data.map((e: any) => [e.key, e.value]))
      this.stream = message.stream
    } else {
      expect(message.type).toBe("delta")
      expect(message.stream).toBe(this.stream)
      expect(message.prev, "a delta applies to the state the client holds").toBe(this.seq)
      expect(message.seq, "positions grow").toBeGreaterThan(this.seq)
      for (const change of message.changes) {
        if (change.op === "remove") {
          expect(this.state.has(change.key), `removes ${change.key}, which it holds`).toBe(true)
          this.state.delete(change.key)
        } else this.state.set(change.key, change.value)
      }
      this.deltas.push(message)
    }
    this.seq = message.seq
    this.block = message.block
  }
}

const rest = async (path: string) => {
  const response = await fetch(`${base}${path}`)
  expect(response.status, path).toBe(200)
  return (await response.json()) as any
}

const bySort = (a: any, b: any) =>
  b.blockNumber - a.blockNumber || b.logIndex - a.logIndex || String(a.source).localeCompare(String(b.source))

/** The REST answer each topic's state must equal; `when` names the step the check follows. */
const expectEqualsRest = async (topic: string, view: View, when: string) => {
  const values = [...view.state.values()] as Array<any>
  if (topic === "orderbook") {
    const book = (await rest(`/api/markets/${market.id}/orderbook`)).data
    for (const outcome of ["yes", "no"]) {
      for (const side of ["bids", "asks"]) {
        const levels = [...view.state].filter(([k]) => k.startsWith(`${outcome}:${side}:`)).map(([, v]) => v as any)
        levels.sort((a, b) => (side === "bids" ? Number(b.price) - Number(a.price) : Number(a.price) - Number(b.price)))
        expect(levels, `${when}: the orderbook stream's ${outcome} ${side} equal REST's`).toEqual(book[outcome][side])
      }
    }
  } else if (topic === "trades") {
    const trades = (await rest(`/api/markets/${market.id}/trades?limit=${WINDOW}`)).data
    expect([...values].sort(bySort), `${when}: the trades stream equals REST's trades`).toEqual([...trades].sort(bySort))
  } else {
    const total = (await rest(`/api/markets/${market.id}/prices?limit=1`)).meta.pagination.total
    const points = (await rest(`/api/markets/${market.id}/prices?limit=${WINDOW}&offset=${Math.max(0, total - WINDOW)}`)).data
    expect([...values].sort(bySort), `${when}: the prices stream equals REST's price points`).toEqual([...points].sort(bySort))
  }
}

const TOPICS = ["orderbook", "trades", "prices"] as const

const subscribeAll = async (c: Client) => {
  const views: Record<string, View> = {}
  for (const topic of TOPICS) {
    c.send({ type: "subscribe", topic, marketId: market.id.toString() })
    expect(await c.next()).toEqual({ type: "subscribed", topic, marketId: market.hex })
    const snapshot = await c.next()
    expect(snapshot).toMatchObject({ type: "snapshot", topic, marketId: market.hex, seq: expect.any(Number) })
    views[topic] = new View()
    views[topic].apply(snapshot)
  }
  return views
}

/** Applies the deltas that arrive until every topic in `expected` moved by its count. */
const receive = async (c: Client, views: Record<string, View>, expected: Partial<Record<(typeof TOPICS)[number], number>>) => {
  const want = Object.values(expected).reduce((a, b) => a + (b ?? 0), 0)
  for (let i = 0; i < want; i++) {
    const message = await c.next()
    expect(Object.keys(expected), JSON.stringify(message)).toContain(message.topic)
    views[message.topic]!.apply(message)
  }
}

const trade = (user: number, type: number, amount: bigint) =>
  send(user, "Router", devnet.addresses.router, "trade", [type, market.id, amount, 0n, client.address(user), 0n, maxUint256, ZERO])

describe("WebSocket stream", () => {
  it("streams an order, a trade and its price move as consecutive deltas that keep each topic equal to REST; resume and reorg", async () => {
    const a = devnet.addresses
    const watcher = await Client.open()
    const views = await subscribeAll(watcher)
    for (const topic of TOPICS) await expectEqualsRest(topic, views[topic]!, "the first snapshots")
    const head = views["trades"]!.block!
    expect(head, "a snapshot names the indexed block it is of").toBeGreaterThan(0)

    // An order: the book gets a level (one delta); trades and prices do not move.
    await send(BOB, "Exchange", a.exchange, "placeOrder", [market.id, 0, 300_000n, 40n * USDC, ZERO32])
    await index()
    await receive(watcher, views, { orderbook: 1 })
    expect(views["orderbook"]!.deltas[0].changes, "an order is one orderbook delta: an upsert of its level").toEqual([
      { op: "upsert", key: expect.stringMatching(/^yes:bids:0\.3/), value: expect.objectContaining({ orders: 1 }) }
    ])
    expect(views["orderbook"]!.block, "the order's delta names a later block than the snapshot").toBeGreaterThan(head)
    await expectEqualsRest("orderbook", views["orderbook"]!, "after the order")

    // A router trade on the AMM: a trade and a price point.
    await trade(ALICE, 0, 500n * USDC)
    await index()
    await receive(watcher, views, { trades: 1, prices: 1 })
    expect(views["trades"]!.deltas[0].changes, "a router trade is one trades delta: its upsert").toMatchObject([
      { op: "upsert", value: { tradeType: "BUY_YES", source: "router" } }
    ])
    expect(
      views["prices"]!.deltas[0].changes.every((c: any) => c.op === "upsert"),
      "the trade's price move is a prices delta of upserts"
    ).toBe(true)
    for (const topic of TOPICS) await expectEqualsRest(topic, views[topic]!, "after the router trade")

    // Resume: a second client follows trades, goes away, misses two trades, and resumes.
    const late = await Client.open()
    late.send({ type: "subscribe", topic: "trades", marketId: market.hex })
    await late.next()
    const held = new View()
    held.apply(await late.next())
    late.ws.close()
    await late.closedWith()
    for (const amount of [200n, 300n]) {
      await trade(BOB, 0, amount * USDC)
      await index()
    }
    await receive(watcher, views, { trades: 2, prices: 2 })
    const back = await Client.open()
    back.send({ type: "resume", topic: "trades", marketId: market.hex, stream: held.stream, seq: held.seq })
    expect(await back.next(), "a resume is acknowledged as a subscription").toEqual({
      type: "subscribed",
      topic: "trades",
      marketId: market.hex
    })
    const missed = [await back.next(), await back.next()]
    expect(missed, "a resume after a gap gets exactly the missed deltas").toEqual(views["trades"]!.deltas.slice(-2))
    for (const delta of missed) held.apply(delta)
    expect(held.state, "the resumed client's state equals the one that never left").toEqual(views["trades"]!.state)
    // A resume the feed cannot serve (another stream's numbers) gets a fresh snapshot.
    back.send({ type: "resume", topic: "trades", marketId: market.hex, stream: "not-a-stream", seq: 1 })
    await back.next()
    expect(await back.next(), "a resume of an unknown stream gets a fresh snapshot").toMatchObject({
      type: "snapshot",
      seq: views["trades"]!.seq,
      stream: held.stream
    })
    back.ws.close()

    // A reorg drops the block of a trade: its removal (and the price's) arrive as reorg deltas.
    await trade(ALICE, 0, 700n * USDC)
    await index()
    await receive(watcher, views, { trades: 1, prices: 1 })
    const added = views["trades"]!.deltas.at(-1).changes[0].key
    await client.reorg(1)
    await index()
    await receive(watcher, views, { trades: 1, prices: 1 })
    const correction = views["trades"]!.deltas.at(-1)
    expect(correction, "a reorg of a trade's block removes the trade in a reorg delta").toMatchObject({
      reorg: true,
      changes: [{ op: "remove", key: added }]
    })
    expect(views["prices"]!.deltas.at(-1).reorg, "the reorg's prices delta is marked reorg").toBe(true)
    expect(
      views["prices"]!.deltas.at(-1).changes.every((c: any) => c.op === "remove"),
      "the reorg removes the trade's price points"
    ).toBe(true)
    for (const topic of TOPICS) await expectEqualsRest(topic, views[topic]!, "after the reorg of a trade")
    expect(watcher.pending(), "no delta beyond those the steps explain").toEqual([])
    watcher.ws.close()

    // A reorg that drops a market's creation: its followers get the removal of what it had.
    const endTime = BigInt(await client.timestamp()) + 30n * 86_400n
    await send(ADMIN, "MarketFactory", a.marketFactory, "launch", ["Gone in a reorg?", endTime, a.manualOracle, 0n])
    const gone = await client.read<bigint>("MarketFacet", a.diamond, "marketCount")
    await index()
    const follower = await Client.open()
    follower.send({ type: "subscribe", topic: "orderbook", marketId: gone.toString() })
    await follower.next()
    const book = new View()
    book.apply(await follower.next())
    await send(BOB, "Exchange", a.exchange, "placeOrder", [gone, 2, 400_000n, 10n * USDC, ZERO32])
    await index()
    book.apply(await follower.next())
    expect([...book.state.keys()], "the new market's order arrives as its book's one level").toEqual([expect.stringMatching(/^no:bids:/)])
    await client.reorg(2)
    await index()
    book.apply(await follower.next())
    expect(book.deltas.at(-1), "a reorg of a market's creation removes its book's levels in a reorg delta").toMatchObject({
      reorg: true,
      changes: [{ op: "remove" }]
    })
    expect(book.state.size, "the reorged market's follower holds nothing").toBe(0)
    expect((await fetch(`${base}/api/markets/${gone}/orderbook`)).status, "REST no longer knows the reorged market").toBe(404)
    follower.ws.close()
  }, 180_000)

  it("answers bad input with error codes, enforces subscription and connection limits, and keeps user topics to their session", async () => {
    await until(() => stats().connections === 0)
    const c = await Client.open()
    const errorOf = async (message: unknown) => {
      c.send(message)
      const answer = await c.next()
      expect(answer.type, JSON.stringify(answer)).toBe("error")
      return answer.code
    }
    expect(await errorOf("{not json"), "a frame that is not JSON").toBe("BAD_JSON")
    expect(await errorOf({ type: "subscribe" }), "a subscribe without topic").toBe("BAD_MESSAGE")
    expect(await errorOf({ type: "resume", topic: "trades", marketId: "1", stream: "s", seq: -1 }), "a resume at a negative seq").toBe(
      "BAD_MESSAGE"
    )
    expect(await errorOf({ type: "subscribe", topic: "candles", marketId: "1" }), "an unknown topic").toBe("INVALID_TOPIC")
    expect(await errorOf({ type: "subscribe", topic: "trades", marketId: "one" }), "a market id that is no number").toBe(
      "INVALID_MARKET_ID"
    )
    expect(await errorOf({ type: "subscribe", topic: "trades", marketId: `0x1${"0".repeat(64)}` }), "a market id over 32 bytes").toBe(
      "INVALID_MARKET_ID"
    )
    expect(await errorOf({ type: "subscribe", topic: "trades", marketId: "999" }), "a market that does not exist").toBe("MARKET_NOT_FOUND")
    expect(await errorOf({ type: "subscribe", topic: "user-trades", subject: "0x12" }), "a user topic on a malformed address").toBe(
      "INVALID_ADDRESS"
    )
    const alice = client.address(ALICE).toLowerCase()
    const bob = client.address(BOB).toLowerCase()
    expect(await errorOf({ type: "subscribe", topic: "user-orders", subject: alice }), "a user topic without a session").toBe(
      "AUTH_REQUIRED"
    )

    // Subscriptions: three per connection here; an unsubscribe frees one.
    for (const topic of TOPICS) c.send({ type: "subscribe", topic, marketId: market.hex })
    for (let i = 0; i < 6; i++) expect(["subscribed", "snapshot"], "three subscriptions are allowed").toContain((await c.next()).type)
    expect(await errorOf({ type: "subscribe", topic: "orderbook", marketId: booksOnly.hex }), "a fourth subscription").toBe(
      "TOO_MANY_SUBSCRIPTIONS"
    )
    c.send({ type: "unsubscribe", topic: "trades", marketId: market.hex })
    expect(await c.next(), "an unsubscribe is acknowledged").toEqual({ type: "unsubscribed", topic: "trades", marketId: market.hex })
    c.send({ type: "subscribe", topic: "orderbook", marketId: booksOnly.id.toString() })
    expect(await c.next(), "an unsubscribe frees a subscription").toEqual({
      type: "subscribed",
      topic: "orderbook",
      marketId: booksOnly.hex
    })
    expect(await c.next(), "a books-only market's empty book is an empty snapshot").toMatchObject({
      type: "snapshot",
      topic: "orderbook",
      marketId: booksOnly.hex,
      seq: expect.any(Number),
      data: []
    })

    // A session proves an address: another address's topics are refused, and a cookie rides only from an allowed origin.
    const withToken = await Client.open({}, "?token=alice-token")
    withToken.send({ type: "subscribe", topic: "user-portfolio", subject: bob })
    expect(await withToken.next(), "a session's subscription to another address's topic").toMatchObject({
      type: "error",
      code: "FORBIDDEN",
      subject: bob
    })
    const crossSite = await Client.open({ headers: { cookie: "predix_session=alice-cookie", origin: "https://evil.example" } })
    crossSite.send({ type: "subscribe", topic: "user-positions", subject: alice })
    expect(await crossSite.next(), "a session cookie from another site's origin is no session").toMatchObject({
      type: "error",
      code: "AUTH_REQUIRED"
    })
    // The session's own topics stream like market topics, equal to REST.
    withToken.send({ type: "subscribe", topic: "user-trades", subject: alice.toUpperCase().replace("0X", "0x") })
    expect(await withToken.next(), "a token session's own topic, its address in any case, subscribes lowercased").toEqual({
      type: "subscribed",
      topic: "user-trades",
      subject: alice
    })
    const mine = new View()
    mine.apply(await withToken.next())
    const sameSite = await Client.open({ headers: { cookie: "predix_session=alice-cookie", origin: base } })
    sameSite.send({ type: "subscribe", topic: "user-portfolio", subject: alice })
    expect(await sameSite.next(), "a session cookie from the allowed origin subscribes its own topic").toEqual({
      type: "subscribed",
      topic: "user-portfolio",
      subject: alice
    })
    const portfolio = new View()
    portfolio.apply(await sameSite.next())
    // Its orders and positions too (on a connection of their own: three subscriptions per connection here).
    const more = await Client.open({}, "?token=alice-token")
    const orders = new View()
    const positions = new View()
    for (const [topic, view] of [
      ["user-orders", orders],
      ["user-positions", positions]
    ] as const) {
      more.send({ type: "subscribe", topic, subject: alice })
      expect(await more.next(), `the session subscribes its own ${topic}`).toEqual({ type: "subscribed", topic, subject: alice })
      view.apply(await more.next())
    }
    await trade(ALICE, 2, 150n * USDC)
    await send(ALICE, "Exchange", devnet.addresses.exchange, "placeOrder", [market.id, 0, 100_000n, 5n * USDC, ZERO32])
    await index()
    mine.apply(await withToken.next())
    // The trade moves a position, the order is a new order: one delta each, in either order.
    for (let i = 0; i < 2; i++) {
      const message = await more.next()
      ;(message.topic === "user-orders" ? orders : positions).apply(message)
    }
    expect(orders.deltas, "a new order is one user-orders delta").toHaveLength(1)
    expect(positions.deltas, "a trade is one user-positions delta").toHaveLength(1)
    const byKey = (view: View) => [...view.state.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, value]) => value)
    const restOrders = (await rest(`/api/trading/${alice}/orders?limit=${WINDOW}`)).data
    expect(restOrders.length, "REST lists the session's order").toBeGreaterThan(0)
    expect(byKey(orders), "the user-orders stream equals REST's orders").toEqual(
      [...restOrders].sort((a: any, b: any) => a.orderId.localeCompare(b.orderId))
    )
    const restPositions = (await rest(`/api/trading/${alice}/portfolio`)).data.positions
    expect(byKey(positions), "the user-positions stream equals REST's positions").toEqual(
      [...restPositions].sort((a: any, b: any) => a.marketId.localeCompare(b.marketId))
    )
    expect(restPositions.length, "REST lists the session's position").toBeGreaterThan(0)
    more.ws.close()
    expect(mine.deltas[0].changes, "the session's trade is one user-trades upsert").toMatchObject([
      { op: "upsert", value: { tradeType: "BUY_NO", trader: alice } }
    ])
    const restTrades = (await rest(`/api/trading/${alice}/trades?limit=${WINDOW}`)).data
    expect([...mine.state.values()].sort(bySort), "the user-trades stream equals REST's trades of the user").toEqual(
      [...restTrades].sort(bySort)
    )
    portfolio.apply(await sameSite.next())
    expect(portfolio.state.get("portfolio"), "the user-portfolio stream equals REST's portfolio").toEqual(
      (await rest(`/api/trading/${alice}/portfolio`)).data
    )
    sameSite.ws.close()

    // Connections: six per address, nine in all (c, withToken and crossSite are three of 127.0.0.1's).
    const same = await Promise.all([1, 2, 3].map(() => Client.open()))
    const refused = await Client.open()
    expect(await refused.next(), "a seventh connection from one address").toMatchObject({ type: "error", code: "TOO_MANY_CONNECTIONS" })
    expect((await refused.closedWith())?.code, "the seventh connection from one address is closed 1013").toBe(1013)
    const other = await Promise.all([1, 2, 3].map(() => Client.open({ localAddress: "127.0.0.2" })))
    const overCap = await Client.open({ localAddress: "127.0.0.3" })
    expect(await overCap.next(), "a tenth connection in all").toMatchObject({ type: "error", code: "TOO_MANY_CONNECTIONS" })
    expect((await overCap.closedWith())?.code, "the tenth connection in all is closed 1013").toBe(1013)
    expect(stats().connections, "the refused connections are not counted").toBe(9)
    for (const open of [c, withToken, crossSite, ...same, ...other]) open.ws.close()
    await until(() => stats().connections === 0)
  }, 60_000)

  it("closes a socket that does not answer ping with 4000, and keeps one that does", async () => {
    const alive = await Client.open()
    const silent = await Client.open()
    silent.autoPong = false
    expect((await silent.closedWith())?.code, "a socket that does not answer ping is closed 4000").toBe(4000)
    expect(silent.pings, "the silent socket was pinged before it was closed").toBeGreaterThanOrEqual(1)
    await until(() => alive.pings >= silent.pings + 2)
    expect(alive.closed, "a socket that answers ping stays open").toBeUndefined()
    alive.send({ type: "subscribe", topic: "trades", marketId: market.hex })
    expect(await alive.next(), "the socket that answers ping is still served").toMatchObject({ type: "subscribed" })
    alive.ws.close()
  }, 60_000)

  it("writes a delta as the same bytes to every follower, and a market's deltas of one commit at one position", async () => {
    await until(() => stats().connections === 0)
    /** A client that keeps every frame's bytes as they came (pings aside). */
    const raw = async () => {
      const ws = new WebSocket(wsUrl)
      const frames: Array<Buffer> = []
      ws.on("message", (data: Buffer) => {
        if (!data.toString().startsWith('{"type":"ping"')) frames.push(Buffer.from(data))
      })
      await new Promise((resolve, reject) => {
        ws.once("open", resolve)
        ws.once("error", reject)
      })
      return { ws, frames }
    }
    const first = await raw()
    const second = await raw()
    for (const c of [first, second])
      for (const topic of ["trades", "prices"]) c.ws.send(JSON.stringify({ type: "subscribe", topic, marketId: market.hex }))
    await until(() => first.frames.length === 4 && second.frames.length === 4)
    const before = stats().sent
    await trade(BOB, 0, 150n * USDC)
    await index()
    await until(() => first.frames.length === 6 && second.frames.length === 6)
    expect(
      first.frames.every((frame, i) => frame.equals(second.frames[i]!)),
      "both followers got the same frames, byte for byte (snapshots and deltas)"
    ).toBe(true)
    const deltas = first.frames.slice(4).map((frame) => JSON.parse(frame.toString()))
    expect(deltas.map((d) => d.topic).sort(), "the trade moved both streams").toEqual(["prices", "trades"])
    expect(deltas[0], "a market's streams are read at one position: the trade's deltas name one seq and block").toMatchObject({
      type: "delta",
      seq: deltas[1].seq,
      block: deltas[1].block
    })
    const after = stats().sent
    const deltaBytes = first.frames.slice(4).reduce((sum, frame) => sum + frame.length, 0)
    expect(after.messages - before.messages, "the stream counts the messages it wrote").toBeGreaterThanOrEqual(4)
    expect(after.bytes - before.bytes, "and their bytes").toBeGreaterThanOrEqual(2 * deltaBytes)
    for (const c of [first, second]) c.ws.close()
    await until(() => stats().connections === 0)
  }, 60_000)

  it("cuts off a consumer whose send buffer goes over the bound with 4008, while another keeps receiving", async () => {
    // A second instance (its own LISTEN and feeds, as behind a load balancer) without a heartbeat,
    // which would otherwise close the paused client first.
    const second = await Effect.runPromise(
      Layer.buildWithScope(
        httpServerWithRealtime(
          { port: 0, host: "127.0.0.1" },
          {
            chainId: 130,
            window: WINDOW,
            maxBufferedBytes: 64 * 1024,
            pingIntervalMs: 3_600_000,
            closeGraceMs: 60_000,
            checkEveryMs: 60_000
          }
        ).pipe(Layer.provide([database, TestSessions])),
        scope
      ).pipe(quiet)
    )
    const address = Context.get(second, HttpServer.HttpServer).address
    const url = `ws://127.0.0.1:${address._tag === "TcpAddress" ? address.port : 0}/ws/realtime`
    const secondStats = Context.get(second, Realtime).stats
    const steady = await Client.open({}, "", url)
    steady.send({ type: "subscribe", topic: "trades", marketId: market.hex })
    await steady.next()
    const before = new View()
    before.apply(await steady.next())
    const slow = await Client.open({}, "", url)
    slow.ws.pause()
    // Each unservable resume is answered with a full snapshot the slow client does not read; the
    // kernel's socket buffers (megabytes on loopback) fill first, then the server's send buffer.
    const deadline = Date.now() + 90_000
    while (secondStats().closed.slowConsumer === 0 && Date.now() < deadline) {
      for (let i = 0; i < 200; i++) slow.send({ type: "resume", topic: "trades", marketId: market.hex, stream: "gone", seq: 0 })
      await new Promise((r) => setTimeout(r, 10))
    }
    expect(secondStats().closed.slowConsumer, "the paused consumer is cut off once its send buffer is over the bound").toBe(1)
    await trade(ALICE, 0, 100n * USDC)
    await index()
    before.apply(await steady.next())
    expect(before.deltas, "the steady consumer keeps receiving while the slow one is cut off").toHaveLength(1)
    slow.ws.resume()
    expect((await slow.closedWith())?.code, "the slow consumer's close code").toBe(4008)
    expect(steady.closed, "the steady consumer stays open").toBeUndefined()
    steady.ws.close()
  }, 120_000)

  it("re-reads only the feeds of the markets a commit's NOTIFY names as changed; a move naming none re-reads every feed", async () => {
    // An instance of its own whose refreshes are traced: the targets each move had read again.
    const reads: Array<string> = []
    const traced = await Effect.runPromise(
      Layer.buildWithScope(
        httpServerWithRealtime(
          { port: 0, host: "127.0.0.1" },
          { chainId: 130, window: WINDOW, pingIntervalMs: 3_600_000, checkEveryMs: 60_000, trace: (t) => void reads.push(t.target) }
        ).pipe(Layer.provide([database, TestSessions])),
        scope
      ).pipe(quiet)
    )
    const address = Context.get(traced, HttpServer.HttpServer).address
    const url = `ws://127.0.0.1:${address._tag === "TcpAddress" ? address.port : 0}/ws/realtime`
    // The commits' announcements, as any listener hears them.
    const listener = new pg.Client({ connectionString: databaseUrl })
    await listener.connect()
    const heard: Array<any> = []
    listener.on("notification", (n) => void heard.push(JSON.parse(n.payload!)))
    await listener.query(`listen ${INDEXED_CHANNEL}`)
    const c = await Client.open({}, "", url)
    const follow = async (topic: string, marketHex: string) => {
      c.send({ type: "subscribe", topic, marketId: marketHex })
      await c.next()
      const view = new View()
      view.apply(await c.next())
      return view
    }
    const trades = await follow("trades", market.hex)
    const book = await follow("orderbook", booksOnly.hex)
    const named = () => [...new Set(heard.flatMap((n) => n.markets ?? ["(any)"]))].sort()
    const restart = () => {
      reads.length = 0
      heard.length = 0
    }

    restart()
    await send(BOB, "Exchange", devnet.addresses.exchange, "placeOrder", [booksOnly.id, 0, 200_000n, 10n * USDC, ZERO32])
    await index()
    book.apply(await c.next())
    expect(named(), "an order's commit names its market alone").toEqual([booksOnly.id.toString()])
    expect([...new Set(reads)], "only that market's feeds were read again").toEqual([booksOnly.hex])

    restart()
    await trade(ALICE, 0, 100n * USDC)
    await index()
    trades.apply(await c.next())
    expect(named(), "a trade's commit names its market alone").toEqual([market.id.toString()])
    expect([...new Set(reads)], "only the traded market's feeds were read again").toEqual([market.hex])

    // A move that names no markets (an older indexer's NOTIFY, as a checkpoint read or a revert
    // also are): every feed is read again; nothing changed, so nothing is sent.
    restart()
    await listener.query("select pg_notify($1, $2)", [
      INDEXED_CHANNEL,
      encodeIndexedPayload({ chainId: 130, block: trades.block!, hash: trades.deltas.at(-1).hash, reverted: false })
    ])
    await until(() => new Set(reads).size === 2)
    expect([...new Set(reads)].sort(), "a move naming no markets reads every feed").toEqual([market.hex, booksOnly.hex].sort())

    // A reorg's revert names no markets: the traded market's feed sends the correction.
    await trade(ALICE, 0, 100n * USDC)
    await index()
    trades.apply(await c.next())
    restart()
    await client.reorg(1)
    await index()
    trades.apply(await c.next())
    expect(trades.deltas.at(-1), "the reorg's correction arrives").toMatchObject({ reorg: true, changes: [{ op: "remove" }] })
    expect(
      heard.filter((n) => n.reverted).map((n) => n.markets),
      "a revert names no markets"
    ).toEqual([undefined])
    expect(new Set(reads).has(booksOnly.hex), "so every market's feeds were read again").toBe(true)
    await new Promise((r) => setTimeout(r, 200))
    expect(c.pending(), "no delta beyond those the steps explain").toEqual([])
    c.ws.close()
    await listener.end()
  }, 120_000)
})

const until = async (condition: () => boolean, ms = 30_000) => {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not reached")
    await new Promise((r) => setTimeout(r, 20))
  }
}
