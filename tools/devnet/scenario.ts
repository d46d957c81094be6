/**
 * The seeded scenario: realistic protocol activity on a freshly deployed devnet, the same
 * transactions for the same seed (anvil's fixed genesis time and block step then give the same
 * blocks and logs).
 *
 * Shape: setup (faucet claims, fees, oracles), 22 binary markets plus two multi-outcome events,
 * a trading loop (router buys and sells of YES and NO over CLOB and AMM, limit orders placed,
 * crossed and cancelled, splits, merges, liquidity added and removed, token transfers) with
 * admin interludes (roles, pauses, a diamond cut, fee changes, hook pause and upgrade) and two
 * scripted reorgs, then resolution (manual reports with a revoke and reopen, price feed,
 * emergency, event resolution, refund modes), redemptions, refunds and a sweep.
 *
 * Decisions read the chain (balances, prices), never a local model, so a reorg that drops a
 * few transactions leaves the scenario consistent with whatever the chain now holds. An action
 * the chain refuses is counted and skipped, which is deterministic too.
 */
import { maxUint256, type TransactionReceipt } from "viem"
import { CATALOG } from "../../schema/catalog.js"
import type { Address, DevnetClient } from "./client.js"
import { ADMIN, MODULE_MARKET, REPORTER, ROLES, TIMING, selectorsOf, type Devnet } from "./deploy.js"
import { prng } from "../prng.js"

export interface ScenarioOptions {
  readonly seed: number
  /** Actions in the trading loop (the setup and resolution phases come on top). */
  readonly steps: number
  /** Called before every reorg and at the end, so a recorder sees the heads the reorg replaces. */
  readonly beforeReorg?: () => Promise<void>
  readonly log?: (line: string) => void
}

export interface ScenarioSummary {
  readonly markets: number
  readonly events: number
  readonly users: number
  readonly transactions: number
  readonly refused: number
  readonly reorgs: ReadonlyArray<{ readonly depth: number; readonly atBlock: number }>
}

const USDC = 1_000_000n
const PRICE_TICK = 10_000n
const Q96 = 1n << 96n
const USERS = Array.from({ length: 14 }, (_, i) => i + 2)
const LPS = [16, 17]
/** The market maker who also arbitrages the pools (see `arbitrage`). */
const ARBITRAGEUR = LPS[1]!
const SIDE = { BUY_YES: 0, SELL_YES: 1, BUY_NO: 2, SELL_NO: 3 } as const
const ZERO = "0x0000000000000000000000000000000000000000" as Address
const ZERO32 = `0x${"0".repeat(64)}`
const ORDER_PLACED_TOPICS = new Set<string>(
  CATALOG.filter((e) => e.contract === "exchange" && e.name === "OrderPlaced").map((e) => e.topic0)
)
/** anvil's finalized block trails the head by 64; a few more for good measure. */
const FINALITY_MARGIN = 70

interface MarketInfo {
  readonly id: bigint
  readonly yes: Address
  readonly no: Address
  readonly oracle: "manual" | "feed" | "event"
  readonly endTime: bigint
  readonly short: boolean
}

const QUESTIONS = [
  "Will ETH close above $4,000 on 31 Jan 2026?",
  "Will BTC trade above $120k in January 2026?",
  "Will the Fed cut rates in January 2026?",
  "Will SpaceX launch Starship again before February?",
  "Will the Lakers win on opening night?",
  "Will it snow in Hanoi this winter?",
  "Will a new L2 pass $1B TVL this month?",
  "Will USDC supply exceed 80B by February?",
  "Will the S&P 500 hit a record this week?",
  "Will gold close above $3,000 this week?",
  "Will Apple announce a foldable iPhone?",
  "Will the Champions League final go to penalties?",
  "Will inflation print below 3% in January?",
  "Will a stablecoin depeg below $0.98 this month?",
  "Will ETH gas average below 5 gwei this week?",
  "Will Unichain daily transactions exceed 1M?",
  "Will ETH be above $3,000 at the snapshot?",
  "Will ETH be above $3,200 at the snapshot?",
  "Will ETH be below $2,800 at the snapshot?",
  "Will ETH be above $3,500 at the snapshot?",
  "Will a prediction market top $1B monthly volume?",
  "Will the next block time average stay under 1s?"
]

