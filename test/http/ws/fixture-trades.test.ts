/**
 * The WebSocket `trades` topic on the committed devnet fixture (no chain, no re-index): every
 * market's stream holds every one of its trades, equal to the backend's REST list, whose prices
 * equal the indexer's. The fixture's router trade in market 28 (block 307) sells 100 YES for
 * 109.286429 USDC into a pool priced above 1: its price, 1.092864 USDC per share, once failed the
 * backend record's 0..1 price bound, and the subscriber got SERVICE_UNAVAILABLE for the whole
 * topic. Then a record that does not fit its schema (a price snapshot above 1 written into this
 * copy of the index): the subscriber of that topic is told INTERNAL_ERROR naming the entry, the
 * server logs it, and the same connection's other topics keep being served.
 */
import { HttpServer } from "@effect/platform"
import { Context, Effect, Exit, Layer, Logger, LogLevel, Redacted, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backendHttpLayer } from "../../../http/backend/api.js"
import { indexerServerLayer } from "../../../http/indexer/api.js"
import { httpServerWithRealtime } from "../../../http/ws/server.js"
import { RealtimeSessions } from "../../../http/ws/sessions.js"
import { BuildInfoLive } from "../../../src/build-info.js"
import { pgClientLayer } from "../../../src/db/database.js"
import { fixtureDatabaseUrl } from "../../support/fixture-db.js"
import { query } from "../../support/postgres.js"
import { tcpUrl } from "../backend/support/harness.js"
import { WsClient } from "./support/ws-client.js"

/** More than any fixture market's trades (checked below), so a stream holds all of a market's. */
const WINDOW = 100
/** The fixture's trade priced above 1 USDC per share. */
const OFFENDING = { market: 28n, txHash: "0xbb843f1f0bd62ac5effaeba2248cd084486be4a77d6da8502b5ee31c15bdbf85", price: "1.092864" }

const scope = Effect.runSync(Scope.make())
let base: string
let indexerBase: string
let wsUrl: string
let databaseUrl: string
const logged: Array<{ level: string; message: unknown; annotations: Record<string, unknown> }> = []

const hex = (id: bigint) => `0x${id.toString(16).padStart(64, "0")}`

/** Keeps what the server logs at warning and above, to check what a failure leaves in the log. */
const recording = Logger.make(({ logLevel, message, annotations }) => {
  if (logLevel._tag !== "Error" && logLevel._tag !== "Warning") return
  const fields: Record<string, unknown> = {}
  for (const [key, value] of annotations) fields[key] = value
  logged.push({ level: logLevel._tag, message, annotations: fields })
})

beforeAll(async () => {
  const quiet = Logger.withMinimumLogLevel(LogLevel.Warning)
  const fixture = await Effect.runPromise(Scope.extend(fixtureDatabaseUrl, scope).pipe(quiet))
  databaseUrl = fixture.url
  const database = pgClientLayer(Redacted.make(fixture.url))
  const indexer = await Effect.runPromise(
    Layer.buildWithScope(indexerServerLayer(130, { port: 0, host: "127.0.0.1" }).pipe(Layer.provide(database)), scope).pipe(quiet)
  )
  indexerBase = tcpUrl(indexer)
  const realtime = httpServerWithRealtime({ port: 0, host: "127.0.0.1" }, { chainId: 130, window: WINDOW, checkEveryMs: 60_000 })
  const backend = backendHttpLayer({ chainId: 130, indexerUrl: indexerBase, cacheBytes: 0 }).pipe(
    Layer.provideMerge(realtime),
    Layer.provide([
      database,
      BuildInfoLive,
      Layer.succeed(RealtimeSessions, { identify: () => Effect.succeed([]) }),
      Logger.replace(Logger.defaultLogger, recording)
    ])
  )
  const context = await Effect.runPromise(Layer.buildWithScope(backend, scope).pipe(quiet))
  base = tcpUrl(context as Context.Context<HttpServer.HttpServer>)
  wsUrl = `${base.replace("http", "ws")}/ws/realtime`
}, 240_000)

afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

const getJson = async (url: string) => {
  const response = await fetch(url)
  const body = (await response.json()) as any
  expect(response.status, `${url}: ${JSON.stringify(body).slice(0, 300)}`).toBe(200)
  return body
}

const key = (trade: any) => `${trade.txHash}:${trade.logIndex}:${trade.source}`

