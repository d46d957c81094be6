/**
 * Notifications from the chain on a live devnet: anvil, the protocol deployed, the indexer
 * stepped by the test into the backend's database, the notification consumer as the server runs
 * it (LISTEN predix_indexed; its poll set long, so the NOTIFY drives it) and the API read by
 * signed-in users. A fill, a cancellation, a pause, a resolution and the redemption it opens each
 * notify their users exactly once: across a consumer that was down while blocks were indexed (it
 * catches up from its cursor), two consumers at once, and an indexer restart. A reorg of their
 * block retracts them. A faucet claim confirmed for a user's smart account notifies the user.
 */
import { Effect, Exit, Layer, Logger, LogLevel, Redacted, Scope } from "effect"
import { maxUint256 } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { NotificationConsumerLive } from "../../../http/backend/community/notification-consumer.js"
import { pgClientLayer } from "../../../src/db/database.js"
import type { Address } from "../../../tools/devnet/client.js"
import { ADMIN, TIMING } from "../../../tools/devnet/deploy.js"
import { USDC, withIndexedDevnet, type IndexedDevnet } from "../../support/indexed-devnet.js"
import { signIn, startBackends, type Backends, type Instance } from "./support/auth-harness.js"

const ALICE = 2
const BOB = 3
const BUY_YES = 0
const BUY_NO = 2
const ZERO32 = `0x${"0".repeat(64)}`
const ZERO20 = `0x${"0".repeat(40)}`
const quiet = Logger.withMinimumLogLevel(LogLevel.Error)

const scope = Effect.runSync(Scope.make())
let client: IndexedDevnet["client"]
let devnet: IndexedDevnet["devnet"]
let backends: Backends
let api: Instance
let index: IndexedDevnet["index"]
let restartIndexer: IndexedDevnet["restartIndexer"]
const cookies: Record<number, string> = {}
let market: bigint

const send = (from: number, contract: string, address: Address, fn: string, args: ReadonlyArray<unknown> = []) =>
  client.send(from, contract, address, fn, args)

