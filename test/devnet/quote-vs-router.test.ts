/**
 * The backend's quote against the real router: on a fresh devnet, index the chain to its head,
 * quote a trade through the backend, execute the same trade through the router right after the
 * quoted head (before anything else touches its market) and compare amountOut, clobFilled and
 * ammFilled to the raw unit. Over 100 generated trades of
 * all four types on a deep pool, a thin pool and an empty pool (books only), with books that
 * are thin or deep; a trade the router refuses must be refused by the quote too (a typed error,
 * never a zero quote), and paused or ended markets are MARKET_PAUSED. While the exchange is
 * paused the router skips the book (ClobSkipped) and trades on the AMM alone: so must the quote,
 * for all four trade types, though the book holds orders the router would otherwise fill.
 */
import { HttpServer } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Exit, Layer, Logger, LogLevel, Scope } from "effect"
import { createServer } from "node:http"
import { decodeEventLog, keccak256, maxUint256, toHex, type TransactionReceipt } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backendHttpLayer } from "../../http/backend/api.js"
import { indexerServerLayer } from "../../http/indexer/api.js"
import { specEvents } from "../../schema/abi.js"
import { BuildInfoLive } from "../../src/build-info.js"
import type { Address } from "../../tools/devnet/client.js"
import { ADMIN, MODULE_MARKET } from "../../tools/devnet/deploy.js"
import { prng } from "../../tools/prng.js"
import { USDC, withIndexedDevnet, type IndexedDevnet } from "../support/indexed-devnet.js"

const USERS = [2, 3, 4, 5, 6, 7]
const SIDES = ["BUY_YES", "SELL_YES", "BUY_NO", "SELL_NO"] as const
const ZERO = "0x0000000000000000000000000000000000000000" as Address
const ZERO32 = `0x${"0".repeat(64)}`
/**
 * Generated trades in the first case. 140 (there were 260) still give each of the four types on
 * each of the three pools about a dozen trades (60% deep, 20% thin, 20% empty), with and without
 * maxFills, on a book refilled every 4 trades; the checks below require every type, every pool,
 * each venue mix (book only, AMM only, both) and router refusals among them, so a smaller draw
 * that missed a kind of case would fail rather than pass. The second half repeated the same kinds
 * at a minute of CI time.
 */
const TRADES = 140
/** What the router's ClobSkipped carries when the exchange is paused: the selector of `ExchangePaused()`. */
const EXCHANGE_PAUSED = keccak256(toHex("ExchangePaused()")).slice(0, 10)

const scope = Effect.runSync(Scope.make())
let chain: IndexedDevnet
let client: IndexedDevnet["client"]
let devnet: IndexedDevnet["devnet"]
let runtime: IndexedDevnet["runtime"]
let index: IndexedDevnet["index"]
let backendUrl: string
let indexerUrl: string
const quiet = Logger.withMinimumLogLevel(LogLevel.Warning)

const send = (from: number, contract: string, address: Address, fn: string, args: ReadonlyArray<unknown> = []) =>
  client.send(from, contract, address, fn, args)

beforeAll(async () => {
  chain = await withIndexedDevnet(scope)
  ;({ client, devnet, runtime, index } = chain)
  const database = chain.database
  const tcpUrl = (context: Context.Context<HttpServer.HttpServer>) => {
    const address = Context.get(context, HttpServer.HttpServer).address
    if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
    return `http://127.0.0.1:${address.port}`
  }
  indexerUrl = tcpUrl(
    await Effect.runPromise(
      Layer.buildWithScope(
        indexerServerLayer(130, { port: 0, host: "127.0.0.1", cacheBytes: 0 }).pipe(Layer.provide(database)),
        scope
      ).pipe(quiet)
    )
  )
  const backend = backendHttpLayer({
    chainId: 130,
    indexerUrl,
    chainRpcUrl: chain.anvil.url,
    cacheBytes: 0,
    rateLimits: { publicPerMinute: 0, userPerMinute: 0, perDay: 0, authPerMinute: 0 }
  }).pipe(Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })), Layer.provide([database, BuildInfoLive]))
  backendUrl = tcpUrl(await Effect.runPromise(Layer.buildWithScope(backend, scope).pipe(quiet)))
}, 240_000)

// The servers, the database and anvil, in the reverse order of their start.
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

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