describe("the trades topic on the fixture", () => {
  it("streams every trade of every market, equal to REST (backend and indexer), the trade priced above 1 included", async () => {
    const markets = (await getJson(`${indexerBase}/api/markets?limit=100`)).data as Array<{ id: string }>
    expect(markets.length, "the fixture's markets").toBeGreaterThan(0)
    const client = await WsClient.open(wsUrl)
    let streamed = 0
    for (const { id } of markets) {
      const marketHex = hex(BigInt(id))
      client.send({ type: "subscribe", topic: "trades", marketId: id })
      expect(await client.next(), `market ${id}`).toEqual({ type: "subscribed", topic: "trades", marketId: marketHex })
      const snapshot = await client.next()
      expect(snapshot, `market ${id}`).toMatchObject({ type: "snapshot", topic: "trades", marketId: marketHex })
      const rest = await getJson(`${base}/api/markets/${id}/trades?limit=${WINDOW}`)
      expect(rest.meta.pagination.total, `market ${id}: every trade fits one page and the stream's window`).toBeLessThanOrEqual(WINDOW)
      const indexer = await getJson(`${indexerBase}/api/markets/${id}/trades?limit=${WINDOW}`)
      expect(
        rest.data.map((t: any) => [key(t), t.price]),
        `market ${id}: the backend's trades and prices are the indexer's`
      ).toEqual(indexer.data.map((t: any) => [key(t), t.price]))

      // The stream holds exactly the REST list, newest first, each entry keyed by its trade.
      expect(snapshot.data, `market ${id}: the trades stream equals REST's trades`).toEqual(
        rest.data.map((t: any) => ({ key: key(t), value: t }))
      )
      streamed += snapshot.data.length
      client.send({ type: "unsubscribe", topic: "trades", marketId: id })
      expect(await client.next()).toEqual({ type: "unsubscribed", topic: "trades", marketId: marketHex })
    }
    const [counted] = (
      await Effect.runPromise(
        query(
          databaseUrl,
          `select (select count(*) from trade) + (select count(*) from taker_fill f where not exists (select 1 from trade t where t.tx_hash = f.tx_hash and t.market_id = f.market_id)) + (select count(*) from order_match where taker_order_id <> '0x${"0".repeat(64)}') as count`
        )
      )
    ).rows as Array<{ count: string }>
    expect(streamed, "every router trade and CLOB taker fill of the fixture was streamed").toBe(Number(counted!.count))

    const offending = (await getJson(`${base}/api/markets/${OFFENDING.market}/trades?limit=${WINDOW}`)).data.find(
      (t: any) => t.txHash === OFFENDING.txHash
    )
    expect(offending, "the sell into a pool priced above 1").toMatchObject({
      tradeType: "SELL_YES",
      amountIn: { raw: "100000000", unit: "YES" },
      amountOut: { raw: "109286429", unit: "USDC" },
      price: OFFENDING.price
    })
    await client.close()
  }, 300_000)

  it("answers a record that does not fit its schema with INTERNAL_ERROR naming it, logs it, and keeps serving the other topics", async () => {
    // A price snapshot above 1 (a YES price is a probability): the prices topic cannot encode it.
    const [bad] = (
      await Effect.runPromise(
        query(
          databaseUrl,
          "update price_snapshot set yes_price = 2000000 where (block_number, log_index) = (select block_number, log_index from price_snapshot where market_id = $1 order by block_number desc, log_index desc limit 1) returning block_number, log_index, source",
          [OFFENDING.market.toString()]
        )
      )
    ).rows as Array<{ block_number: string; log_index: number; source: string }>
    expect(bad, "a snapshot to spoil").toBeDefined()
    const entry = `${bad!.block_number}:${bad!.log_index}:${bad!.source}`
    const marketHex = hex(OFFENDING.market)
    const client = await WsClient.open(wsUrl)
    client.send({ type: "subscribe", topic: "prices", marketId: OFFENDING.market.toString() })
    const error = await client.next()
    expect(error).toMatchObject({ type: "error", code: "INTERNAL_ERROR", topic: "prices", marketId: marketHex })
    expect(error.message, "names the entry that failed").toContain(entry)
    expect(
      logged.find((line) => line.level === "Error" && line.annotations["key"] === entry),
      "the server logged the entry with the schema's complaint"
    ).toMatchObject({ annotations: { topic: "prices", key: entry, issue: expect.any(String) } })

    // The connection is alive and its other topics are served.
    client.send({ type: "subscribe", topic: "trades", marketId: OFFENDING.market.toString() })
    expect(await client.next()).toEqual({ type: "subscribed", topic: "trades", marketId: marketHex })
    const snapshot = await client.next()
    expect(snapshot).toMatchObject({ type: "snapshot", topic: "trades", marketId: marketHex })
    expect(snapshot.data.some((e: any) => e.value.price === OFFENDING.price)).toBe(true)
    await client.close()
  }, 120_000)
})
