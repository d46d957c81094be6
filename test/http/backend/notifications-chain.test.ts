/**
 * Notifications from the chain on a live devnet: anvil, the protocol deployed, the indexer
 * stepped by the test into the backend's database, the notification consumer as the server runs
 * it (LISTEN predix_indexed; its poll set long, so the NOTIFY drives it) and the API read by
 * signed-in users. A fill, a cancellation, a pause, a resolution and the redemption it opens each
 * notify their users exactly once: across a consumer that was down while blocks were indexed (it
 * catches up from its cursor), two consumers at once, and an indexer restart. A reorg of their
 * block retracts them. A faucet claim confirmed for a user's smart account notifies the user.
 */
import { Effect, Exit, Layer, Logger, LogLevel, ManagedRuntime, Redacted, Scope } from "effect"
import { maxUint256 } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { NotificationConsumerLive } from "../../../http/backend/notification-consumer.js"
import { makeIndexer } from "../../../pipeline/run.js"
import { makeRpc } from "../../../pipeline/source/rpc.js"
import { pgClientLayer } from "../../../src/db/database.js"
import { startAnvil, type Anvil } from "../../../tools/devnet/anvil.js"
import { DevnetClient, type Address } from "../../../tools/devnet/client.js"
import { compileContracts } from "../../../tools/devnet/compile.js"
import { ADMIN, deployDevnet, TIMING, type Devnet } from "../../../tools/devnet/deploy.js"
import { signIn, startBackends, type Backends, type Instance } from "./support/auth-harness.js"

const USDC = 1_000_000n
const ALICE = 2
const BOB = 3
const BUY_YES = 0
const BUY_NO = 2
const ZERO32 = `0x${"0".repeat(64)}`
const ZERO20 = `0x${"0".repeat(40)}`
const quiet = Logger.withMinimumLogLevel(LogLevel.Error)

let anvil: Anvil
let client: DevnetClient
let devnet: Devnet
let backends: Backends
let api: Instance
let runtime: ManagedRuntime.ManagedRuntime<any, any>
let index: () => Promise<void>
let restartIndexer: () => Promise<void>
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
  expect(answer.status).toBe(200)
  return answer.body.data as Array<any>
}
const summary = (notes: Array<any>) =>
  notes
    .map((n) => `${n.type}:${n.detail.role ?? n.detail.resolution ?? n.detail.kind ?? ""}:${n.detail.fill ?? n.detail.kind ?? ""}`)
    .sort()

beforeAll(async () => {
  anvil = await startAnvil()
  client = new DevnetClient(anvil.url, compileContracts())
  devnet = await deployDevnet(client, { deployedVariants: false })
  backends = await startBackends()
  runtime = ManagedRuntime.make(pgClientLayer(Redacted.make(backends.databaseUrl)))
  const makeOne = async () => {
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
  }
  await makeOne()
  restartIndexer = makeOne
  api = await backends.start()
  for (const user of [ALICE, BOB]) cookies[user] = (await signIn(api, client.account(user))).cookie!

  const a = devnet.addresses
  for (const user of [ADMIN, ALICE, BOB]) {
    await send(ADMIN, "TestUsdc", a.testUsdc, "mint", [client.address(user), 1_000_000n * USDC])
    for (const spender of [a.router, a.exchange, a.diamond, a.poolManager, a.marketFactory])
      await send(user, "TestUsdc", a.testUsdc, "approve", [spender, maxUint256])
  }
  const endTime = BigInt(await client.timestamp()) + 3_600n
  await send(ADMIN, "MarketFactory", a.marketFactory, "launch", ["Will notifications arrive once?", endTime, a.manualOracle, 0n])
  market = await client.read<bigint>("MarketFacet", a.diamond, "marketCount")
  await index()
}, 240_000)

afterAll(async () => {
  await backends?.close()
  await runtime?.dispose()
  await anvil?.stop()
})

