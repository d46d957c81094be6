/**
 * WebSocket resume across instances (issue 31 item 4): two stream servers over one database, each
 * with its own LISTEN and feeds as two `--only api` processes behind a load balancer would be, a
 * live devnet stepped by the test, and real `ws` clients over loopback.
 *
 * - A client follows trades on A, disconnects, misses a trade, another one and a reorg that drops
 *   it, and resumes on B with its last (stream, seq): it gets exactly the deltas B's own follower
 *   got after that position, in order (the reorg's removal included), then the next delta with
 *   nothing repeated; its state equals a fresh snapshot's on A.
 * - A client whose position B never read (B followed nothing of that stream then) gets a snapshot
 *   of the current position instead: B cannot prove which deltas it missed.
 */
import { HttpServer } from "@effect/platform"
import { Context, Effect, Exit, Layer, Logger, LogLevel, Scope } from "effect"
import { maxUint256 } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { httpServerWithRealtime } from "../../../http/ws/server.js"
import { RealtimeSessions } from "../../../http/ws/sessions.js"
import type { Address } from "../../../tools/devnet/client.js"
import { ADMIN } from "../../../tools/devnet/deploy.js"
import { USDC, withIndexedDevnet, type IndexedDevnet } from "../../support/indexed-devnet.js"
import { WsClient as Client } from "./support/ws-client.js"

const ALICE = 2
const ZERO = "0x0000000000000000000000000000000000000000" as Address

const scope = Effect.runSync(Scope.make())
let client: IndexedDevnet["client"]
let devnet: IndexedDevnet["devnet"]
let index: IndexedDevnet["index"]
let urlA: string
let urlB: string
let market: { id: bigint; hex: string }
const quiet = Logger.withMinimumLogLevel(LogLevel.Error)

/** Market topics only: no session needed. */
const NoSessions = Layer.succeed(RealtimeSessions, { identify: () => Effect.succeed([]) })

beforeAll(async () => {
  const indexed = await withIndexedDevnet(scope)
  ;({ client, devnet, index } = indexed)
  // Two instances: each its own Node server, its own indexed-heads LISTEN and its own feeds.
  const instance = async () => {
    const context = await Effect.runPromise(
      Layer.buildWithScope(
        httpServerWithRealtime({ port: 0, host: "127.0.0.1" }, { chainId: 130, window: 50, checkEveryMs: 60_000 }).pipe(
          Layer.provide([indexed.database, NoSessions])
        ),
        scope
      ).pipe(quiet)
    )
    const address = Context.get(context, HttpServer.HttpServer).address
    return `ws://127.0.0.1:${address._tag === "TcpAddress" ? address.port : 0}/ws/realtime`
  }
  urlA = await instance()
  urlB = await instance()
  await indexed.fund([ADMIN, ALICE], 1_000_000n * USDC)
  const endTime = BigInt(await client.timestamp()) + 30n * 86_400n
  const id = await indexed.launch("Will a resume cross instances?", endTime, 50_000n * USDC)
  market = { id, hex: `0x${id.toString(16).padStart(64, "0")}` }
  await index()
}, 240_000)

afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

/** A client's state of one stream, with the checks a client makes: same stream, each delta applies to the position held. */
class View {
  state = new Map<string, unknown>()
  stream = ""
  seq = -1
  apply(message: any) {
    if (message.type === "snapshot") {
      this.state = new Map(message.data.map((e: any) => [e.key, e.value]))
      this.stream = message.stream
    } else {
      expect(message.type).toBe("delta")
      expect(message.stream, "a delta of the stream held").toBe(this.stream)
      expect(message.prev, "a delta applies to the position the client holds").toBe(this.seq)
      for (const change of message.changes) {
        if (change.op === "remove") {
          expect(this.state.has(change.key), `removes ${change.key}, which it holds`).toBe(true)
          this.state.delete(change.key)
        } else this.state.set(change.key, change.value)
      }
    }
    this.seq = message.seq
  }
}

const subscribe = async (url: string, topic: string) => {
  const c = await Client.open(url)
  c.send({ type: "subscribe", topic, marketId: market.hex })
  expect(await c.next()).toEqual({ type: "subscribed", topic, marketId: market.hex })
  const view = new View()
  const snapshot = await c.next()
  expect(snapshot.type).toBe("snapshot")
  view.apply(snapshot)
  return { c, view }
}