export const runScenario = async (client: DevnetClient, devnet: Devnet, options: ScenarioOptions): Promise<ScenarioSummary> => {
  const random = prng(options.seed)
  const pick = <T>(list: ReadonlyArray<T>): T => list[Math.floor(random() * list.length)]!
  const chance = (p: number) => random() < p
  const between = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1))
  const log = options.log ?? (() => {})
  const a = devnet.addresses
  let transactions = 0
  let refused = 0
  const reorgs: Array<{ depth: number; atBlock: number }> = []
  const approved = new Set<string>()

  const send = async (
    from: number,
    contract: string,
    address: Address,
    fn: string,
    args: ReadonlyArray<unknown> = []
  ): Promise<TransactionReceipt> => {
    const receipt = await client.send(from, contract, address, fn, args)
    transactions++
    return receipt
  }
  /** An action the chain may refuse (a revert is an answer, not a failure). */
  const attempt = async (what: string, action: () => Promise<unknown>): Promise<boolean> => {
    try {
      await action()
      return true
    } catch (error) {
      refused++
      log(`refused: ${what}: ${String((error as Error).message).split("\n")[0]}`)
      return false
    }
  }
  const approve = async (from: number, token: Address, spender: Address) => {
    const key = `${from}:${token}:${spender}`
    if (approved.has(key)) return
    await send(from, "TestUsdc", token, "approve", [spender, maxUint256])
    approved.add(key)
  }
  const balance = (token: Address, who: Address) => client.read<bigint>("TestUsdc", token, "balanceOf", [who])
  const now = async () => BigInt(await client.timestamp())

  // ---- setup ------------------------------------------------------------------------------
  await send(ADMIN, "ManualOracle", a.manualOracle, "setChallengeDelay", [300n])
  await send(ADMIN, "AdminFacet", a.diamond, "setDefaultRedemptionFee", [100])
  for (const user of [...USERS, ...LPS]) await send(user, "Faucet", a.faucet, "claim")
  for (const lp of [ADMIN, ...LPS]) await send(ADMIN, "TestUsdc", a.testUsdc, "mint", [client.address(lp), 200_000n * USDC])
  for (const user of [ADMIN, ...USERS, ...LPS]) {
    for (const spender of [a.router, a.diamond, a.exchange, a.poolManager, a.marketFactory]) await approve(user, a.testUsdc, spender)
  }

  // ---- markets ----------------------------------------------------------------------------
  const markets: Array<MarketInfo> = []
  const start = await now()
  const shortEnd = start + 2n * 3600n
  const longEnd = start + 30n * 86_400n
  const created = async (receipt: TransactionReceipt, oracle: MarketInfo["oracle"], endTime: bigint, short: boolean) => {
    const count = await client.read<bigint>("MarketFacet", a.diamond, "marketCount")
    const [yes, no] = await client.read<readonly [Address, Address]>("MarketFacet", a.diamond, "marketTokens", [count])
    const info: MarketInfo = { id: count, yes: yes.toLowerCase() as Address, no: no.toLowerCase() as Address, oracle, endTime, short }
    markets.push(info)
    void receipt
    return info
  }
  for (let i = 0; i < QUESTIONS.length; i++) {
    const feed = i >= 16 && i < 20
    const short = i < 12 || feed
    const endTime = short ? shortEnd : longEnd
    const oracle = feed ? a.priceFeedOracle : a.manualOracle
    const receipt = await send(ADMIN, "MarketFactory", a.marketFactory, "launch", [
      QUESTIONS[i],
      endTime,
      oracle,
      BigInt(between(2, 6)) * 1000n * USDC
    ])
    const market = await created(receipt, feed ? "feed" : "manual", endTime, short)
    if (feed) {
      const thresholds = [3_000n, 3_200n, 2_800n, 3_500n]
      await send(ADMIN, "PriceFeedOracle", a.priceFeedOracle, "register", [
        market.id,
        a.priceFeed,
        thresholds[i - 16]! * 10n ** 8n,
        i !== 18,
        endTime
      ])
    }
  }
  const eventChildren = async (name: string, questions: ReadonlyArray<string>, endTime: bigint, short: boolean) => {
    await send(ADMIN, "EventFacet", a.diamond, "createEvent", [name, questions, endTime, a.manualOracle])
    const eventId = await client.read<bigint>("EventFacet", a.diamond, "eventCount")
    const ids = await client.read<ReadonlyArray<bigint>>("EventFacet", a.diamond, "eventMarkets", [eventId])
    const children: Array<MarketInfo> = []
    for (const id of ids) {
      await send(ADMIN, "MarketFactory", a.marketFactory, "seedPool", [id, 2_000n * USDC])
      const [yes, no] = await client.read<readonly [Address, Address]>("MarketFacet", a.diamond, "marketTokens", [id])
      const info: MarketInfo = { id, yes: yes.toLowerCase() as Address, no: no.toLowerCase() as Address, oracle: "event", endTime, short }
      markets.push(info)
      children.push(info)
    }
    return { eventId, children }
  }
  const final = await eventChildren("Who wins the 2026 league final?", ["Falcons", "Tigers", "Wolves", "Sharks"], shortEnd, true)
  const refundEvent = await eventChildren("Which city hosts the 2030 expo?", ["Riverton", "Lakeside"], longEnd, false)
  log(`${markets.length} markets, 2 events`)
  // A crossing pair on a fresh book: BUY YES at 0.50 and BUY NO at 0.52 mint together, and the
  // 0.02 surplus per share is the exchange's fee (FeeCollected).
  const fresh = markets.find((m) => !m.short)!
  await send(USERS[0]!, "Exchange", a.exchange, "placeOrder", [fresh.id, SIDE.BUY_YES, 500_000n, 10n * USDC, ZERO32])
  await send(USERS[1]!, "Exchange", a.exchange, "placeOrder", [fresh.id, SIDE.BUY_NO, 520_000n, 10n * USDC, ZERO32])
  // Users crossing each other on that book (issue 14's fixture cases): a MERGE (SELL YES at 0.55
  // resting, SELL NO at 0.40 crossing it: the diamond merges the pair), a COMPLEMENTARY cross
  // (SELL YES at 0.60 resting, BUY YES at 0.65 filled at 0.60), then the buyer transfers part of
  // the position to another user.
  const [merger, mergeTaker, seller, buyer, receiver] = [USERS[2]!, USERS[3]!, USERS[4]!, USERS[5]!, USERS[6]!]
  for (const [user, token, side, price] of [
    [merger, fresh.yes, SIDE.SELL_YES, 550_000n],
    [mergeTaker, fresh.no, SIDE.SELL_NO, 400_000n],
    [seller, fresh.yes, SIDE.SELL_YES, 600_000n]
  ] as const) {
    await send(user, "MarketFacet", a.diamond, "splitPosition", [fresh.id, 10n * USDC])
    await approve(user, token, a.exchange)
    await send(user, "Exchange", a.exchange, "placeOrder", [fresh.id, side, price, 10n * USDC, ZERO32])
  }
  await send(buyer, "Exchange", a.exchange, "placeOrder", [fresh.id, SIDE.BUY_YES, 650_000n, 10n * USDC, ZERO32])
  await send(buyer, "OutcomeToken", fresh.yes, "transfer", [client.address(receiver), 4n * USDC])

  // ---- trading ----------------------------------------------------------------------------
  const tradable = async () => {
    const t = await now()
    const open: Array<MarketInfo> = []
    for (const m of markets)
      if (m.endTime > t + 60n && (await client.read<boolean>("MarketFacet", a.diamond, "isTradable", [m.id]))) open.push(m)
    return open
  }
  const yesPrice = async (m: MarketInfo): Promise<bigint> => {
    const key = await client.read<{ currency0: Address }>("MarketHook", a.hookProxy, "poolKeyOf", [m.id])
    const id = await client.read<`0x${string}`>("PoolManager", a.poolManager, "poolId", [key])
    const [sqrtP] = await client.read<readonly [bigint, number, bigint, boolean]>("PoolManager", a.poolManager, "pools", [id])
    return client.read<bigint>("MarketHook", a.hookProxy, "yesPrice", [sqrtP, key.currency0.toLowerCase() === m.yes])
  }
  const onGrid = (price: bigint) => {
    const p = (price / PRICE_TICK) * PRICE_TICK
    return p < PRICE_TICK ? PRICE_TICK : p > 990_000n ? 990_000n : p
  }
  const openOrders: Array<{ id: `0x${string}`; owner: number }> = []
  const placedId = (receipt: TransactionReceipt): `0x${string}` | undefined => {
    // OrderPlaced: topic0 then orderId as the first indexed topic, emitted by the exchange.
    const log = receipt.logs.find((l) => l.address.toLowerCase() === a.exchange && ORDER_PLACED_TOPICS.has(l.topics[0] ?? ""))
    return log?.topics[1]
  }

  const trade = async (user: number, m: MarketInfo, extras: { recipient?: Address; referrer?: Address; side?: number } = {}) => {
    const side = extras.side ?? pick([SIDE.BUY_YES, SIDE.BUY_NO, SIDE.BUY_YES, SIDE.BUY_NO, SIDE.SELL_YES, SIDE.SELL_NO])
    const me = client.address(user)
    let amount: bigint
    if (side === SIDE.BUY_YES || side === SIDE.BUY_NO) amount = BigInt(between(5, 400)) * USDC
    else {
      const held = await balance(side === SIDE.SELL_YES ? m.yes : m.no, me)
      if (held < 2n * USDC)
        return attempt("buy", () =>
          send(user, "Router", a.router, "trade", [SIDE.BUY_YES, m.id, 50n * USDC, 50n * USDC, me, 10n, maxUint256, ZERO])
        )
      amount = (held * BigInt(between(20, 100))) / 100n
      await approve(user, side === SIDE.SELL_YES ? m.yes : m.no, a.router)
    }
    // A buyer never pays more than a split costs: at least one share per USDC, or no trade.
    const minOut = side === SIDE.BUY_YES || side === SIDE.BUY_NO ? amount : 0n
    const done = await attempt(`trade ${side} on ${m.id}`, () =>
      send(user, "Router", a.router, "trade", [
        side,
        m.id,
        amount,
        minOut,
        extras.recipient ?? me,
        10n,
        maxUint256,
        extras.referrer ?? ZERO
      ])
    )
    await arbitrage(m)
    return done
  }

  /**
   * An arbitrageur keeps YES + NO near 1, as in a real market: a pair costs 1 USDC by split, so
   * while the pool pays nearly 1 for YES (NO is priced 1 - YES by the router), it splits and sells
   * the YES, 100 USDC at a time, asking at least 0.95 per share. Reads the chain, draws nothing
   * from the scenario's random sequence.
   */
  const arbitrage = async (m: MarketInfo) => {
    for (let round = 0; round < 5; round++) {
      if ((await yesPrice(m)) < 960_000n) return
      const size = 100n * USDC
      if (!(await attempt("arbitrage split", () => send(ARBITRAGEUR, "MarketFacet", a.diamond, "splitPosition", [m.id, size])))) return
      await approve(ARBITRAGEUR, m.yes, a.router)
      const me = client.address(ARBITRAGEUR)
      if (
        !(await attempt("arbitrage sell", () =>
          send(ARBITRAGEUR, "Router", a.router, "trade", [SIDE.SELL_YES, m.id, size, (size * 95n) / 100n, me, 10n, maxUint256, ZERO])
        ))
      )
        return
    }
  }

  const placeOrder = async (user: number, m: MarketInfo) => {
    const me = client.address(user)
    const yes = await yesPrice(m)
    const side = pick([SIDE.BUY_YES, SIDE.SELL_YES, SIDE.BUY_NO, SIDE.SELL_NO])
    const reference = side === SIDE.BUY_YES || side === SIDE.SELL_YES ? yes : 1_000_000n - yes
    // Mostly resting orders a few ticks off the pool price; sometimes crossing ones.
    const offset = BigInt(between(-5, 8)) * PRICE_TICK
    const price = onGrid(side === SIDE.BUY_YES || side === SIDE.BUY_NO ? reference - offset : reference + offset)
    const amount = BigInt(between(2, 60)) * USDC
    if (side === SIDE.SELL_YES || side === SIDE.SELL_NO) {
      const token = side === SIDE.SELL_YES ? m.yes : m.no
      if ((await balance(token, me)) < amount) {
        await approve(user, a.testUsdc, a.diamond)
        await attempt("split for order", () => send(user, "MarketFacet", a.diamond, "splitPosition", [m.id, amount]))
      }
      await approve(user, token, a.exchange)
    }
    const builder = chance(0.3) ? `0x${"b".repeat(2)}${"0".repeat(62)}` : `0x${"0".repeat(64)}`
    await attempt(`order on ${m.id}`, async () => {
      const receipt = await send(user, "Exchange", a.exchange, "placeOrder", [m.id, side, price, amount, builder])
      const id = placedId(receipt)
      if (id !== undefined) openOrders.push({ id, owner: user })
    })
  }

  const cancelOrder = async () => {
    if (openOrders.length === 0) return
    const index = Math.floor(random() * openOrders.length)
    const [order] = openOrders.splice(index, 1)
    await attempt("cancel", () => send(order!.owner, "Exchange", a.exchange, "cancelOrder", [order!.id]))
  }

  const splitOrMerge = async (user: number, m: MarketInfo) => {
    const me = client.address(user)
    if (chance(0.6))
      return attempt("split", () => send(user, "MarketFacet", a.diamond, "splitPosition", [m.id, BigInt(between(1, 200)) * USDC]))
    const yes = await balance(m.yes, me)
    const no = await balance(m.no, me)
    const both = yes < no ? yes : no
    if (both === 0n) return
    return attempt("merge", () => send(user, "MarketFacet", a.diamond, "mergePositions", [m.id, (both * BigInt(between(10, 100))) / 100n]))
  }

  const liquidity = async (lp: number, m: MarketInfo) => {
    const key = await client.read<{ tickSpacing: number }>("MarketHook", a.hookProxy, "poolKeyOf", [m.id])
    const [lower, upper] = await client.read<readonly [number, number]>("PoolManager", a.poolManager, "fullRange", [key.tickSpacing])
    const salt = `0x${lp.toString(16).padStart(64, "0")}`
    const id = await client.read<`0x${string}`>("PoolManager", a.poolManager, "poolId", [key])
    const { keccak256, encodeAbiParameters } = await import("viem")
    const position = keccak256(
      encodeAbiParameters(
        [{ type: "bytes32" }, { type: "address" }, { type: "int24" }, { type: "int24" }, { type: "bytes32" }],
        [id, client.address(lp), lower, upper, salt as `0x${string}`]
      )
    )
    const held = await client.read<bigint>("PoolManager", a.poolManager, "positions", [position])
    if (held > 0n && chance(0.4)) {
      return attempt("remove liquidity", () =>
        send(lp, "PoolManager", a.poolManager, "modifyLiquidity", [key, lower, upper, -(held / 2n), salt])
      )
    }
    // Liquidity L needs about L*2^96/sqrtP of currency0 and L*sqrtP/2^96 of currency1: mint YES
    // generously by splitting, then add.
    const [sqrtP] = await client.read<readonly [bigint]>("PoolManager", a.poolManager, "pools", [id])
    const size = BigInt(between(200, 1500)) * USDC
    const l = (size * sqrtP) / Q96 < size ? (size * sqrtP) / Q96 : (size * Q96) / sqrtP
    await attempt("split for liquidity", () => send(lp, "MarketFacet", a.diamond, "splitPosition", [m.id, 2n * size]))
    await approve(lp, m.yes, a.poolManager)
    return attempt("add liquidity", () => send(lp, "PoolManager", a.poolManager, "modifyLiquidity", [key, lower, upper, l / 2n, salt]))
  }

  const transferTokens = async (user: number, m: MarketInfo) => {
    const token = chance(0.5) ? m.yes : m.no
    const held = await balance(token, client.address(user))
    if (held === 0n) return
    const to = pick(USERS.filter((u) => u !== user))
    await attempt("transfer", () => send(user, "OutcomeToken", token, "transfer", [client.address(to), held / 3n + 1n]))
  }

  const reorg = async (depth: number) => {
    await options.beforeReorg?.()
    const atBlock = await client.blockNumber()
    await client.reorg(depth)
    reorgs.push({ depth, atBlock })
    approved.clear() // approvals in the dropped blocks are gone
    openOrders.length = 0
    log(`reorg of depth ${depth} at block ${atBlock}`)
  }

  const admin = {
    roles: async () => {
      await send(ADMIN, "AdminFacet", a.diamond, "grantRole", [ROLES.OPERATOR, client.address(5)])
      await send(ADMIN, "AdminFacet", a.diamond, "revokeRole", [ROLES.OPERATOR, client.address(5)])
      // An oracle approved by mistake and withdrawn.
      await send(ADMIN, "AdminFacet", a.diamond, "approveOracle", [client.address(20)])
      await send(ADMIN, "AdminFacet", a.diamond, "revokeOracle", [client.address(20)])
    },
    pauses: async () => {
      await send(ADMIN, "AdminFacet", a.diamond, "pause")
      await attempt("split while paused", () => send(USERS[0]!, "MarketFacet", a.diamond, "splitPosition", [markets[0]!.id, USDC]))
      await send(ADMIN, "AdminFacet", a.diamond, "unpause")
      await send(ADMIN, "AdminFacet", a.diamond, "pauseModule", [MODULE_MARKET])
      await send(ADMIN, "AdminFacet", a.diamond, "unpauseModule", [MODULE_MARKET])
    },
    cut: async () => {
      const next = await client.deploy(ADMIN, "MarketFacet")
      transactions++
      const selectors = selectorsOf(client, "MarketFacet")
      await send(ADMIN, "AdminFacet", a.diamond, "diamondCut", [
        [{ facetAddress: next.address, action: 1, functionSelectors: selectors }],
        ZERO,
        "0x"
      ])
    },
    fees: async () => {
      await send(ADMIN, "AdminFacet", a.diamond, "setMarketCreationFee", [5n * USDC])
      await send(ADMIN, "AdminFacet", a.diamond, "setMarketCreationFee", [0n])
      await send(ADMIN, "AdminFacet", a.diamond, "setFeeRecipient", [client.address(21)])
      await send(ADMIN, "AdminFacet", a.diamond, "setMarketRedemptionFee", [markets[2]!.id, 200, true])
      await send(ADMIN, "AdminFacet", a.diamond, "setMarketRedemptionFee", [markets[3]!.id, 0, false])
    },
    exchangePause: async () => {
      // The router falls back to the AMM alone and says why (ClobSkipped).
      await send(ADMIN, "Exchange", a.exchange, "setPaused", [true])
      const open = await tradable()
      if (open.length > 0) await trade(USERS[1]!, open[0]!, { side: SIDE.BUY_YES })
      await send(ADMIN, "Exchange", a.exchange, "setPaused", [false])
    },
    hookPause: async () => {
      await send(ADMIN, "MarketHook", a.hookProxy, "setPaused", [true])
      await send(ADMIN, "MarketHook", a.hookProxy, "setPaused", [false])
    },
    hookUpgrade: async () => {
      const first = await client.deploy(ADMIN, "MarketHook")
      const second = await client.deploy(ADMIN, "MarketHook")
      transactions += 2
      await send(ADMIN, "HookProxy", a.hookProxy, "proposeUpgrade", [first.address])
      await send(ADMIN, "HookProxy", a.hookProxy, "cancelUpgrade")
      await send(ADMIN, "HookProxy", a.hookProxy, "proposeUpgrade", [second.address])
    }
  }
  const interludes = new Map<number, () => Promise<unknown>>([
    [Math.floor(options.steps * 0.1), admin.roles],
    [Math.floor(options.steps * 0.2), admin.pauses],
    [Math.floor(options.steps * 0.3), () => reorg(2)],
    [Math.floor(options.steps * 0.4), admin.cut],
    [Math.floor(options.steps * 0.5), admin.fees],
    [Math.floor(options.steps * 0.6), admin.hookPause],
    [Math.floor(options.steps * 0.65), admin.exchangePause],
    [Math.floor(options.steps * 0.7), () => reorg(4)],
    [Math.floor(options.steps * 0.8), admin.hookUpgrade]
  ])

  let open = await tradable()
  for (let step = 0; step < options.steps; step++) {
    const interlude = interludes.get(step)
    if (interlude !== undefined) await interlude()
    if (step % 25 === 0) open = await tradable()
    if (open.length === 0) break
    const m = pick(open)
    const user = pick(USERS)
    const roll = random()
    if (roll < 0.42) await trade(user, m)
    else if (roll < 0.45) await trade(user, m, { referrer: client.address(pick(USERS.filter((u) => u !== user))) })
    else if (roll < 0.46) await trade(user, m, { recipient: a.timelock })
    else if (roll < 0.47) await trade(user, m, { side: SIDE.BUY_NO })
    else if (roll < 0.67) await placeOrder(user, m)
    else if (roll < 0.74) await cancelOrder()
    else if (roll < 0.84) await splitOrMerge(user, m)
    else if (roll < 0.92) await liquidity(pick(LPS), m)
    else await transferTokens(user, m)
  }

  // ---- resolution -------------------------------------------------------------------------
  await client.advanceTime(3 * 3600)
  const oracle = (fn: string, args: ReadonlyArray<unknown>, from = REPORTER) =>
    attempt(fn, () => send(from, "ManualOracle", a.manualOracle, fn, args))
  const manual = markets.filter((m) => m.oracle === "manual" && m.short)
  const [first, ...others] = manual
  await oracle("report", [first!.id, false])
  await oracle("revoke", [first!.id], ADMIN)
  await oracle("reopen", [first!.id], ADMIN)
  await oracle("report", [first!.id, true])
  const emergency = others.slice(-2)
  for (const m of others.slice(0, -2)) await oracle("report", [m.id, chance(0.5)])
  await oracle("reportEvent", [final.eventId, 1n])
  await oracle("revokeEvent", [final.eventId], ADMIN)
  await oracle("reopenEvent", [final.eventId], ADMIN)
  await oracle("reportEvent", [final.eventId, 2n])
  await send(ADMIN, "PriceFeed", a.priceFeed, "setAnswer", [3_100n * 10n ** 8n])
  const feeds = markets.filter((m) => m.oracle === "feed")
  await attempt("unregister", () => send(ADMIN, "PriceFeedOracle", a.priceFeedOracle, "unregister", [feeds.at(-1)!.id]))
  await client.advanceTime(TIMING.emergencyDelay + 60)
  for (const m of [first!, ...others.slice(0, -2)]) await oracle("finalize", [m.id], REPORTER)
  await oracle("finalizeEvent", [final.eventId], REPORTER)
  for (const m of feeds.slice(0, -1))
    await attempt("feed resolve", () => send(REPORTER, "PriceFeedOracle", a.priceFeedOracle, "resolve", [m.id]))
  for (const m of [...emergency, feeds.at(-1)!]) {
    await attempt("emergency", () => send(ADMIN, "MarketFacet", a.diamond, "emergencyResolve", [m.id, chance(0.5)]))
  }
  await send(ADMIN, "HookProxy", a.hookProxy, "executeUpgrade")
  // Refunds: one binary market and a whole event.
  const refundMarket = markets.find((m) => m.oracle === "manual" && !m.short)!
  await send(ADMIN, "MarketFacet", a.diamond, "enableRefundMode", [refundMarket.id])
  await send(ADMIN, "EventFacet", a.diamond, "enableEventRefundMode", [refundEvent.eventId])

  // Holders claim: redemptions on resolved markets, refunds in refund mode.
  for (const m of markets) {
    const info = await client.read<{ resolved: boolean; refund: boolean }>("MarketFacet", a.diamond, "getMarket", [m.id])
    if (!info.resolved && !info.refund) continue
    for (const user of [...USERS, ...LPS, ADMIN]) {
      const me = client.address(user)
      const yes = await balance(m.yes, me)
      const no = await balance(m.no, me)
      if (info.resolved && yes + no > 0n && (user % 5 !== 0 || m === markets[0])) {
        await attempt("redeem", () => send(user, "MarketFacet", a.diamond, "redeem", [m.id]))
      } else if (info.refund && yes > 0n && no > 0n) {
        await attempt("refund", () => send(user, "MarketFacet", a.diamond, "refund", [m.id]))
      }
    }
  }
  await client.advanceTime(TIMING.sweepGrace + 60)
  await attempt("sweep", () => send(ADMIN, "MarketFacet", a.diamond, "sweepUnclaimed", [markets[0]!.id]))

  // Life goes on in the long markets.
  const late = await tradable()
  for (let i = 0; i < Math.min(40, options.steps / 5) && late.length > 0; i++) await trade(pick(USERS), pick(late))
  // Empty blocks on top, so anvil's finalized tag (head - 64) covers every action above.
  await client.test.mine({ blocks: FINALITY_MARGIN })
  await options.beforeReorg?.()
  return { markets: markets.length, events: 2, users: USERS.length + LPS.length, transactions, refused, reorgs }
}