/** Reasons of the router's ClobSkipped events in `receipt` (the CLOB leg's revert selectors). */
const clobSkipsOf = (receipt: TransactionReceipt, router: Address) => {
  const reasons: Array<string> = []
  for (const log of receipt.logs) {
    if (log.address.toLowerCase() !== router) continue
    try {
      const decoded = decodeEventLog({ abi: [specEvents.router.ClobSkipped], data: log.data, topics: log.topics as never })
      reasons.push((decoded.args as unknown as { reason: string }).reason.toLowerCase())
    } catch {
      // another router event
    }
  }
  return reasons
}

interface TestMarket {
  readonly id: bigint
  readonly yes: Address
  readonly no: Address
}

let deep: TestMarket
let thin: TestMarket
let empty: TestMarket
const random = prng(7)
const between = (low: number, high: number) => low + Math.floor(random() * (high - low + 1))
const pick = <T>(items: ReadonlyArray<T>): T => items[Math.floor(random() * items.length)]!
const chance = (p: number) => random() < p

const yesPriceOf = async (id: bigint, yesToken: Address) => {
  const a = devnet.addresses
  const key = await client.read<{ currency0: Address }>("MarketHook", a.hookProxy, "poolKeyOf", [id])
  const poolId = await client.read<`0x${string}`>("PoolManager", a.poolManager, "poolId", [key])
  const [sqrtP] = await client.read<readonly [bigint]>("PoolManager", a.poolManager, "pools", [poolId])
  return client.read<bigint>("MarketHook", a.hookProxy, "yesPrice", [sqrtP, key.currency0.toLowerCase() === yesToken])
}

const placeOrders = async (m: TestMarket, count: number) => {
  // Orders rest on (or fill against) the book; none moves the pool, so its price is read once.
  const yes = m === empty ? 500_000n : await yesPriceOf(m.id, m.yes)
  for (let i = 0; i < count; i++) {
    const side = between(0, 3)
    // A few ticks either side of the pool's price (0.5 for the empty pool): many within
    // what the router lets the book fill at, some not.
    const reference = side < 2 ? yes : 1_000_000n - yes
    const tick = (reference / 10_000n + BigInt(between(-4, 4))) * 10_000n
    const price = tick < 10_000n ? 10_000n : tick > 990_000n ? 990_000n : tick
    const amount = BigInt(between(1, m === deep ? 400 : 40)) * USDC
    await send(pick(USERS), "Exchange", devnet.addresses.exchange, "placeOrder", [m.id, side, price, amount, ZERO32]).catch(() => undefined)
  }
}

const randomTrade = (m: TestMarket, tradeType: (typeof SIDES)[number]) => {
  const amountIn = tradeType.startsWith("BUY")
    ? BigInt(between(1, m === thin ? 60 : 2_000)) * USDC + BigInt(between(0, 999_999))
    : BigInt(between(1, m === thin ? 80 : 1_500)) * USDC + BigInt(between(0, 999_999))
  const maxFills = chance(0.3) ? undefined : between(1, 20)
  return { amountIn, maxFills }
}

type Compared =
  | { readonly kind: "matched"; readonly quoted: any; readonly actual: ReturnType<typeof tradeOf>; readonly receipt: TransactionReceipt }
  | { readonly kind: "refused"; readonly code: string }

interface Planned {
  readonly m: TestMarket
  readonly tradeType: (typeof SIDES)[number]
  readonly user: number
  readonly amountIn: bigint
  readonly maxFills: number | undefined
}

/** The backend's quote of `t` at the indexed head. */
const quoteOf = (t: Planned) =>
  quote(t.m.id, {
    tradeType: t.tradeType,
    amountIn: (Number(t.amountIn) / 1e6).toFixed(6),
    ...(t.maxFills === undefined ? {} : { maxFills: t.maxFills })
  })

/**
 * Executes `t` through the router and checks the quote `q` (taken at the indexed head, nothing
 * since touching the market) against it: the same amounts and dust to the raw unit, or a 400
 * when the router reverts.
 */
