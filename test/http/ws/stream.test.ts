/**
 * The WebSocket stream against a live devnet: anvil, the protocol deployed, the indexer stepped by
 * the test, the backend (REST + /ws/realtime on one Node server) and real `ws` clients over
 * loopback. An order, a trade and the price it moves arrive as deltas with consecutive seq; the
 * client's state (snapshot + deltas) equals the REST answer after every step, a reorg included; a
 * resume after a gap gets exactly the missed deltas. Then errors and limits, the heartbeat, and a
 * slow consumer cut off while another client keeps receiving.
 */
import { HttpServer } from "@effect/platform"
import { Context, Effect, Exit, Layer, Logger, LogLevel, ManagedRuntime, Redacted, Scope } from "effect"
import { maxUint256 } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import WebSocket from "ws"
import { backendHttpLayer } from "../../../http/backend/api.js"
import { indexerServerLayer } from "../../../http/indexer/api.js"
import { httpServerWithRealtime, Realtime, type RealtimeStats } from "../../../http/ws/server.js"
import { RealtimeSessions } from "../../../http/ws/sessions.js"
import { makeIndexer } from "../../../pipeline/run.js"
import { makeRpc } from "../../../pipeline/source/rpc.js"
import { BuildInfoLive } from "../../../src/build-info.js"
import { pgClientLayer } from "../../../src/db/database.js"
import { runMigrations } from "../../../src/db/migrations.js"
import { startAnvil, type Anvil } from "../../../tools/devnet/anvil.js"
import { DevnetClient, type Address } from "../../../tools/devnet/client.js"
import { compileContracts } from "../../../tools/devnet/compile.js"
import { ADMIN, deployDevnet, type Devnet } from "../../../tools/devnet/deploy.js"
import { scratchDatabaseUrl } from "../../support/postgres.js"
import { tcpUrl } from "../backend/support/harness.js"

const USDC = 1_000_000n
const ALICE = 2
const BOB = 3
const ZERO = "0x0000000000000000000000000000000000000000" as Address
const ZERO32 = `0x${"0".repeat(64)}`
const WINDOW = 50

let anvil: Anvil
let client: DevnetClient
let devnet: Devnet
const scope = Effect.runSync(Scope.make())
let runtime: ManagedRuntime.ManagedRuntime<any, any>
let index: () => Promise<void>
let database: Layer.Layer<any, any>
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
  anvil = await startAnvil()
  client = new DevnetClient(anvil.url, compileContracts())
  devnet = await deployDevnet(client, { deployedVariants: false })
  const url = await Effect.runPromise(Scope.extend(scratchDatabaseUrl, scope))
  database = pgClientLayer(Redacted.make(url))
  runtime = ManagedRuntime.make(database)
  await runtime.runPromise(runMigrations().pipe(quiet))
  const indexer = await runtime.runPromise(
    makeIndexer({
      rpc: makeRpc({ url: anvil.url }),
      deployment: devnet.deployment,
      chainId: 130,
      backfillThread: false,
      confirmations: 1_000
    }).pipe(quiet)
  )
  let window = await runtime.runPromise(indexer.loadWindow)
  index = async () => {
    window = await runtime.runPromise(indexer.step(window).pipe(quiet) as Effect.Effect<any, any, any>)
  }
  const realtime = httpServerWithRealtime(
    { port: 0, host: "127.0.0.1" },
    {
      chainId: 130,
      window: WINDOW,
      maxSubscriptions: 3,
      maxConnectionsPerIp: 6,
      maxConnections: 9,
      pingIntervalMs: 150,
      pongTimeoutMs: 300,
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

  const a = devnet.addresses
  for (const user of [ADMIN, ALICE, BOB]) {
    await send(ADMIN, "TestUsdc", a.testUsdc, "mint", [client.address(user), 1_000_000n * USDC])
    for (const spender of [a.router, a.exchange, a.diamond, a.poolManager, a.marketFactory])
      await send(user, "TestUsdc", a.testUsdc, "approve", [spender, maxUint256])
  }
  const endTime = BigInt(await client.timestamp()) + 30n * 86_400n
  await send(ADMIN, "MarketFactory", a.marketFactory, "launch", ["Will the stream keep up?", endTime, a.manualOracle, 50_000n * USDC])
  const id = await client.read<bigint>("MarketFacet", a.diamond, "marketCount")
  market = { id, hex: `0x${id.toString(16).padStart(64, "0")}` }
  await send(ADMIN, "MarketFactory", a.marketFactory, "launch", ["Books only?", endTime, a.manualOracle, 0n])
  booksOnly = { id: id + 1n, hex: `0x${(id + 1n).toString(16).padStart(64, "0")}` }
  await index()
}, 240_000)

afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await runtime?.dispose()
  await anvil?.stop()
})

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
      expect(message.seq, "seq grows by one").toBe(this.seq + 1)
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

/** The REST answer each topic's state must equal. */
const expectEqualsRest = async (topic: string, view: View) => {
  const values = [...view.state.values()] as Array<any>
  if (topic === "orderbook") {
    const book = (await rest(`/api/markets/${market.id}/orderbook`)).data
    for (const outcome of ["yes", "no"]) {
      for (const side of ["bids", "asks"]) {
        const levels = [...view.state].filter(([k]) => k.startsWith(`${outcome}:${side}:`)).map(([, v]) => v as any)
        levels.sort((a, b) => (side === "bids" ? Number(b.price) - Number(a.price) : Number(a.price) - Number(b.price)))
        expect(levels, `${outcome} ${side}`).toEqual(book[outcome][side])
      }
    }
  } else if (topic === "trades") {
    const trades = (await rest(`/api/markets/${market.id}/trades?limit=${WINDOW}`)).data
    expect([...values].sort(bySort)).toEqual([...trades].sort(bySort))
  } else {
    const total = (await rest(`/api/markets/${market.id}/prices?limit=1`)).meta.pagination.total
    const points = (await rest(`/api/markets/${market.id}/prices?limit=${WINDOW}&offset=${Math.max(0, total - WINDOW)}`)).data
    expect([...values].sort(bySort)).toEqual([...points].sort(bySort))
  }
}

const TOPICS = ["orderbook", "trades", "prices"] as const