/**
 * A live chain's background market: every `intervalMs`, one seeded action on a few open markets
 * (`markets` when given, still tradable ones only; else the newest; launching one when fewer than
 * three are tradable): a router trade (which moves the price), a limit order placed, or one of
 * those orders cancelled. `beforeEach` runs first in every round (the beta's transitions). A
 * refused action is logged and skipped. Markets that end are simply left.
 */
export const followTrading = async (
  client: DevnetClient,
  devnet: Devnet,
  options: {
    readonly seed: number
    readonly stop?: AbortSignal | undefined
    readonly intervalMs?: number
    readonly log?: (line: string) => void
    /** The markets to trade (those still tradable); by default the newest few. */
    readonly markets?: ReadonlyArray<bigint>
    readonly beforeEach?: () => Promise<unknown>
  }
): Promise<void> => {
  const random = prng(options.seed)
  const a = devnet.addresses
  const pick = <T>(list: ReadonlyArray<T>): T => list[Math.floor(random() * list.length)]!
  const openOrders: Array<{ readonly id: `0x${string}`; readonly owner: number }> = []
  let opened = 0
  const stopped = () => options.stop?.aborted === true
  while (!stopped()) {
    try {
      await options.beforeEach?.()
      const open: Array<bigint> = []
      if (options.markets !== undefined) {
        for (const id of options.markets) if (await client.read<boolean>("MarketFacet", a.diamond, "isTradable", [id])) open.push(id)
      } else {
        const count = await client.read<bigint>("MarketFacet", a.diamond, "marketCount")
        // The newest markets: a few, so their prices visibly move.
        for (let id = count; id >= 1n && open.length < 4; id--)
          if (await client.read<boolean>("MarketFacet", a.diamond, "isTradable", [id])) open.push(id)
      }
      const roll = random()
      if (open.length < 3) {
        const end = BigInt(await client.timestamp()) + 7n * 86_400n
        await client.send(ADMIN, "MarketFactory", a.marketFactory, "launch", [
          `Live market #${++opened}: will it go up?`,
          end,
          a.manualOracle,
          3_000n * USDC
        ])
      } else if (roll < 0.5) {
        const user = pick(USERS)
        const side = pick([SIDE.BUY_YES, SIDE.BUY_NO])
        const amount = BigInt(1 + Math.floor(random() * 200)) * USDC
        await client.send(user, "Router", a.router, "trade", [side, pick(open), amount, 0n, client.address(user), 10n, maxUint256, ZERO])
      } else if (roll < 0.8 || openOrders.length === 0) {
        const user = pick(USERS)
        const side = pick([SIDE.BUY_YES, SIDE.BUY_NO])
        // A resting bid a few ticks under the middle (prices in millionths, one tick = 0.01).
        const price = BigInt(20 + Math.floor(random() * 30)) * PRICE_TICK
        const receipt = await client.send(user, "Exchange", a.exchange, "placeOrder", [
          pick(open),
          side,
          price,
          BigInt(1 + Math.floor(random() * 50)) * USDC,
          ZERO32
        ])
        const log = receipt.logs.find((l) => l.address.toLowerCase() === a.exchange && ORDER_PLACED_TOPICS.has(l.topics[0] ?? ""))
        if (log?.topics[1] !== undefined) openOrders.push({ id: log.topics[1], owner: user })
      } else {
        const [order] = openOrders.splice(Math.floor(random() * openOrders.length), 1)
        await client.send(order!.owner, "Exchange", a.exchange, "cancelOrder", [order!.id])
      }
    } catch (error) {
      if (stopped()) return
      options.log?.(`refused: ${String((error as Error).message).split("\n")[0]}`)
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 1000))
  }
}