const trade = (amount: bigint) =>
  client.send(ALICE, "Router", devnet.addresses.router, "trade", [
    0,
    market.id,
    amount * USDC,
    0n,
    client.address(ALICE),
    0n,
    maxUint256,
    ZERO
  ])

describe("WebSocket resume on another instance", () => {
  it("a client that left instance A resumes on instance B with exactly the deltas it missed, a reorg's included, and nothing repeated", async () => {
    // B's own follower of the stream (behind a load balancer, other clients keep its feed live).
    const onB = await subscribe(urlB, "trades")
    const onA = await subscribe(urlA, "trades")
    expect(onA.view.stream, "both instances name the stream alike").toBe(onB.view.stream)

    await trade(100n)
    await index()
    const first = await onA.c.next()
    const firstOnB = await onB.c.next()
    onA.view.apply(first)
    onB.view.apply(firstOnB)
    expect(first, "both instances send one change as the same delta: same position, same changes").toEqual(firstOnB)
    const left = { stream: onA.view.stream, seq: onA.view.seq, state: new Map(onA.view.state) }
    await onA.c.close()

    // Missed: two trades, then a reorg that drops the second.
    const missed: Array<any> = []
    for (const amount of [200n, 300n]) {
      await trade(amount)
      await index()
      missed.push(await onB.c.next())
    }
    const dropped = missed[1].changes[0].key
    await client.reorg(1)
    await index()
    missed.push(await onB.c.next())
    expect(missed[2], "the reorg's correction is a reorg delta removing the dropped trade").toMatchObject({
      reorg: true,
      changes: [{ op: "remove", key: dropped }]
    })
    for (const delta of missed) onB.view.apply(delta)

    const back = await Client.open(urlB)
    back.send({ type: "resume", topic: "trades", marketId: market.hex, stream: left.stream, seq: left.seq })
    expect(await back.next(), "a resume is acknowledged as a subscription").toEqual({
      type: "subscribed",
      topic: "trades",
      marketId: market.hex
    })
    const got = [await back.next(), await back.next(), await back.next()]
    expect(got, "exactly the missed deltas, in order").toEqual(missed)
    const resumed = new View()
    resumed.stream = left.stream
    resumed.seq = left.seq
    resumed.state = left.state
    for (const delta of got) resumed.apply(delta)
    expect(resumed.state, "the resumed state equals B's follower's").toEqual(onB.view.state)

    // Nothing repeated: the next message is the next commit's delta, applying to the position reached.
    await trade(400n)
    await index()
    const next = await back.next()
    expect(next, "after the missed deltas comes the next change").toMatchObject({ type: "delta", prev: resumed.seq })
    resumed.apply(next)
    onB.view.apply(await onB.c.next())
    const fresh = await subscribe(urlA, "trades")
    expect(resumed.state, "the resumed client's state equals a fresh snapshot on A").toEqual(fresh.view.state)
    expect(resumed.seq, "and names the same position").toBe(fresh.view.seq)
    for (const c of [onB.c, back, fresh.c]) await c.close()
  }, 120_000)

  it("a client whose position instance B cannot prove gets a snapshot of the current position there", async () => {
    // Nobody follows prices on B: its feed starts at the resume, after the commits the client missed.
    const onA = await subscribe(urlA, "prices")
    await trade(150n)
    await index()
    onA.view.apply(await onA.c.next())
    const left = { stream: onA.view.stream, seq: onA.view.seq }
    await onA.c.close()
    await trade(250n)
    await index()

    const back = await Client.open(urlB)
    back.send({ type: "resume", topic: "prices", marketId: market.hex, stream: left.stream, seq: left.seq })
    expect(await back.next()).toEqual({ type: "subscribed", topic: "prices", marketId: market.hex })
    const snapshot = await back.next()
    expect(snapshot, "an unprovable resume is answered with a snapshot of the same stream").toMatchObject({
      type: "snapshot",
      stream: left.stream
    })
    expect(snapshot.seq, "at a later position than the client held").toBeGreaterThan(left.seq)
    const fresh = await subscribe(urlA, "prices")
    expect(snapshot.seq, "the position A names for the same state").toBe(fresh.view.seq)
    expect(new Map(snapshot.data.map((e: any) => [e.key, e.value])), "the same state as A's").toEqual(fresh.view.state)
    for (const c of [back, fresh.c]) await c.close()
  }, 120_000)
})
