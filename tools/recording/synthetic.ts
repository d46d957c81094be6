/**
 * A generator of large synthetic recordings for benchmarks: a seeded simulation of the protocol
 * written straight to the recording format, with a realistic mix of events and reorgs.
 *
 * The simulation keeps the state the events imply (collateral, token balances, resting orders,
 * pool prices) and only emits what that state allows, so the output holds the protocol's
 * invariants (protocol-facts section 9): YES supply == NO supply == totalCollateral for every
 * live market; clobFilled + ammFilled == amountOut for every Trade; fee + payout ==
 * winningBurned for every redemption; outcome tokens are minted and burned only by the diamond
 * alongside a split, merge, redemption or refund in the same transaction; a resolved market
 * stays resolved.
 *
 * Reorgs: now and then the next few blocks are generated, written, and then thrown away by
 * restoring the state saved before them; the canonical blocks that follow reuse their numbers
 * with other hashes, which is how a reorg looks in a recording.
 *
 * Hashes are counters, not keccak: unique and deterministic is all a consumer may rely on.
 */
import { bloomOf, memoizedBloomBits } from "../../pipeline/source/bloom.js"
import type { Deployment } from "../../schema/deployment.js"
import { encoderFor } from "./encode.js"
import type { BlockRecord, RecordedLog } from "./format.js"
import { FORMAT_VERSION } from "./format.js"
import { writeRecords } from "./io.js"
import { prng } from "../prng.js"

export interface SyntheticOptions {
  readonly out: string
  readonly seed: number
  /** Stop once this many logs (canonical and orphaned) are written. */
  readonly events: number
  readonly users?: number
  /** Cap on markets opened at random; more open whenever fewer than 5 are live. */
  readonly maxMarkets?: number
  /** About one reorg every this many blocks (0 disables). */
  readonly reorgEvery?: number
  readonly maxReorgDepth?: number
  /** The recorded finalized block trails the head by this much. */
  readonly finalityDepth?: number
}

export interface SyntheticSummary {
  readonly blocks: number
  readonly logs: number
  readonly orphanedLogs: number
  readonly reorgs: number
  readonly markets: number
  readonly deployment: Deployment
}

const hex32 = (prefix: number, n: number) => `0x${prefix.toString(16).padStart(8, "0")}${n.toString(16).padStart(56, "0")}`
const address = (kind: number, n: number) => `0x${kind.toString(16).padStart(4, "0")}${n.toString(16).padStart(36, "0")}`
const ZERO = `0x${"0".repeat(40)}`
const ZERO32 = `0x${"0".repeat(64)}`
const FEE_RECIPIENT = address(0xfee0, 1)
const UNIT = 1_000_000n
const Q96 = 1n << 96n

/** floor(sqrt(n)) by Newton's iteration from a float estimate (exact for any size). */
const sqrtBig = (n: bigint): bigint => {
  if (n < 2n) return n
  let x = BigInt(Math.floor(Math.sqrt(Number(n)))) + 1n
  for (;;) {
    const y = (x + n / x) >> 1n
    if (y >= x) break
    x = y
  }
  while (x * x > n) x--
  while ((x + 1n) * (x + 1n) <= n) x++
  return x
}

/** YES price (1e6 scale) for a pool whose YES is currency0: sqrtP^2 / 2^192 * 1e6, clamped. */
const yesPriceOf = (sqrtP: bigint, yesIsCurrency0: boolean): bigint => {
  const scaled = (sqrtP * sqrtP * UNIT) >> 192n
  const price = yesIsCurrency0 ? scaled : scaled === 0n ? UNIT : (UNIT * UNIT) / scaled
  return price > UNIT ? UNIT : price
}

const tickOf = (sqrtP: bigint) => Math.floor((2 * Math.log(Number(sqrtP) / 2 ** 96)) / Math.log(1.0001))

interface Order {
  readonly id: string
  readonly owner: string
  readonly side: number
  readonly price: bigint
  remaining: bigint
}

interface Market {
  readonly id: bigint
  readonly yes: string
  readonly no: string
  readonly poolId: string
  readonly yesIsCurrency0: boolean
  collateral: bigint
  sqrtP: bigint
  liquidity: bigint
  resolved: boolean
  outcome: boolean
  refund: boolean
  /** balances[token][user], token 0 = YES, 1 = NO. */
  readonly balances: [Map<string, bigint>, Map<string, bigint>]
  readonly orders: Array<Order>
}

