/**
 * The backend's quote against the real router: on a fresh devnet, index the chain to its head,
 * quote a trade through the backend, execute the same trade through the router in the next block
 * and compare amountOut, clobFilled and ammFilled to the raw unit. Over 200 generated trades of
 * all four types on a deep pool, a thin pool and an empty pool (books only), with books that
 * are thin or deep; a trade the router refuses must be refused by the quote too (a typed error,
 * never a zero quote), and paused or ended markets are MARKET_PAUSED.
 */
import { HttpServer } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Exit, Layer, Logger, LogLevel, ManagedRuntime, Redacted, Scope } from "effect"
import { createServer } from "node:http"
import { decodeEventLog, maxUint256, type TransactionReceipt } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backendHttpLayer } from "../../http/backend/api.js"
import { indexerServerLayer } from "../../http/indexer/api.js"
import { makeIndexer } from "../../pipeline/run.js"
import { makeRpc } from "../../pipeline/source/rpc.js"
import { specEvents } from "../../schema/abi.js"
import { BuildInfoLive } from "../../src/build-info.js"
import { pgClientLayer } from "../../src/db/database.js"
import { runMigrations } from "../../src/db/migrations.js"
import { startAnvil, type Anvil } from "../../src/devnet/anvil.js"
import { DevnetClient, type Address } from "../../src/devnet/client.js"
import { compileContracts } from "../../src/devnet/compile.js"
import { ADMIN, deployDevnet, MODULE_MARKET, type Devnet } from "../../src/devnet/deploy.js"
import { prng } from "../../src/prng.js"
import { scratchDatabaseUrl } from "../support/postgres.js"

const USDC = 1_000_000n
const USERS = [2, 3, 4, 5, 6, 7]
const SIDES = ["BUY_YES", "SELL_YES", "BUY_NO", "SELL_NO"] as const
const ZERO = "0x0000000000000000000000000000000000000000" as Address
const ZERO32 = `0x${"0".repeat(64)}`
const TRADES = 260

let anvil: Anvil
let client: DevnetClient
let devnet: Devnet
const scope = Effect.runSync(Scope.make())
let runtime: ManagedRuntime.ManagedRuntime<any, any>
let index: () => Promise<void>
let backendUrl: string
const quiet = Logger.withMinimumLogLevel(LogLevel.Warning)

const send = (from: number, contract: string, address: Address, fn: string, args: ReadonlyArray<unknown> = []) => client.send(from, contract, address, fn, args)

beforeAll(async () => {
  const artifacts = compileContracts()
  anvil = await startAnvil()
  client = new DevnetClient(anvil.url, artifacts)
  devnet = await deployDevnet(client, { deployedVariants: false })
  const url = await Effect.runPromise(Scope.extend(scratchDatabaseUrl, scope))
  const database = pgClientLayer(Redacted.make(url))
  runtime = ManagedRuntime.make(database)
  await runtime.runPromise(runMigrations().pipe(quiet))
  const indexer = await runtime.runPromise(
    makeIndexer({ rpc: makeRpc({ url: anvil.url }), deployment: devnet.deployment, chainId: 130, backfillThread: false, confirmations: 1_000 }).pipe(quiet)
  )
  let window = await runtime.runPromise(indexer.loadWindow)
  index = async () => {
    window = await runtime.runPromise(indexer.step(window).pipe(quiet) as Effect.Effect<any, any, any>)
  }
  const tcpUrl = (context: Context.Context<HttpServer.HttpServer>) => {
    const address = Context.get(context, HttpServer.HttpServer).address
    if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
    return `http://127.0.0.1:${address.port}`
  }
  const indexerUrl = tcpUrl(await Effect.runPromise(Layer.buildWithScope(indexerServerLayer(130, { port: 0, host: "127.0.0.1", cacheBytes: 0 }).pipe(Layer.provide(database)), scope).pipe(quiet)))
  const backend = backendHttpLayer({ chainId: 130, indexerUrl, chainRpcUrl: anvil.url, cacheEntries: 0, rateLimits: { publicPerMinute: 0, userPerMinute: 0, perDay: 0, authPerMinute: 0 } }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
    Layer.provide([database, BuildInfoLive])
  )
  backendUrl = tcpUrl(await Effect.runPromise(Layer.buildWithScope(backend, scope).pipe(quiet)))
}, 240_000)

afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await runtime?.dispose()
  await anvil?.stop()
})

const quote = async (marketId: bigint, body: Record<string, unknown>) => {
  const response = await fetch(`${backendUrl}/api/markets/${marketId}/pricing/quote`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  return { status: response.status, body: (await response.json()) as any }
}

/** Input-token dust the router handed back in `receipt` (DustRefunded of `token`). */
const dustOf = (receipt: TransactionReceipt, router: Address, token: Address) => {
  let dust = 0n
  for (const log of receipt.logs) {
    if (log.address.toLowerCase() !== router) continue
    try {
      const decoded = decodeEventLog({ abi: [specEvents.router.DustRefunded], data: log.data, topics: log.topics as never })
      const args = decoded.args as unknown as { token: string; amount: bigint }
      if (args.token.toLowerCase() === token) dust += args.amount
    } catch {
      // another router event
    }
  }
  return dust
}

const tradeOf = (receipt: TransactionReceipt, router: Address) => {
  for (const log of receipt.logs) {
    if (log.address.toLowerCase() !== router) continue
    try {
      const decoded = decodeEventLog({ abi: [specEvents.router.Trade], data: log.data, topics: log.topics as never })
      const args = decoded.args as unknown as { amountOut: bigint; clobFilled: bigint; ammFilled: bigint }
      return { amountOut: args.amountOut, clobFilled: args.clobFilled, ammFilled: args.ammFilled }
    } catch {
      // another router event
    }
  }
  throw new Error("no Trade event in the receipt")
}

describe("quote vs router", () => {
  it(`matches ${TRADES} router trades to the raw unit, and refuses what the router refuses`, async () => {
    const a = devnet.addresses
    const random = prng(7)
    const between = (low: number, high: number) => low + Math.floor(random() * (high - low + 1))
    const pick = <T>(items: ReadonlyArray<T>): T => items[Math.floor(random() * items.length)]!
    const chance = (p: number) => random() < p
    const approveAll = async (user: number, token: Address) => {
      for (const spender of [a.router, a.exchange, a.diamond, a.poolManager, a.marketFactory]) await send(user, "TestUsdc", token, "approve", [spender, maxUint256])
    }
    for (const user of [ADMIN, ...USERS]) {
      await send(ADMIN, "TestUsdc", a.testUsdc, "mint", [client.address(user), 1_000_000n * USDC])
      await approveAll(user, a.testUsdc)
    }
    const start = BigInt(await client.timestamp())
    const endTime = start + 30n * 86_400n
    const launch = async (question: string, seed: bigint) => {
      await send(ADMIN, "MarketFactory", a.marketFactory, "launch", [question, endTime, a.manualOracle, seed])
      const id = await client.read<bigint>("MarketFacet", a.diamond, "marketCount")
      const [yes, no] = await client.read<readonly [Address, Address]>("MarketFacet", a.diamond, "marketTokens", [id])
      return { id, yes: yes.toLowerCase() as Address, no: no.toLowerCase() as Address }
    }
    const deep = await launch("Deep pool?", 100_000n * USDC)
    const thin = await launch("Thin pool?", 300n * USDC)
    const empty = await launch("Empty pool, books only?", 0n)
    const markets = [deep, thin, empty]
    for (const user of USERS) {
      for (const m of markets) {
        await send(user, "MarketFacet", a.diamond, "splitPosition", [m.id, 20_000n * USDC])
        await approveAll(user, m.yes)
        await approveAll(user, m.no)
      }
    }
    const yesPriceOf = async (id: bigint, yesToken: Address) => {
      const key = await client.read<{ currency0: Address }>("MarketHook", a.hookProxy, "poolKeyOf", [id])
      const poolId = await client.read<`0x${string}`>("PoolManager", a.poolManager, "poolId", [key])
      const [sqrtP] = await client.read<readonly [bigint]>("PoolManager", a.poolManager, "pools", [poolId])
      return client.read<bigint>("MarketHook", a.hookProxy, "yesPrice", [sqrtP, key.currency0.toLowerCase() === yesToken])
    }
    const placeOrders = async (m: (typeof markets)[number], count: number) => {
      for (let i = 0; i < count; i++) {
        const side = between(0, 3)
        // A few ticks either side of the pool's price (0.5 for the empty pool): many within
        // what the router lets the book fill at, some not.
        const yes = m === empty ? 500_000n : await yesPriceOf(m.id, m.yes)
        const reference = side < 2 ? yes : 1_000_000n - yes
        const tick = (reference / 10_000n + BigInt(between(-4, 4))) * 10_000n
        const price = tick < 10_000n ? 10_000n : tick > 990_000n ? 990_000n : tick
        const amount = BigInt(between(1, m === deep ? 400 : 40)) * USDC
        await send(pick(USERS), "Exchange", a.exchange, "placeOrder", [m.id, side, price, amount, ZERO32]).catch(() => undefined)
      }
    }
    for (const m of markets) await placeOrders(m, m === thin ? 4 : 25)

    let matched = 0
    let refused = 0
    const types = new Set<string>()
    const venues = { clob: 0, amm: 0, both: 0 }
    for (let i = 0; i < TRADES; i++) {
      if (i % 4 === 3) await placeOrders(pick(markets), between(2, 8))
      const m = pick([deep, deep, deep, thin, empty])
      const tradeType = pick(SIDES)
      const user = pick(USERS)
      const amountIn = tradeType.startsWith("BUY")
        ? BigInt(between(1, m === thin ? 60 : 2_000)) * USDC + BigInt(between(0, 999_999))
        : BigInt(between(1, m === thin ? 80 : 1_500)) * USDC + BigInt(between(0, 999_999))
      const maxFills = chance(0.3) ? undefined : between(1, 20)
      await index()
      const q = await quote(m.id, { tradeType, amountIn: (Number(amountIn) / 1e6).toFixed(6), ...(maxFills === undefined ? {} : { maxFills }) })
      let receipt: TransactionReceipt | undefined
      let revert: string | undefined
      try {
        receipt = await send(user, "Router", a.router, "trade", [SIDES.indexOf(tradeType), m.id, amountIn, 0n, client.address(user), BigInt(maxFills ?? 0), maxUint256, ZERO])
      } catch (error) {
        revert = String(error).slice(0, 300)
      }
      const context = `trade ${i}: ${tradeType} ${amountIn} on market ${m.id} maxFills ${maxFills}`
      if (receipt === undefined) {
        expect(q.status, `${context}: the router reverted (${revert}) but the quote said ${JSON.stringify(q.body)}`).toBe(400)
        refused++
        continue
      }
      expect(q.status, `${context}: ${JSON.stringify(q.body)}`).toBe(200)
      const actual = tradeOf(receipt, a.router)
      const quoted = q.body.data
      expect(
        { amountOut: quoted.amountOut.raw, clobFilled: quoted.clobFilled.raw, ammFilled: quoted.ammFilled.raw },
        `${context}\n${JSON.stringify(quoted.route)}`
      ).toEqual({ amountOut: actual.amountOut.toString(), clobFilled: actual.clobFilled.toString(), ammFilled: actual.ammFilled.toString() })
      const inputToken = tradeType.startsWith("BUY") ? a.testUsdc : tradeType === "SELL_YES" ? m.yes : m.no
      expect(quoted.refund.raw, `${context}: dust handed back`).toBe(dustOf(receipt, a.router, inputToken).toString())
      matched++
      types.add(tradeType)
      if (actual.clobFilled > 0n && actual.ammFilled > 0n) venues.both++
      else if (actual.clobFilled > 0n) venues.clob++
      else venues.amm++
    }
    expect(matched).toBeGreaterThanOrEqual(200)
    expect([...types].sort()).toEqual([...SIDES].sort())
    expect(venues.clob + venues.both).toBeGreaterThan(10)
    expect(venues.amm + venues.both).toBeGreaterThan(10)
    console.log(`quote vs router: ${matched} trades matched to the raw unit (${venues.clob} CLOB only, ${venues.amm} AMM only, ${venues.both} both); ${refused} refused by both`)
  }, 600_000)

  it("a buy quote with address reads the wallet's USDC on chain at the quoted block: INSUFFICIENT_BALANCE when it cannot pay", async () => {
    const a = devnet.addresses
    const id = 1n
    const rich = client.address(USERS[0]!).toLowerCase()
    const poor = client.address(9).toLowerCase() as Address
    // What `start` records of the deployment: the backend asks its diamond for the collateral token.
    await runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`insert into indexed_deployment (chain_id, diamond, deploy_block, source) values (130, ${a.diamond.toLowerCase()}, 0, 'test') on conflict do nothing`))
    expect((await quote(id, { tradeType: "BUY_YES", amountIn: "10", address: rich })).status).toBe(200)
    const refused = await quote(id, { tradeType: "BUY_YES", amountIn: "10", address: poor })
    expect(refused.status).toBe(400)
    expect(refused.body.code).toBe("INSUFFICIENT_BALANCE")
    expect(refused.body.message).toMatch(/holds 0\.000000 USDC, less than 10/)
    // Minted after the indexed head: the quote is at the indexed block, where the wallet still holds nothing.
    await send(ADMIN, "TestUsdc", a.testUsdc, "mint", [poor, 10n * USDC])
    expect((await quote(id, { tradeType: "BUY_NO", amountIn: "10", address: poor })).body.code).toBe("INSUFFICIENT_BALANCE")
    await index()
    expect((await quote(id, { tradeType: "BUY_NO", amountIn: "10", address: poor })).status).toBe(200)
    expect((await quote(id, { tradeType: "BUY_NO", amountIn: "10.000001", address: poor })).body.code).toBe("INSUFFICIENT_BALANCE")
  }, 60_000)

  it("a paused market module and an ended market are MARKET_PAUSED, as the router refuses them", async () => {
    const a = devnet.addresses
    const id = 1n
    await send(ADMIN, "AdminFacet", a.diamond, "pauseModule", [MODULE_MARKET])
    await index()
    const paused = await quote(id, { tradeType: "BUY_YES", amountIn: "10" })
    expect(paused.body.code).toBe("MARKET_PAUSED")
    await expect(send(USERS[0]!, "Router", a.router, "trade", [0, id, 10n * USDC, 0n, client.address(USERS[0]!), 0n, maxUint256, ZERO])).rejects.toThrow()
    await send(ADMIN, "AdminFacet", a.diamond, "unpauseModule", [MODULE_MARKET])
    await index()
    expect((await quote(id, { tradeType: "BUY_YES", amountIn: "10" })).status).toBe(200)
    await client.advanceTime(31 * 86_400)
    await index()
    const ended = await quote(id, { tradeType: "SELL_NO", amountIn: "10" })
    expect(ended.body.code).toBe("MARKET_PAUSED")
    await expect(send(USERS[0]!, "Router", a.router, "trade", [3, id, 10n * USDC, 0n, client.address(USERS[0]!), 0n, maxUint256, ZERO])).rejects.toThrow()
  }, 120_000)
})