const tradeAgainst = async (t: Planned, q: Awaited<ReturnType<typeof quoteOf>>): Promise<Compared> => {
  const { m, tradeType, user, amountIn, maxFills } = t
  const a = devnet.addresses
  let receipt: TransactionReceipt | undefined
  let revert: string | undefined
  try {
    receipt = await send(user, "Router", a.router, "trade", [
      SIDES.indexOf(tradeType),
      m.id,
      amountIn,
      0n,
      client.address(user),
      BigInt(maxFills ?? 0),
      maxUint256,
      ZERO
    ])
  } catch (error) {
    revert = String(error).slice(0, 300)
  }
  const context = `${tradeType} ${amountIn} on market ${m.id} maxFills ${maxFills}`
  if (receipt === undefined) {
    expect(q.status, `${context}: the router reverted (${revert}) but the quote said ${JSON.stringify(q.body)}`).toBe(400)
    return { kind: "refused", code: q.body.code }
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
  return { kind: "matched", quoted, actual, receipt }
}

/** Indexes to the head, quotes the trade, executes it through the router in the next block and checks the quote against it. */
const quoteThenTrade = async (
  m: TestMarket,
  tradeType: (typeof SIDES)[number],
  user: number,
  amountIn: bigint,
  maxFills: number | undefined
): Promise<Compared> => {
  const t = { m, tradeType, user, amountIn, maxFills }
  await index()
  return tradeAgainst(t, await quoteOf(t))
}

/**
 * `quoteThenTrade` for trades on distinct markets by distinct users, quoted at one indexed head
 * and executed together: a trade moves only its own market's pool and book (orders escrow their
 * funds when placed, so a fill draws on no maker's balance) and its own trader's balances, so
 * none of them changes what another one gets, and one index step serves them all. (The pool's
 * fee depends on the time to the market's end in steps of days; these blocks are seconds apart.)
 */
const quoteThenTradeAll = async (trades: ReadonlyArray<Planned>): Promise<Array<Compared>> => {
  expect(new Set(trades.map((t) => t.m)).size, "one trade per market").toBe(trades.length)
  expect(new Set(trades.map((t) => t.user)).size, "one trade per user").toBe(trades.length)
  await index()
  const quotes = await Promise.all(trades.map(quoteOf))
  return Promise.all(trades.map((t, i) => tradeAgainst(t, quotes[i]!)))
}

describe("quote vs router", () => {
  it(`matches ${TRADES} router trades to the raw unit, and refuses what the router refuses`, async () => {
    const a = devnet.addresses
    const { approveAll } = chain
    await chain.fund([ADMIN, ...USERS], 1_000_000n * USDC)
    const start = BigInt(await client.timestamp())
    const endTime = start + 30n * 86_400n
    const launch = async (question: string, seed: bigint): Promise<TestMarket> => {
      const id = await chain.launch(question, endTime, seed)
      const [yes, no] = await client.read<readonly [Address, Address]>("MarketFacet", a.diamond, "marketTokens", [id])
      return { id, yes: yes.toLowerCase() as Address, no: no.toLowerCase() as Address }
    }
    deep = await launch("Deep pool?", 100_000n * USDC)
    thin = await launch("Thin pool?", 300n * USDC)
    empty = await launch("Empty pool, books only?", 0n)
    const markets = [deep, thin, empty]
    for (const user of USERS) {
      for (const m of markets) {
        await send(user, "MarketFacet", a.diamond, "splitPosition", [m.id, 20_000n * USDC])
        await approveAll(user, m.yes)
        await approveAll(user, m.no)
      }
    }
    for (const m of markets) await placeOrders(m, m === thin ? 4 : 25)

    let matched = 0
    let refused = 0
    const types = new Set<string>()
    const venues = { clob: 0, amm: 0, both: 0 }
    const pools = new Set<TestMarket>()
    // Rounds of trades on distinct markets (quoteThenTradeAll): the deep pool in every round, the
    // thin and the empty one each in a third of them, so the deep pool takes 60% of the trades and
    // the others 20% each; a few new orders after every 4 trades.
    let done = 0
    let ordersAt = 3
    while (done < TRADES) {
      while (done >= ordersAt) {
        await placeOrders(pick(markets), between(2, 8))
        ordersAt += 4
      }
      const round = [deep, ...(chance(1 / 3) ? [thin] : []), ...(chance(1 / 3) ? [empty] : [])].slice(0, TRADES - done)
      // Distinct traders: consecutive ones from a random place in the list.
      const first = between(0, USERS.length - 1)
      const users = round.map((_, i) => USERS[(first + i) % USERS.length]!)
      const planned = round.map((m, i): Planned => {
        const tradeType = pick(SIDES)
        return { m, tradeType, user: users[i]!, ...randomTrade(m, tradeType) }
      })
      const results = await quoteThenTradeAll(planned)
      done += planned.length
      results.forEach((result, i) => {
        if (result.kind === "refused") {
          refused++
          return
        }
        const { actual } = result
        matched++
        types.add(planned[i]!.tradeType)
        pools.add(planned[i]!.m)
        if (actual.clobFilled > 0n && actual.ammFilled > 0n) venues.both++
        else if (actual.clobFilled > 0n) venues.clob++
        else venues.amm++
      })
    }
    expect(matched + refused, "trades quoted and executed").toBe(TRADES)
    expect(matched, "trades the router executed and the quote matched").toBeGreaterThanOrEqual(100)
    expect(refused, "trades the router refused, refused by the quote too").toBeGreaterThan(0)
    expect(pools.size, "pools (deep, thin, empty) among the matched trades").toBe(markets.length)
    expect(venues.clob, "matched trades filled on the book alone").toBeGreaterThan(0)
    expect(venues.both, "matched trades filled on the book and the AMM").toBeGreaterThan(0)
    expect([...types].sort(), "trade types among the matched trades").toEqual([...SIDES].sort())
    expect(venues.clob + venues.both, "matched trades that filled on the book").toBeGreaterThan(10)
    expect(venues.amm + venues.both, "matched trades that filled on the AMM").toBeGreaterThan(10)
    console.log(
      `quote vs router: ${matched} trades matched to the raw unit (${venues.clob} CLOB only, ${venues.amm} AMM only, ${venues.both} both); ${refused} refused by both`
    )
  }, 600_000)

  it("while the exchange is paused the quote skips the book as the router does: AMM alone for all four types, MARKET_PAUSED where the AMM cannot take it", async () => {
    const a = devnet.addresses
    const admin = client.address(ADMIN).toLowerCase()
    const get = async (url: string) => (await (await fetch(url)).json()) as any
    const price = (decimal: string | null) => (decimal === null ? null : BigInt(Math.round(Number(decimal) * 1e6)))
    /** The book holds an order the router's CLOB leg would fill at `limit` were the exchange open (router-math's matching rule). */
    const bookWouldFill = (view: any, tradeType: (typeof SIDES)[number], limit: bigint) => {
      const [bidYes, askYes, bidNo, askNo] = [price(view.bestBidYes), price(view.bestAskYes), price(view.bestBidNo), price(view.bestAskNo)]
      const buyAt = (ask: bigint | null, otherBid: bigint | null) =>
        (ask !== null && ask <= limit) || (otherBid !== null && 1_000_000n - otherBid <= limit)
      const sellAt = (bid: bigint | null, otherAsk: bigint | null) =>
        (bid !== null && bid >= limit) || (otherAsk !== null && 1_000_000n - otherAsk >= limit)
      if (tradeType === "BUY_YES") return buyAt(askYes, bidNo)
      if (tradeType === "SELL_YES") return sellAt(bidYes, askNo)
      if (tradeType === "BUY_NO") return buyAt(askNo, bidYes)
      return sellAt(bidNo, askYes)
    }
    const setPaused = async (paused: boolean) => {
      const receipt = await send(ADMIN, "Exchange", a.exchange, "setPaused", [paused])
      await index()
      for (const m of [deep, thin, empty]) {
        // The view's pause flags are the head's as the backend last heard of it (the indexer's NOTIFY): wait for that head.
        let view = (await get(`${backendUrl}/api/markets/${m.id}/pricing/view`)).data
        while (view.indexedAt.number < Number(receipt.blockNumber)) {
          await new Promise((resolve) => setTimeout(resolve, 20))
          view = (await get(`${backendUrl}/api/markets/${m.id}/pricing/view`)).data
        }
        expect(view.clobPaused, `the pricing view of market ${m.id} shows the exchange paused = ${paused}`).toBe(paused)
      }
    }
    // Orders near each pool's price, so the book has something to fill on every side.
    for (const m of [deep, thin, empty]) await placeOrders(m, 12)
    /**
     * A large YES bid at the router's SELL_YES limit (it fills SELL_YES, and BUY_NO as MINT) or a
     * YES ask at its BUY_YES limit (BUY_YES, and SELL_NO as MERGE), rounded into the limit: the
     * book certainly holds what the router would fill while the pause freezes it. The two cannot
     * rest together (the fee spread is narrower than a tick), hence one per pause.
     */
    const anchor = async (m: TestMarket, side: "bid" | "ask") => {
      await index()
      const limit = price(
        (await quote(m.id, { tradeType: side === "bid" ? "SELL_YES" : "BUY_YES", amountIn: "1" })).body.data.clobLimitPrice
      )!
      const tick = side === "bid" ? ((limit + 9_999n) / 10_000n) * 10_000n : (limit / 10_000n) * 10_000n
      const clamped = tick < 10_000n ? 10_000n : tick > 990_000n ? 990_000n : tick
      await send(USERS[0]!, "Exchange", a.exchange, "placeOrder", [m.id, side === "bid" ? 0 : 1, clamped, 500n * USDC, ZERO32])
    }

    const paused = { matched: new Map<string, number>(), bookSkipped: new Set<string>(), refused: 0 }
    /** `count` trades, the types in turn from `order`, the first round on the deep pool (where the anchor is). */
    const pausedTrades = async (count: number, order: ReadonlyArray<(typeof SIDES)[number]>) => {
      for (let i = 0; i < count; i++) {
        const m = i < order.length ? deep : pick([deep, deep, deep, thin, empty])
        const tradeType = order[i % order.length]!
        const { amountIn, maxFills } = randomTrade(m, tradeType)
        await index()
        const view = (await get(`${backendUrl}/api/markets/${m.id}/pricing/view`)).data
        const result = await quoteThenTrade(m, tradeType, pick(USERS), amountIn, maxFills)
        const context = `paused: ${tradeType} ${amountIn} on market ${m.id}`
        if (result.kind === "refused") {
          // The pool cannot take what the book would have: the pause is why.
          expect(result.code, context).toBe("MARKET_PAUSED")
          paused.refused++
          continue
        }
        expect(result.actual.clobFilled, context).toBe(0n)
        expect(
          result.quoted.route.filter((leg: any) => leg.venue === "CLOB"),
          context
        ).toEqual([])
        expect(clobSkipsOf(result.receipt, a.router), context).toEqual([EXCHANGE_PAUSED])
        paused.matched.set(tradeType, (paused.matched.get(tradeType) ?? 0) + 1)
        if (bookWouldFill(view, tradeType, price(result.quoted.clobLimitPrice)!)) paused.bookSkipped.add(tradeType)
      }
    }
    let openClob = 0
    const openTrades = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const m = pick([deep, deep, thin])
        const tradeType = SIDES[i % 4]!
        const { amountIn, maxFills } = randomTrade(m, tradeType)
        const result = await quoteThenTrade(m, tradeType, pick(USERS), amountIn, maxFills)
        if (result.kind === "matched" && result.actual.clobFilled > 0n) openClob++
      }
    }

    // The types the anchor serves come first: they move the pool's price away from the anchor, so
    // it stays within the router's limit for them.
    for (const m of [deep, thin]) await anchor(m, "bid")
    await setPaused(true)
    await pausedTrades(28, ["SELL_YES", "BUY_NO", "BUY_YES", "SELL_NO"])
    await setPaused(false)
    await openTrades(12)
    for (const m of [deep, thin]) await anchor(m, "ask")
    await setPaused(true)
    await pausedTrades(28, ["BUY_YES", "SELL_NO", "SELL_YES", "BUY_NO"])
    await setPaused(false)

    for (const type of SIDES) expect(paused.matched.get(type) ?? 0, `${type} trades matched while paused`).toBeGreaterThanOrEqual(5)
    expect([...paused.bookSkipped].sort(), "types whose paused trades skipped a book that would have filled").toEqual([...SIDES].sort())
    expect(paused.refused, "trades on the empty pool while paused").toBeGreaterThan(0)
    expect(openClob, "book fills between the pauses").toBeGreaterThan(0)
    // The indexer's admin history has the four pauses and unpauses, by the admin.
    const pauses = await get(`${indexerUrl}/api/admin/pauses?scope=EXCHANGE`)
    expect(
      pauses.data.map((p: any) => [p.paused, p.account, p.moduleId]),
      "the indexer's admin history of exchange pauses, newest first"
    ).toEqual([
      [false, admin, null],
      [true, admin, null],
      [false, admin, null],
      [true, admin, null]
    ])
    const matched = [...paused.matched.values()].reduce((x, y) => x + y, 0)
    console.log(
      `quote vs router, exchange paused: ${matched} AMM-only trades matched to the raw unit (${SIDES.map((t) => `${t} ${paused.matched.get(t) ?? 0}`).join(", ")}); ${paused.refused} refused by both as MARKET_PAUSED; ${openClob} book fills between the pauses`
    )
  }, 600_000)

  it("a buy quote with address reads the wallet's USDC on chain at the quoted block: INSUFFICIENT_BALANCE when it cannot pay", async () => {
    const a = devnet.addresses
    const id = 1n
    const rich = client.address(USERS[0]!).toLowerCase()
    const poor = client.address(9).toLowerCase() as Address
    // What `start` records of the deployment: the backend asks its diamond for the collateral token.
    await runtime.runPromise(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) =>
          sql`insert into indexed_deployment (chain_id, diamond, deploy_block, source) values (130, ${a.diamond.toLowerCase()}, 0, 'test') on conflict do nothing`
      )
    )
    expect((await quote(id, { tradeType: "BUY_YES", amountIn: "10", address: rich })).status, "a wallet that can pay is quoted").toBe(200)
    const refused = await quote(id, { tradeType: "BUY_YES", amountIn: "10", address: poor })
    expect(refused.status, "an empty wallet's buy quote is refused").toBe(400)
    expect(refused.body.code, "an empty wallet's buy quote is refused").toBe("INSUFFICIENT_BALANCE")
    expect(refused.body.message, "the refusal says what the wallet holds").toMatch(/holds 0\.000000 USDC, less than 10/)
    // Minted after the indexed head: the quote is at the indexed block, where the wallet still holds nothing.
    await send(ADMIN, "TestUsdc", a.testUsdc, "mint", [poor, 10n * USDC])
    expect(
      (await quote(id, { tradeType: "BUY_NO", amountIn: "10", address: poor })).body.code,
      "USDC minted after the indexed block is not yet the wallet's"
    ).toBe("INSUFFICIENT_BALANCE")
    await index()
    expect(
      (await quote(id, { tradeType: "BUY_NO", amountIn: "10", address: poor })).status,
      "once indexed, the minted USDC pays for the quote"
    ).toBe(200)
    expect(
      (await quote(id, { tradeType: "BUY_NO", amountIn: "10.000001", address: poor })).body.code,
      "a raw unit more than the wallet holds"
    ).toBe("INSUFFICIENT_BALANCE")
  }, 60_000)

  it("a paused market module and an ended market are MARKET_PAUSED, as the router refuses them", async () => {
    const a = devnet.addresses
    const id = 1n
    await send(ADMIN, "AdminFacet", a.diamond, "pauseModule", [MODULE_MARKET])
    await index()
    const paused = await quote(id, { tradeType: "BUY_YES", amountIn: "10" })
    expect(paused.body.code, "the quote while the market module is paused").toBe("MARKET_PAUSED")
    await expect(
      send(USERS[0]!, "Router", a.router, "trade", [0, id, 10n * USDC, 0n, client.address(USERS[0]!), 0n, maxUint256, ZERO]),
      "the router refuses a trade while the market module is paused"
    ).rejects.toThrow()
    await send(ADMIN, "AdminFacet", a.diamond, "unpauseModule", [MODULE_MARKET])
    await index()
    expect((await quote(id, { tradeType: "BUY_YES", amountIn: "10" })).status, "the quote once the module is unpaused").toBe(200)
    await client.advanceTime(31 * 86_400)
    await index()
    const ended = await quote(id, { tradeType: "SELL_NO", amountIn: "10" })
    expect(ended.body.code, "the quote on an ended market").toBe("MARKET_PAUSED")
    await expect(
      send(USERS[0]!, "Router", a.router, "trade", [3, id, 10n * USDC, 0n, client.address(USERS[0]!), 0n, maxUint256, ZERO]),
      "the router refuses a trade on an ended market"
    ).rejects.toThrow()
  }, 120_000)
})