interface State {
  markets: Array<Market>
  nextOrder: number
}

const enc = {
  trade: encoderFor("router", "Trade"),
  split: encoderFor("marketFacet", "PositionSplit"),
  merge: encoderFor("marketFacet", "PositionMerged"),
  created: encoderFor("marketFacet", "MarketCreated"),
  resolved: encoderFor("marketFacet", "MarketResolved"),
  redeemed: encoderFor("marketFacet", "TokensRedeemed"),
  refundMode: encoderFor("marketFacet", "RefundModeEnabled"),
  refunded: encoderFor("marketFacet", "MarketRefunded"),
  transfer: encoderFor("outcomeToken", "Transfer"),
  poolRegistered: encoderFor("hook", "Hook_PoolRegistered"),
  marketTraded: encoderFor("hook", "Hook_MarketTraded"),
  initialize: encoderFor("poolManager", "Initialize"),
  swap: encoderFor("poolManager", "Swap"),
  modifyLiquidity: encoderFor("poolManager", "ModifyLiquidity"),
  placed: encoderFor("exchange", "OrderPlaced"),
  matched: encoderFor("exchange", "OrderMatched"),
  cancelled: encoderFor("exchange", "OrderCancelled"),
  takerFilled: encoderFor("exchange", "TakerFilled"),
  reported: encoderFor("manualOracle", "OutcomeReported"),
  roleGranted: encoderFor("diamondAdmin", "RoleGranted"),
  globalPaused: encoderFor("diamondAdmin", "GlobalPaused")
}

export const syntheticDeployment = (seed: number): Deployment => {
  const a = (i: number) => address(0xd000 + i, seed)
  return {
    chainId: 130,
    diamond: a(1),
    router: a(2),
    exchange: a(3),
    hookProxy: a(4),
    marketFactory: a(5),
    manualOracle: a(6),
    priceFeedOracle: a(7),
    timelock: a(8),
    paymaster: a(9),
    faucet: a(10),
    testUsdc: a(11),
    poolManager: a(12),
    permit2: a(13),
    deployBlock: 1000
  } as Deployment
}