describe("notifications from indexed chain events", () => {
  it("notify a fill, a cancellation, a resolution and a redemption exactly once across restarts; a reorg of their block retracts them", async () => {
    const a = devnet.addresses
    const consumer = await startConsumer()
    await caughtUp()
    expect(await inbox(ALICE)).toEqual([])

    // A fill: Alice's BUY YES at 0.50 rests; Bob's BUY NO at 0.52 for half of it crosses (minted together).
    await send(ALICE, "Exchange", a.exchange, "placeOrder", [market, BUY_YES, 500_000n, 20n * USDC, ZERO32])
    await send(BOB, "Exchange", a.exchange, "placeOrder", [market, BUY_NO, 520_000n, 10n * USDC, ZERO32])
    await index()
    await caughtUp()
    const filled = await inbox(ALICE)
    expect(summary(filled)).toEqual(["orderFilled:maker:PARTIAL"])
    expect(filled[0]).toMatchObject({ address: client.address(ALICE), marketId: `0x${market.toString(16).padStart(64, "0")}`, read: false })
    expect(filled[0].txHash).toMatch(/^0x[0-9a-f]{64}$/)
    const bobFills = summary(await inbox(BOB))
    expect(bobFills).toEqual(["orderFilled:taker:FULL"])

    // Alice cancels the rest.
    const [order] = await backends.sql(`select id from exchange_order where owner = $1 and status <> 'CANCELLED'`, [client.address(ALICE)])
    await send(ALICE, "Exchange", a.exchange, "cancelOrder", [order!["id"]])
    await index()
    await caughtUp()
    expect(summary(await inbox(ALICE))).toEqual(["orderCancelled::", "orderFilled:maker:PARTIAL"])

    // A reorg drops a fill's block: Bob crosses Alice's new order, the block is reorged away, the fill notifications go.
    await send(ALICE, "Exchange", a.exchange, "placeOrder", [market, BUY_YES, 500_000n, 10n * USDC, ZERO32])
    const resting = await backends.sql(`select count(*)::int as n from notification where type = 'orderFilled'`)
    await index()
    await caughtUp()
    await send(BOB, "Exchange", a.exchange, "placeOrder", [market, BUY_NO, 520_000n, 10n * USDC, ZERO32])
    await index()
    await caughtUp()
    expect(summary(await inbox(ALICE))).toEqual(["orderCancelled::", "orderFilled:maker:FULL", "orderFilled:maker:PARTIAL"])
    await client.reorg(1)
    await index()
    await caughtUp()
    expect(summary(await inbox(ALICE))).toEqual(["orderCancelled::", "orderFilled:maker:PARTIAL"])
    expect((await backends.sql(`select count(*)::int as n from notification where type = 'orderFilled'`))[0]!["n"]).toBe(resting[0]!["n"])
    // A pause (and unpause) of the protocol notifies the holders of open markets, once.
    await send(ADMIN, "AdminFacet", a.diamond, "pause")
    await send(ADMIN, "AdminFacet", a.diamond, "unpause")
    await index()
    await caughtUp()
    expect(summary(await inbox(ALICE))).toEqual(["marketPaused::", "orderCancelled::", "orderFilled:maker:PARTIAL"])
    expect(summary(await inbox(BOB))).toEqual(["marketPaused::", ...bobFills])
    // The pause is one broadcast row for both holders; Alice reading it leaves it unread for Bob.
    const [paused] = await backends.sql(`select id::text, user_address from notification where type = 'marketPaused'`)
    expect((await backends.sql(`select count(*)::int as n from notification where type = 'marketPaused'`))[0]!["n"]).toBe(1)
    expect(paused!["user_address"]).toBeNull()
    const readAs = (user: number) => ({ headers: { cookie: `predix_session=${cookies[user]}` } })
    expect((await api.call("PATCH", `/api/notifications/${paused!["id"]}/read`, readAs(ALICE))).body.data.read).toBe(true)
    expect((await inbox(ALICE)).find((n) => n.type === "marketPaused").read).toBe(true)
    expect((await inbox(BOB)).find((n) => n.type === "marketPaused").read).toBe(false)

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
    expect(summary(await inbox(ALICE))).toEqual(resolved)
    expect(summary(await inbox(BOB))).toEqual(["marketPaused::", ...bobFills, "marketResolved:YES:"].sort())
    const ids = (await inbox(ALICE)).map((n) => n.id)
    await other.stop()

    // Restarts repeat nothing: the indexer restarted, the consumer restarted, its cursor rewound to replay everything.
    await two.stop()
    await restartIndexer()
    await index()
    await backends.sql(`update notification_cursor set block_number = -1, block_hash = null, block_timestamp = null`)
    const again = await startConsumer()
    await caughtUp()
    expect((await inbox(ALICE)).map((n) => n.id)).toEqual(ids)
    const [after] = await backends.sql(
      `select count(*)::int as n, count(distinct (user_address, type, source))::int as distinct from notification`
    )
    expect(after!["n"]).toBe(after!["distinct"])
    expect(after!["n"]).toBeGreaterThan(before!["n"])

    // A reorg drops the resolution's block: its notifications go, the fill's and the cancellation's stay.
    await client.reorg(1)
    await index()
    await caughtUp()
    expect(summary(await inbox(ALICE))).toEqual(["marketPaused::", "orderCancelled::", "orderFilled:maker:PARTIAL"])
    expect(summary(await inbox(BOB))).toEqual(["marketPaused::", ...bobFills])
    expect((await inbox(ALICE)).map((n) => n.id)).toEqual(ids.slice(-3)) // the same rows, not recreated

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
    expect(withFaucet[0]).toMatchObject({ type: "faucetDelivered", address: client.address(ALICE), detail: { address: account } })
    expect(withFaucet).toHaveLength(4)

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
    expect(mine).toHaveLength(1)
    expect(mine[0]).toMatchObject({
      address: client.address(BOB),
      marketId: `0x${traded.toString(16).padStart(64, "0")}`,
      txHash: receipt.transactionHash.toLowerCase(),
      detail: { role: "trader", trader: client.address(BOB), recipient: client.address(BOB) }
    })
    expect((await inbox(BOB)).length).toBe(before + 1)

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
    expect(cancelled).toHaveLength(1)
    expect(cancelled[0].txHash).toBe(cancel.transactionHash.toLowerCase())
    // The consumer replaying everything adds nothing.
    await backends.sql(`update notification_cursor set block_number = -1, block_hash = null, block_timestamp = null`)
    await consumer.stop()
    const again = await startConsumer()
    await caughtUp()
    expect((await inbox(BOB)).filter((n) => n.type === "tradeExecuted")).toHaveLength(1)
    await again.stop()
  }, 240_000)
})