const subscribeAll = async (c: Client) => {
  const views: Record<string, View> = {}
  for (const topic of TOPICS) {
    c.send({ type: "subscribe", topic, marketId: market.id.toString() })
    expect(await c.next()).toEqual({ type: "subscribed", topic, marketId: market.hex })
    const snapshot = await c.next()
    expect(snapshot).toMatchObject({ type: "snapshot", topic, marketId: market.hex, seq: 0 })
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
    for (const topic of TOPICS) await expectEqualsRest(topic, views[topic]!)
    const head = views["trades"]!.block!
    expect(head).toBeGreaterThan(0)

    // An order: the book gets a level (one delta); trades and prices do not move.
    await send(BOB, "Exchange", a.exchange, "placeOrder", [market.id, 0, 300_000n, 40n * USDC, ZERO32])
    await index()
    await receive(watcher, views, { orderbook: 1 })
    expect(views["orderbook"]!.deltas[0].changes).toEqual([
      { op: "upsert", key: expect.stringMatching(/^yes:bids:0\.3/), value: expect.objectContaining({ orders: 1 }) }
    ])
    expect(views["orderbook"]!.block).toBeGreaterThan(head)
    await expectEqualsRest("orderbook", views["orderbook"]!)

    // A router trade on the AMM: a trade and a price point.
    await trade(ALICE, 0, 500n * USDC)
    await index()
    await receive(watcher, views, { trades: 1, prices: 1 })
    expect(views["trades"]!.deltas[0].changes).toMatchObject([{ op: "upsert", value: { tradeType: "BUY_YES", source: "router" } }])
    expect(views["prices"]!.deltas[0].changes.every((c: any) => c.op === "upsert")).toBe(true)
    for (const topic of TOPICS) await expectEqualsRest(topic, views[topic]!)

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
    expect(await back.next()).toEqual({ type: "subscribed", topic: "trades", marketId: market.hex })
    const missed = [await back.next(), await back.next()]
    expect(missed).toEqual(views["trades"]!.deltas.slice(-2))
    for (const delta of missed) held.apply(delta)
    expect(held.state).toEqual(views["trades"]!.state)
    // A resume the feed cannot serve (another stream's numbers) gets a fresh snapshot.
    back.send({ type: "resume", topic: "trades", marketId: market.hex, stream: "not-a-stream", seq: 1 })
    await back.next()
    expect(await back.next()).toMatchObject({ type: "snapshot", seq: views["trades"]!.seq, stream: held.stream })
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
    expect(correction).toMatchObject({ reorg: true, changes: [{ op: "remove", key: added }] })
    expect(views["prices"]!.deltas.at(-1).reorg).toBe(true)
    expect(views["prices"]!.deltas.at(-1).changes.every((c: any) => c.op === "remove")).toBe(true)
    for (const topic of TOPICS) await expectEqualsRest(topic, views[topic]!)
    expect(watcher.pending()).toEqual([])
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
    expect([...book.state.keys()]).toEqual([expect.stringMatching(/^no:bids:/)])
    await client.reorg(2)
    await index()
    book.apply(await follower.next())
    expect(book.deltas.at(-1)).toMatchObject({ reorg: true, changes: [{ op: "remove" }] })
    expect(book.state.size).toBe(0)
    expect((await fetch(`${base}/api/markets/${gone}/orderbook`)).status).toBe(404)
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
    expect(await errorOf("{not json")).toBe("BAD_JSON")
    expect(await errorOf({ type: "subscribe" })).toBe("BAD_MESSAGE")
    expect(await errorOf({ type: "resume", topic: "trades", marketId: "1", stream: "s", seq: -1 })).toBe("BAD_MESSAGE")
    expect(await errorOf({ type: "subscribe", topic: "candles", marketId: "1" })).toBe("INVALID_TOPIC")
    expect(await errorOf({ type: "subscribe", topic: "trades", marketId: "one" })).toBe("INVALID_MARKET_ID")
    expect(await errorOf({ type: "subscribe", topic: "trades", marketId: `0x1${"0".repeat(64)}` })).toBe("INVALID_MARKET_ID")
    expect(await errorOf({ type: "subscribe", topic: "trades", marketId: "999" })).toBe("MARKET_NOT_FOUND")
    expect(await errorOf({ type: "subscribe", topic: "user-trades", subject: "0x12" })).toBe("INVALID_ADDRESS")
    const alice = client.address(ALICE).toLowerCase()
    const bob = client.address(BOB).toLowerCase()
    expect(await errorOf({ type: "subscribe", topic: "user-orders", subject: alice })).toBe("AUTH_REQUIRED")

    // Subscriptions: three per connection here; an unsubscribe frees one.
    for (const topic of TOPICS) c.send({ type: "subscribe", topic, marketId: market.hex })
    for (let i = 0; i < 6; i++) expect(["subscribed", "snapshot"]).toContain((await c.next()).type)
    expect(await errorOf({ type: "subscribe", topic: "orderbook", marketId: booksOnly.hex })).toBe("TOO_MANY_SUBSCRIPTIONS")
    c.send({ type: "unsubscribe", topic: "trades", marketId: market.hex })
    expect(await c.next()).toEqual({ type: "unsubscribed", topic: "trades", marketId: market.hex })
    c.send({ type: "subscribe", topic: "orderbook", marketId: booksOnly.id.toString() })
    expect(await c.next()).toEqual({ type: "subscribed", topic: "orderbook", marketId: booksOnly.hex })
    expect(await c.next()).toMatchObject({ type: "snapshot", topic: "orderbook", marketId: booksOnly.hex, seq: 0, data: [] })

    // A session proves an address: another address's topics are refused, and a cookie rides only from an allowed origin.
    const withToken = await Client.open({}, "?token=alice-token")
    withToken.send({ type: "subscribe", topic: "user-portfolio", subject: bob })
    expect(await withToken.next()).toMatchObject({ type: "error", code: "FORBIDDEN", subject: bob })
    const crossSite = await Client.open({ headers: { cookie: "predix_session=alice-cookie", origin: "https://evil.example" } })
    crossSite.send({ type: "subscribe", topic: "user-positions", subject: alice })
    expect(await crossSite.next()).toMatchObject({ type: "error", code: "AUTH_REQUIRED" })
    // The session's own topics stream like market topics, equal to REST.
    withToken.send({ type: "subscribe", topic: "user-trades", subject: alice.toUpperCase().replace("0X", "0x") })
    expect(await withToken.next()).toEqual({ type: "subscribed", topic: "user-trades", subject: alice })
    const mine = new View()
    mine.apply(await withToken.next())
    const sameSite = await Client.open({ headers: { cookie: "predix_session=alice-cookie", origin: base } })
    sameSite.send({ type: "subscribe", topic: "user-portfolio", subject: alice })
    expect(await sameSite.next()).toEqual({ type: "subscribed", topic: "user-portfolio", subject: alice })
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
      expect(await more.next()).toEqual({ type: "subscribed", topic, subject: alice })
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
    expect(orders.deltas).toHaveLength(1)
    expect(positions.deltas).toHaveLength(1)
    const byKey = (view: View) => [...view.state.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, value]) => value)
    const restOrders = (await rest(`/api/trading/${alice}/orders?limit=${WINDOW}`)).data
    expect(restOrders.length).toBeGreaterThan(0)
    expect(byKey(orders)).toEqual([...restOrders].sort((a: any, b: any) => a.orderId.localeCompare(b.orderId)))
    const restPositions = (await rest(`/api/trading/${alice}/portfolio`)).data.positions
    expect(byKey(positions)).toEqual([...restPositions].sort((a: any, b: any) => a.marketId.localeCompare(b.marketId)))
    expect(restPositions.length).toBeGreaterThan(0)
    more.ws.close()
    expect(mine.deltas[0].changes).toMatchObject([{ op: "upsert", value: { tradeType: "BUY_NO", trader: alice } }])
    const restTrades = (await rest(`/api/trading/${alice}/trades?limit=${WINDOW}`)).data
    expect([...mine.state.values()].sort(bySort)).toEqual([...restTrades].sort(bySort))
    portfolio.apply(await sameSite.next())
    expect(portfolio.state.get("portfolio")).toEqual((await rest(`/api/trading/${alice}/portfolio`)).data)
    sameSite.ws.close()

    // Connections: six per address, nine in all (c, withToken and crossSite are three of 127.0.0.1's).
    const same = await Promise.all([1, 2, 3].map(() => Client.open()))
    const refused = await Client.open()
    expect(await refused.next()).toMatchObject({ type: "error", code: "TOO_MANY_CONNECTIONS" })
    expect((await refused.closedWith())?.code).toBe(1013)
    const other = await Promise.all([1, 2, 3].map(() => Client.open({ localAddress: "127.0.0.2" })))
    const overCap = await Client.open({ localAddress: "127.0.0.3" })
    expect(await overCap.next()).toMatchObject({ type: "error", code: "TOO_MANY_CONNECTIONS" })
    expect((await overCap.closedWith())?.code).toBe(1013)
    expect(stats().connections).toBe(9)
    for (const open of [c, withToken, crossSite, ...same, ...other]) open.ws.close()
    await until(() => stats().connections === 0)
  }, 60_000)

  it("closes a socket that does not answer ping with 4000, and keeps one that does", async () => {
    const alive = await Client.open()
    const silent = await Client.open()
    silent.autoPong = false
    expect((await silent.closedWith())?.code).toBe(4000)
    expect(silent.pings).toBeGreaterThanOrEqual(1)
    await until(() => alive.pings >= silent.pings + 2)
    expect(alive.closed).toBeUndefined()
    alive.send({ type: "subscribe", topic: "trades", marketId: market.hex })
    expect(await alive.next()).toMatchObject({ type: "subscribed" })
    alive.ws.close()
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
    expect(secondStats().closed.slowConsumer).toBe(1)
    await trade(ALICE, 0, 100n * USDC)
    await index()
    before.apply(await steady.next())
    expect(before.deltas).toHaveLength(1)
    slow.ws.resume()
    expect((await slow.closedWith())?.code).toBe(4008)
    expect(steady.closed).toBeUndefined()
    steady.ws.close()
  }, 120_000)
})

const until = async (condition: () => boolean, ms = 30_000) => {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not reached")
    await new Promise((r) => setTimeout(r, 20))
  }
}