export const generateSynthetic = async (options: SyntheticOptions): Promise<SyntheticSummary> => {
  const random = prng(options.seed)
  const pick = <T>(list: ReadonlyArray<T>): T => list[Math.floor(random() * list.length)]!
  const between = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1))
  const deployment = syntheticDeployment(options.seed)
  const users = Array.from({ length: options.users ?? 1000 }, (_, i) => address(0xa000, i + 1))
  const maxMarkets = options.maxMarkets ?? 300
  const reorgEvery = options.reorgEvery ?? 3000
  const maxDepth = options.maxReorgDepth ?? 6
  const finalityDepth = options.finalityDepth ?? 64
  const writer = writeRecords(options.out, { level: 1 })
  await writer.write({ t: "meta", version: FORMAT_VERSION, chainId: 130, deployment, source: `synthetic seed=${options.seed}` })

  let state: State = { markets: [], nextOrder: 1 }
  let number = deployment.deployBlock
  let parent = hex32(0, number - 1)
  let fork = 0
  let txCounter = 0
  let logs = 0
  let orphaned = 0
  let reorgs = 0
  let blocks = 0
  const hashes = new Map<number, string>()

  // Per-block log buffer; one action is one transaction.
  let blockLogs: Array<RecordedLog> = []
  let txIndex = 0
  let txHash = ""
  const beginTx = () => {
    txHash = hex32(0xe0000000 + (options.seed & 0xffff), ++txCounter)
  }
  const emit = (emitter: string, log: { topics: ReadonlyArray<string>; data: string }) => {
    blockLogs.push({
      address: emitter,
      topics: log.topics,
      data: log.data,
      logIndex: blockLogs.length,
      transactionHash: txHash,
      transactionIndex: txIndex
    })
  }
  const endTx = () => {
    txIndex++
  }

  const bal = (m: Market, token: 0 | 1, user: string) => m.balances[token].get(user) ?? 0n
  const move = (m: Market, token: 0 | 1, from: string, to: string, value: bigint) => {
    if (value === 0n) return
    if (from !== ZERO) m.balances[token].set(from, bal(m, token, from) - value)
    if (to !== ZERO) m.balances[token].set(to, bal(m, token, to) + value)
    emit(token === 0 ? m.yes : m.no, enc.transfer({ from, to, value }))
  }
  const usdc = (from: string, to: string, value: bigint) => {
    if (value > 0n) emit(deployment.testUsdc, enc.transfer({ from, to, value }))
  }

  const split = (m: Market, user: string, amount: bigint) => {
    usdc(user, deployment.diamond, amount)
    emit(deployment.diamond, enc.split({ marketId: m.id, user, amount }))
    move(m, 0, ZERO, user, amount)
    move(m, 1, ZERO, user, amount)
    m.collateral += amount
  }

  const merge = (m: Market, user: string, amount: bigint) => {
    move(m, 0, user, ZERO, amount)
    move(m, 1, user, ZERO, amount)
    emit(deployment.diamond, enc.merge({ marketId: m.id, user, amount }))
    usdc(deployment.diamond, user, amount)
    m.collateral -= amount
  }

  const createMarket = () => {
    const id = BigInt(state.markets.length + 1)
    const yes = address(0xb000, Number(id) * 2)
    const no = address(0xb000, Number(id) * 2 + 1)
    const yesIsCurrency0 = yes < deployment.testUsdc
    const poolId = hex32(0xc0000000 + (options.seed & 0xffff), Number(id))
    const sqrtP = yesIsCurrency0 ? sqrtBig((Q96 * Q96) / 2n) : sqrtBig(Q96 * Q96 * 2n)
    const m: Market = {
      id,
      yes,
      no,
      poolId,
      yesIsCurrency0,
      collateral: 0n,
      sqrtP,
      liquidity: 0n,
      resolved: false,
      outcome: false,
      refund: false,
      balances: [new Map(), new Map()],
      orders: []
    }
    state.markets.push(m)
    const creator = pick(users)
    beginTx()
    emit(
      deployment.diamond,
      enc.created({
        marketId: id,
        creator,
        oracle: deployment.manualOracle,
        yesToken: yes,
        noToken: no,
        endTime: BigInt(1_800_000_000 + Number(id) * 3600),
        question: `Will synthetic event #${id} happen?`
      })
    )
    const [c0, c1] = yesIsCurrency0 ? [yes, deployment.testUsdc] : [deployment.testUsdc, yes]
    emit(deployment.hookProxy, enc.poolRegistered({ marketId: id, poolId, yesToken: yes, quoteToken: deployment.testUsdc, yesIsCurrency0 }))
    emit(
      deployment.poolManager,
      enc.initialize({
        id: poolId,
        currency0: c0,
        currency1: c1,
        fee: 0x800000,
        tickSpacing: 60,
        hooks: deployment.hookProxy,
        sqrtPriceX96: sqrtP,
        tick: tickOf(sqrtP)
      })
    )
    endTx()
    // Seed liquidity: split S, add S YES and S/2 USDC full-range at 0.5.
    const lp = pick(users)
    const seedAmount = BigInt(between(500, 2000)) * UNIT
    beginTx()
    split(m, lp, seedAmount)
    m.liquidity = sqrtBig(seedAmount * (seedAmount / 2n))
    move(m, 0, lp, deployment.poolManager, seedAmount)
    usdc(lp, deployment.poolManager, seedAmount / 2n)
    emit(
      deployment.poolManager,
      enc.modifyLiquidity({
        id: poolId,
        sender: lp,
        tickLower: -887220,
        tickUpper: 887220,
        liquidityDelta: m.liquidity,
        salt: ZERO32
      })
    )
    endTx()
  }

  /** Exact-in swap on the full-range pool; returns the output amount and moves the price. */
  const ammSwap = (m: Market, buyYes: boolean, amountIn: bigint, trader: string) => {
    const fee = 10_000n
    const net = (amountIn * (UNIT - fee)) / UNIT
    // YES is token0 when yesIsCurrency0; buying YES pays USDC, i.e. token1 in when YES is token0.
    const zeroForOne = m.yesIsCurrency0 ? !buyYes : buyYes
    const before = m.sqrtP
    let out: bigint
    if (zeroForOne) {
      const next = (m.liquidity * Q96 * before) / (m.liquidity * Q96 + net * before)
      out = (m.liquidity * (before - next)) / Q96
      m.sqrtP = next
    } else {
      const next = before + (net * Q96) / m.liquidity
      out = (m.liquidity * Q96 * (next - before)) / (before * next)
      m.sqrtP = next
    }
    const [amount0, amount1] = zeroForOne ? [-amountIn, out] : [out, -amountIn]
    emit(
      deployment.poolManager,
      enc.swap({
        id: m.poolId,
        sender: deployment.router,
        amount0,
        amount1,
        sqrtPriceX96: m.sqrtP,
        liquidity: m.liquidity,
        tick: tickOf(m.sqrtP),
        fee: 10000
      })
    )
    const yesPrice = yesPriceOf(m.sqrtP, m.yesIsCurrency0)
    const [usdcVolume, yesVolume] = buyYes ? [amountIn, out] : [out, amountIn]
    emit(
      deployment.hookProxy,
      enc.marketTraded({ marketId: m.id, trader, isBuy: buyYes, usdcVolume, yesVolume, yesPrice, noPrice: UNIT - yesPrice })
    )
    return out
  }

  /** A router trade of YES: CLOB first against resting orders no worse than the AMM, then the AMM. */
  const routerTrade = (m: Market, user: string, buy: boolean) => {
    const spot = yesPriceOf(m.sqrtP, m.yesIsCurrency0)
    let remaining: bigint
    if (buy) remaining = BigInt(between(5, 200)) * UNIT
    else {
      remaining = bal(m, 0, user) / BigInt(between(2, 5))
      if (remaining < UNIT) return false
    }
    const amountIn = remaining
    beginTx()
    buy ? usdc(user, deployment.router, amountIn) : move(m, 0, user, deployment.router, amountIn)
    // Resting makers on the other side: SELL_YES asks at or below spot for a buy, BUY_YES bids at or above for a sell.
    const makers = m.orders
      .filter((o) => (buy ? o.side === 1 && o.price <= spot : o.side === 0 && o.price >= spot))
      .sort((a, b) => (buy ? Number(a.price - b.price) : Number(b.price - a.price)))
    let clobOut = 0n
    let clobIn = 0n
    let matches = 0
    for (const order of makers) {
      if (remaining === 0n || matches >= 10) break
      // For a buy, `remaining` is USDC: shares = USDC / price. For a sell, it is shares.
      const shares = buy ? (remaining * UNIT) / order.price : remaining
      const fill = shares < order.remaining ? shares : order.remaining
      if (fill === 0n) break
      const cost = (fill * order.price) / UNIT
      order.remaining -= fill
      matches++
      emit(
        deployment.exchange,
        enc.matched({
          makerOrderId: order.id,
          takerOrderId: ZERO32,
          marketId: m.id,
          matchType: 0,
          amount: fill,
          price: order.price,
          makerBuilder: ZERO32,
          takerBuilder: ZERO32
        })
      )
      if (buy) {
        // The maker's locked YES goes to the router; the router's USDC to the maker.
        move(m, 0, deployment.exchange, deployment.router, fill)
        usdc(deployment.router, order.owner, cost)
        clobOut += fill
        clobIn += cost
        remaining -= cost
      } else {
        move(m, 0, deployment.router, order.owner, fill)
        usdc(deployment.exchange, deployment.router, cost)
        clobOut += cost
        clobIn += fill
        remaining -= fill
      }
    }
    m.orders.splice(0, m.orders.length, ...m.orders.filter((o) => o.remaining > 0n))
    if (matches > 0) {
      emit(
        deployment.exchange,
        enc.takerFilled({
          marketId: m.id,
          taker: deployment.router,
          recipient: deployment.router,
          takerSide: buy ? 0 : 1,
          totalFilled: clobOut,
          totalCost: clobIn,
          matchCount: BigInt(matches)
        })
      )
    }
    let ammOut = 0n
    if (remaining > 0n) {
      ammOut = ammSwap(m, buy, remaining, user)
      if (buy) {
        usdc(deployment.router, deployment.poolManager, remaining)
        move(m, 0, deployment.poolManager, deployment.router, ammOut)
      } else {
        move(m, 0, deployment.router, deployment.poolManager, remaining)
        usdc(deployment.poolManager, deployment.router, ammOut)
      }
    }
    const amountOut = clobOut + ammOut
    buy ? move(m, 0, deployment.router, user, amountOut) : usdc(deployment.router, user, amountOut)
    emit(
      deployment.router,
      enc.trade({
        marketId: m.id,
        trader: user,
        recipient: user,
        tradeType: buy ? 0 : 1,
        amountIn,
        amountOut,
        clobFilled: clobOut,
        ammFilled: ammOut
      })
    )
    endTx()
    return true
  }

  const placeOrder = (m: Market, user: string) => {
    const spot = Number(yesPriceOf(m.sqrtP, m.yesIsCurrency0) / 10_000n)
    const sell = random() < 0.5
    const amount = BigInt(between(1, 50)) * UNIT
    if (sell && bal(m, 0, user) < amount) return false
    const tick = sell ? Math.min(99, spot + between(-2, 4)) : Math.max(1, spot - between(-2, 4))
    const price = BigInt(Math.max(1, Math.min(99, tick))) * 10_000n
    const order: Order = {
      id: hex32(0xf0000000 + (options.seed & 0xffff), state.nextOrder++),
      owner: user,
      side: sell ? 1 : 0,
      price,
      remaining: amount
    }
    beginTx()
    sell ? move(m, 0, user, deployment.exchange, amount) : usdc(user, deployment.exchange, (amount * price) / UNIT)
    emit(
      deployment.exchange,
      enc.placed({ orderId: order.id, marketId: m.id, owner: user, side: order.side, price, amount, builder: ZERO32 })
    )
    endTx()
    m.orders.push(order)
    return true
  }

  const cancelOrder = (m: Market) => {
    const order = m.orders[Math.floor(random() * m.orders.length)]
    if (order === undefined) return false
    beginTx()
    emit(deployment.exchange, enc.cancelled({ orderId: order.id }))
    order.side === 1
      ? move(m, 0, deployment.exchange, order.owner, order.remaining)
      : usdc(deployment.exchange, order.owner, (order.remaining * order.price) / UNIT)
    endTx()
    m.orders.splice(m.orders.indexOf(order), 1)
    return true
  }

  /** Closes a market: resolution and a few redemptions, or refund mode and a few refunds. */
  const closeMarket = (m: Market) => {
    beginTx()
    for (const order of m.orders) {
      emit(deployment.exchange, enc.cancelled({ orderId: order.id }))
      order.side === 1
        ? move(m, 0, deployment.exchange, order.owner, order.remaining)
        : usdc(deployment.exchange, order.owner, (order.remaining * order.price) / UNIT)
    }
    m.orders.length = 0
    endTx()
    beginTx()
    if (random() < 0.9) {
      m.resolved = true
      m.outcome = random() < 0.5
      emit(deployment.manualOracle, enc.reported({ marketId: m.id, outcome: m.outcome, reporter: users[0] }))
      emit(deployment.diamond, enc.resolved({ marketId: m.id, outcome: m.outcome, resolver: users[0] }))
    } else {
      m.refund = true
      emit(deployment.diamond, enc.refundMode({ marketId: m.id, enabler: users[0] }))
    }
    endTx()
  }

  const settle = (m: Market, user: string) => {
    const yes = bal(m, 0, user)
    const no = bal(m, 1, user)
    if (yes === 0n && no === 0n) return false
    beginTx()
    if (m.resolved) {
      const [winning, losing] = m.outcome ? [yes, no] : [no, yes]
      const fee = (winning * 200n) / 10_000n
      move(m, 0, user, ZERO, yes)
      move(m, 1, user, ZERO, no)
      emit(
        deployment.diamond,
        enc.redeemed({ marketId: m.id, user, winningBurned: winning, losingBurned: losing, fee, payout: winning - fee })
      )
      usdc(deployment.diamond, user, winning - fee)
      usdc(deployment.diamond, FEE_RECIPIENT, fee)
      m.collateral -= winning
    } else {
      const pairs = yes < no ? yes : no
      if (pairs === 0n) {
        endTx()
        return false
      }
      move(m, 0, user, ZERO, pairs)
      move(m, 1, user, ZERO, pairs)
      emit(deployment.diamond, enc.refunded({ marketId: m.id, user, yesBurned: pairs, noBurned: pairs, payout: pairs }))
      usdc(deployment.diamond, user, pairs)
      m.collateral -= pairs
    }
    endTx()
    return true
  }

  /** One transaction's worth of activity, chosen by a weighted draw. */
  const act = () => {
    const live = state.markets.filter((m) => !m.resolved && !m.refund)
    if (live.length < 5 || (state.markets.length < maxMarkets && random() < 0.002)) return createMarket()
    const roll = random()
    const m = pick(live)
    const user = pick(users)
    // Buyers are likelier when YES is cheap: prices wander but keep away from the bounds.
    if (roll < 0.45) return routerTrade(m, user, random() * 1e6 > Number(yesPriceOf(m.sqrtP, m.yesIsCurrency0)))
    if (roll < 0.57) {
      beginTx()
      split(m, user, BigInt(between(1, 100)) * UNIT)
      return endTx()
    }
    if (roll < 0.62) {
      const pairs = bal(m, 0, user) < bal(m, 1, user) ? bal(m, 0, user) : bal(m, 1, user)
      if (pairs < UNIT) return
      beginTx()
      merge(m, user, pairs / 2n)
      return endTx()
    }
    if (roll < 0.8) return placeOrder(m, user)
    if (roll < 0.86) return cancelOrder(m)
    if (roll < 0.93) {
      const from = pick([...m.balances[1].keys()].filter((u) => bal(m, 1, u) > 0n && u.startsWith("0xa000")))
      if (from === undefined) return
      beginTx()
      move(m, 1, from, user, bal(m, 1, from) / 2n)
      return endTx()
    }
    if (roll < 0.935) return closeMarket(m)
    const closed = state.markets.filter((x) => x.resolved || x.refund)
    if (closed.length > 0 && roll < 0.99) {
      const c = pick(closed)
      const holder = pick([...c.balances[0].keys(), ...c.balances[1].keys()].filter((u) => u.startsWith("0xa000")))
      if (holder !== undefined) return settle(c, holder)
      return
    }
    beginTx()
    if (random() < 0.5) emit(deployment.diamond, enc.roleGranted({ role: hex32(0x0f, between(1, 5)), account: user, sender: users[0] }))
    else emit(deployment.diamond, enc.globalPaused({ account: users[0] }))
    endTx()
  }

  const bloomBitsOf = memoizedBloomBits()
  const makeBlock = (): BlockRecord => {
    blockLogs = []
    txIndex = 0
    const actions = between(1, 5)
    for (let i = 0; i < actions; i++) act()
    const hash = hex32(fork, number)
    // Its bloom, as a node's header would carry it (every log of the block): computed once here,
    // not by the replay node at each request for the header.
    const logsBloom = bloomOf(blockLogs, bloomBitsOf)
    const block: BlockRecord = {
      t: "block",
      number,
      hash,
      parentHash: parent,
      timestamp: 1_750_000_000 + number,
      logs: blockLogs,
      logsBloom
    }
    return block
  }

  const writeBlock = async (block: BlockRecord) => {
    await writer.write(block)
    hashes.set(block.number, block.hash)
    hashes.delete(block.number - 128)
    parent = block.hash
    number = block.number + 1
    blocks++
  }

  while (logs + orphaned < options.events) {
    if (reorgEvery > 0 && random() < 1 / reorgEvery && number - deployment.deployBlock > maxDepth + 1) {
      // Blocks that will be orphaned, generated from a copy of the state that is then dropped.
      const depth = between(1, maxDepth)
      const saved = structuredClone(state)
      const start = number
      for (let i = 0; i < depth; i++) {
        const block = makeBlock()
        orphaned += block.logs.length
        await writeBlock(block)
      }
      state = saved
      fork++
      number = start
      parent = hashes.get(start - 1)!
      reorgs++
    }
    const block = makeBlock()
    logs += block.logs.length
    await writeBlock(block)
    if (number % 100 === 0 && number - finalityDepth > deployment.deployBlock) {
      await writer.write({ t: "finalized", number: number - 1 - finalityDepth })
    }
  }
  await writer.close()
  return { blocks, logs, orphanedLogs: orphaned, reorgs, markets: state.markets.length, deployment }
}