/** A running consumer; `stop` ends it as a process exit would. */
const startConsumer = async () => {
  const scope = Effect.runSync(Scope.make())
  await Effect.runPromise(
    Layer.buildWithScope(
      NotificationConsumerLive(130, { pollEveryMs: 600_000 }).pipe(Layer.provide(pgClientLayer(Redacted.make(backends.databaseUrl)))),
      scope
    ).pipe(quiet)
  )
  return { stop: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

/** Until the consumer's cursor stands at the indexed head (a hang fails after a minute, no timing is asserted). */
const caughtUp = async () => {
  for (let i = 0; i < 600; i++) {
    const [row] = await backends.sql(`select c.block_number = k.block_number and c.block_hash = k.block_hash as done
      from notification_cursor c join indexer_checkpoint k on k.chain_id = c.chain_id where c.chain_id = 130`)
    if (row?.["done"] === true) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error("the notification consumer did not catch up")
}

const inbox = async (user: number) => {
  const answer = await api.call("GET", "/api/notifications?limit=100", { headers: { cookie: `predix_session=${cookies[user]}` } })
  expect(answer.status, `user ${user}'s notifications answer`).toBe(200)
  return answer.body.data as Array<any>
}
const summary = (notes: Array<any>) =>
  notes
    .map((n) => `${n.type}:${n.detail.role ?? n.detail.resolution ?? n.detail.kind ?? ""}:${n.detail.fill ?? n.detail.kind ?? ""}`)
    .sort()

beforeAll(async () => {
  // The indexer writes into the backends' database, as `predix start` has them share one.
  backends = await startBackends()
  const chain = await withIndexedDevnet(scope, { databaseUrl: backends.databaseUrl })
  ;({ client, devnet, index, restartIndexer } = chain)
  api = await backends.start()
  for (const user of [ALICE, BOB]) cookies[user] = (await signIn(api, client.account(user))).cookie!

  await chain.fund([ADMIN, ALICE, BOB], 1_000_000n * USDC)
  const endTime = BigInt(await client.timestamp()) + 3_600n
  market = await chain.launch("Will notifications arrive once?", endTime, 0n)
  await index()
}, 240_000)

afterAll(async () => {
  // The indexer's pool and anvil, then the backends and their database.
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await backends?.close()
})

describe("notifications from indexed chain events", () => {
  it("notify a fill, a cancellation, a resolution and a redemption exactly once across restarts; a reorg of their block retracts them", async () => {
    const a = devnet.addresses
    const consumer = await startConsumer()
    await caughtUp()
    expect(await inbox(ALICE), "nothing is notified before anything happens").toEqual([])

    // A fill: Alice's BUY YES at 0.50 rests; Bob's BUY NO at 0.52 for half of it crosses (minted together).
    await send(ALICE, "Exchange", a.exchange, "placeOrder", [market, BUY_YES, 500_000n, 20n * USDC, ZERO32])
    await send(BOB, "Exchange", a.exchange, "placeOrder", [market, BUY_NO, 520_000n, 10n * USDC, ZERO32])
    await index()
    await caughtUp()
    const filled = await inbox(ALICE)
    expect(summary(filled), "a fill notifies the maker once, as a partial fill").toEqual(["orderFilled:maker:PARTIAL"])
    expect(filled[0], "the fill's notification names its user and market, unread").toMatchObject({
      address: client.address(ALICE),
      marketId: `0x${market.toString(16).padStart(64, "0")}`,
      read: false
    })
    expect(filled[0].txHash, "the fill's notification names its transaction").toMatch(/^0x[0-9a-f]{64}$/)
    const bobFills = summary(await inbox(BOB))
    expect(bobFills, "a fill notifies the taker once, as a full fill").toEqual(["orderFilled:taker:FULL"])

    // Alice cancels the rest.
    const [order] = await backends.sql(`select id from exchange_order where owner = $1 and status <> 'CANCELLED'`, [client.address(ALICE)])
    await send(ALICE, "Exchange", a.exchange, "cancelOrder", [order!["id"]])
    await index()
    await caughtUp()
    expect(summary(await inbox(ALICE)), "a cancellation notifies its owner once").toEqual(["orderCancelled::", "orderFilled:maker:PARTIAL"])

    // A reorg drops a fill's block: Bob crosses Alice's new order, the block is reorged away, the fill notifications go.
    await send(ALICE, "Exchange", a.exchange, "placeOrder", [market, BUY_YES, 500_000n, 10n * USDC, ZERO32])
    const resting = await backends.sql(`select count(*)::int as n from notification where type = 'orderFilled'`)
    await index()
    await caughtUp()
    await send(BOB, "Exchange", a.exchange, "placeOrder", [market, BUY_NO, 520_000n, 10n * USDC, ZERO32])
    await index()
    await caughtUp()
    expect(summary(await inbox(ALICE)), "the second fill is notified before the reorg").toEqual([
      "orderCancelled::",
      "orderFilled:maker:FULL",
      "orderFilled:maker:PARTIAL"
    ])
    await client.reorg(1)
    await index()
    await caughtUp()
    expect(summary(await inbox(ALICE)), "a reorg of a fill's block retracts its notification").toEqual([
      "orderCancelled::",
      "orderFilled:maker:PARTIAL"
    ])
    expect(
      (await backends.sql(`select count(*)::int as n from notification where type = 'orderFilled'`))[0]!["n"],
      "a reorg of a fill's block deletes its notification rows (the taker's too)"
    ).toBe(resting[0]!["n"])
    // A pause (and unpause) of the protocol notifies the holders of open markets, once.
    await send(ADMIN, "AdminFacet", a.diamond, "pause")
    await send(ADMIN, "AdminFacet", a.diamond, "unpause")
    await index()
    await caughtUp()
    expect(summary(await inbox(ALICE)), "a protocol pause notifies a holder of an open market once").toEqual([
      "marketPaused::",
      "orderCancelled::",
      "orderFilled:maker:PARTIAL"
    ])
    expect(summary(await inbox(BOB)), "a protocol pause notifies every holder of an open market once").toEqual([
      "marketPaused::",
      ...bobFills
    ])
    // The pause is one broadcast row for both holders; Alice reading it leaves it unread for Bob.
    const [paused] = await backends.sql(`select id::text, user_address from notification where type = 'marketPaused'`)
    expect(
      (await backends.sql(`select count(*)::int as n from notification where type = 'marketPaused'`))[0]!["n"],
      "a pause is one broadcast row"
    ).toBe(1)
    expect(paused!["user_address"], "the pause's row names no user (a broadcast)").toBeNull()
    const readAs = (user: number) => ({ headers: { cookie: `predix_session=${cookies[user]}` } })
    expect(
      (await api.call("PATCH", `/api/notifications/${paused!["id"]}/read`, readAs(ALICE))).body.data.read,
      "marking the broadcast read answers it read"
    ).toBe(true)
    expect((await inbox(ALICE)).find((n) => n.type === "marketPaused").read, "the broadcast is read for the user who read it").toBe(true)
    expect((await inbox(BOB)).find((n) => n.type === "marketPaused").read, "the broadcast stays unread for the other holder").toBe(false)

    // The consumer is down while the market resolves YES and is indexed; back up, it catches up once.
    await consumer.stop()
    await client.advanceTime(3_600 + TIMING.emergencyDelay + 60)
    await send(ADMIN, "MarketFacet", a.diamond, "emergencyResolve", [market, true])
    await index()
    const [before] = await backends.sql(`select count(*)::int as n from notification`)
    const [two, other] = await Promise.all([startConsumer(), startConsumer()])
    await caughtUp()
    const resolved = [
      "marketPaused::",
      "marketResolved:YES:",
      "orderCancelled::",
      "orderFilled:maker:PARTIAL",
      "redemptionAvailable:YES:redeem"
    ]
    expect(
      summary(await inbox(ALICE)),
      "a consumer down during the resolution catches up once (two at once): resolution and redemption"
    ).toEqual(resolved)
    expect(
      summary(await inbox(BOB)),
      "a consumer down during the resolution catches up once: the resolution for a holder with nothing to redeem"
    ).toEqual(["marketPaused::", ...bobFills, "marketResolved:YES:"].sort())
    const ids = (await inbox(ALICE)).map((n) => n.id)
    await other.stop()

    // Restarts repeat nothing: the indexer restarted, the consumer restarted, its cursor rewound to replay everything.
    await two.stop()
    await restartIndexer()
    await index()
    await backends.sql(`update notification_cursor set block_number = -1, block_hash = null, block_timestamp = null`)
    const again = await startConsumer()
    await caughtUp()
    expect(
      (await inbox(ALICE)).map((n) => n.id),
      "an indexer restart and a consumer replaying everything repeat nothing"
    ).toEqual(ids)
    const [after] = await backends.sql(
      `select count(*)::int as n, count(distinct (user_address, type, source))::int as distinct from notification`
    )
    expect(after!["n"], "no notification row is duplicated after the restarts").toBe(after!["distinct"])
    expect(after!["n"], "the caught-up consumer added the resolution's rows").toBeGreaterThan(before!["n"])

    // A reorg drops the resolution's block: its notifications go, the fill's and the cancellation's stay.
    await client.reorg(1)
    await index()
    await caughtUp()
    expect(summary(await inbox(ALICE)), "a reorg of the resolution's block retracts its notifications, the others stay").toEqual([
      "marketPaused::",
      "orderCancelled::",
      "orderFilled:maker:PARTIAL"
    ])
    expect(summary(await inbox(BOB)), "a reorg of the resolution's block retracts the other holder's too").toEqual([
      "marketPaused::",
      ...bobFills
    ])
    expect(
      (await inbox(ALICE)).map((n) => n.id),
      "the notifications a reorg leaves are the same rows, not recreated"
    ).toEqual(ids.slice(-3))

    // The faucet's confirmed claim for Alice's smart account: delivered to her (and her smart account's notifications are hers).
    const account = client.address(7)
    await backends.sql(
      `insert into faucet_claim (address, owner, usdc_raw, eth_raw, status, tx_hash, raw_tx, claimed_at, confirmed_at)
      values ($1, $2, 10000000000, 500000000000000, 'confirmed', $3, '0x01', now(), now())`,
      [account, client.address(ALICE), `0x${"ab".repeat(32)}`]
    )
    await send(ADMIN, "TestUsdc", a.testUsdc, "mint", [account, USDC])
    await index()
    await caughtUp()
    const withFaucet = await inbox(ALICE)
    expect(withFaucet[0], "a confirmed faucet claim for a smart account notifies its owner").toMatchObject({
      type: "faucetDelivered",
      address: client.address(ALICE),
      detail: { address: account }
    })
    expect(withFaucet, "the faucet claim is notified once").toHaveLength(4)

    await again.stop()
  }, 240_000)

  it("a user's own router trade notifies them once with its transaction; a cancellation names its transaction", async () => {
    const a = devnet.addresses
    const consumer = await startConsumer()
    await caughtUp()
    const endTime = BigInt(await client.timestamp()) + 3_600n
    await send(ADMIN, "MarketFactory", a.marketFactory, "launch", ["Will my trade notify me?", endTime, a.manualOracle, 50_000n * USDC])
    const traded = await client.read<bigint>("MarketFacet", a.diamond, "marketCount")
    const before = (await inbox(BOB)).length
    const receipt = await send(BOB, "Router", a.router, "trade", [
      BUY_YES,
      traded,
      25n * USDC,
      0n,
      client.address(BOB),
      0n,
      maxUint256,
      ZERO20
    ])
    await index()
    await caughtUp()
    const mine = (await inbox(BOB)).filter((n) => n.type === "tradeExecuted")
    expect(mine, "a router trade notifies its trader once").toHaveLength(1)
    expect(mine[0], "the trade's notification names the market, the transaction, the trader and the recipient").toMatchObject({
      address: client.address(BOB),
      marketId: `0x${traded.toString(16).padStart(64, "0")}`,
      txHash: receipt.transactionHash.toLowerCase(),
      detail: { role: "trader", trader: client.address(BOB), recipient: client.address(BOB) }
    })
    expect((await inbox(BOB)).length, "the trade adds one notification, nothing else").toBe(before + 1)

    await send(BOB, "Exchange", a.exchange, "placeOrder", [traded, BUY_NO, 100_000n, 5n * USDC, ZERO32])
    await index()
    const [order] = await backends.sql(`select id from exchange_order where owner = $1 and status = 'OPEN' and market_id = $2`, [
      client.address(BOB),
      traded.toString()
    ])
    const cancel = await send(BOB, "Exchange", a.exchange, "cancelOrder", [order!["id"]])
    await index()
    await caughtUp()
    const cancelled = (await inbox(BOB)).filter((n) => n.type === "orderCancelled" && n.detail.orderId === order!["id"])
    expect(cancelled, "a cancellation notifies its owner once").toHaveLength(1)
    expect(cancelled[0].txHash, "the cancellation's notification names its transaction").toBe(cancel.transactionHash.toLowerCase())
    // The consumer replaying everything adds nothing.
    await backends.sql(`update notification_cursor set block_number = -1, block_hash = null, block_timestamp = null`)
    await consumer.stop()
    const again = await startConsumer()
    await caughtUp()
    expect(
      (await inbox(BOB)).filter((n) => n.type === "tradeExecuted"),
      "a consumer replaying everything does not notify the trade again"
    ).toHaveLength(1)
    await again.stop()
  }, 240_000)
})
