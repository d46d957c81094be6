/**
 * A live devnet that looks like the beta: at start, the catalogue's markets (`beta-catalog.ts`)
 * are launched on the chain unless they are there already, each with AMM liquidity (the factory's
 * seed) and a book on both sides (two resting bids and two resting asks); while the background
 * activity runs, `betaTransitions` moves the short markets on as the chain's clock passes their
 * end times: one resolved by the manual oracle, one by the price feed, one put in refund mode.
 *
 * Invariants:
 * - idempotent across restarts: a market (or the event) is found again by its question (name) in
 *   the MarketCreated (EventCreated) logs after the committed state's head, and only missing ones
 *   are launched; so a restart neither duplicates markets nor moves their ids;
 * - transitions read the chain (end time, report status, resolved/refund flags) and act on the
 *   chain's clock, never the wall clock: anvil time travel drives them in tests, and a restart
 *   picks up where the chain is;
 * - each account sends its own transactions in sequence (one nonce stream each); accounts work in
 *   parallel, so the setup takes a few dozen blocks, not hundreds.
 */
import { createWalletClient, encodeFunctionData, http, maxUint256, parseAbi, parseEventLogs, type TransactionReceipt } from "viem"
import { specEvents } from "../../schema/abi.js"
import { devnetChain, type Address, type DevnetClient } from "./client.js"
import { ADMIN, REPORTER, type Devnet } from "./deploy.js"
import { BETA_EVENT, BETA_MARKETS, type BetaMarketSpec } from "./beta-catalog.js"

const USDC = 1_000_000n
/** The accounts that launch the markets and make their books (the scenario's users and market makers). */
const MAKERS = Array.from({ length: 16 }, (_, i) => i + 2)
/** USDC the factory splits for each new pool (then YES + about half as much USDC become liquidity). */
const POOL_SEED = 3_000n * USDC
/** The resting book each market starts with: YES bids under 0.5 and YES asks over it (prices in millionths). */
const DEPTH = { bids: [450_000n, 420_000n], asks: [550_000n, 580_000n], size: 50n * USDC } as const
const SIDE = { BUY_YES: 0, SELL_YES: 1 } as const
const ZERO32 = `0x${"0".repeat(64)}` as const

const ABI = parseAbi([
  "function createEvent(string name, string[] questions, uint256 endTime, address oracle) returns (uint256)",
  "function report(uint256 marketId, bool outcome)",
  "function finalize(uint256 marketId)",
  "function marketReports(uint256 marketId) view returns (uint8 status, uint256 value, uint256 reportedAt)",
  "function challengeDelay() view returns (uint256)",
  "function register(uint256 marketId, address feed, int256 threshold, bool gte, uint64 snapshotAt)",
  "function resolve(uint256 marketId)",
  "function enableRefundMode(uint256 marketId)"
])
const MARKET_CREATED = specEvents.marketFacet.MarketCreated
const EVENT_CREATED = specEvents.eventFacet.EventCreated
/** ManualOracle's report statuses. */
const REPORT = { NONE: 0, REPORTED: 1 } as const

export interface BetaMarket {
  readonly id: bigint
  readonly spec: BetaMarketSpec
}

export interface Beta {
  readonly markets: ReadonlyArray<BetaMarket>
  readonly event: { readonly id: bigint; readonly members: ReadonlyArray<bigint> }
  /** Markets (and event members) this start launched; 0 when the chain had them all. */
  readonly launched: number
}

/** The ids the background activity trades: the open catalogue markets and the event's members. */
export const betaTradedIds = (beta: Beta): ReadonlyArray<bigint> => [
  ...beta.markets.filter((m) => m.spec.fate.kind === "open").map((m) => m.id),
  ...beta.event.members
]

/** The catalogue's markets and event already on the chain after block `after`, by question (name). */
const findExisting = async (client: DevnetClient, devnet: Devnet, after: number) => {
  const fromBlock = BigInt(after + 1)
  const address = devnet.addresses.diamond
  const markets = new Map<string, bigint>()
  // Nothing after the committed state yet (anvil refuses a range that starts beyond its head).
  if ((await client.public.getBlockNumber()) < fromBlock) return { markets, event: undefined }
  for (const log of await client.public.getLogs({ address, event: MARKET_CREATED, fromBlock }))
    if (!markets.has(log.args.question!)) markets.set(log.args.question!, log.args.marketId!)
  const event = (await client.public.getLogs({ address, event: EVENT_CREATED, fromBlock })).find((l) => l.args.name === BETA_EVENT.name)
  return {
    markets,
    event: event === undefined ? undefined : { id: event.args.eventId!, members: [...event.args.marketIds!] }
  }
}

/** Sends independent calls from one account with consecutive nonces (one block or two), then waits for every receipt. */
const sendAtOnce = async (client: DevnetClient, from: number, calls: ReadonlyArray<{ to: Address; data: `0x${string}` }>) => {
  const wallet = createWalletClient({ account: client.account(from), chain: devnetChain(client.url), transport: http(client.url) })
  let nonce = await client.public.getTransactionCount({ address: client.address(from), blockTag: "pending" })
  const hashes: Array<`0x${string}`> = []
  for (const call of calls) hashes.push(await wallet.sendTransaction({ ...call, nonce: nonce++ }))
  for (const hash of hashes) {
    const receipt = await client.public.waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 30_000 })
    if (receipt.status !== "success") throw new Error(`transaction ${hash} reverted`)
  }
}

/**
 * A call with half again its gas estimate: launches from several accounts land in one block, and
 * an estimate made against the state before that block can fall short inside it (seen: a launch
 * out of gas by a few hundred units).
 */
const sendPadded = async (
  client: DevnetClient,
  from: number,
  contract: string,
  address: Address,
  functionName: string,
  args: ReadonlyArray<unknown>
) => {
  const call = { address, abi: client.abi(contract), functionName, args: [...args], account: client.account(from) } as const
  const gas = await client.public.estimateContractGas(call as never)
  const wallet = createWalletClient({ account: client.account(from), chain: devnetChain(client.url), transport: http(client.url) })
  const hash = await wallet.writeContract({ ...call, gas: (gas * 3n) / 2n } as never)
  const receipt = await client.public.waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 30_000 })
  if (receipt.status !== "success") throw new Error(`${contract}.${functionName} ${hash} reverted`)
  return receipt
}

const marketIdOf = (receipt: TransactionReceipt): bigint => {
  const [created] = parseEventLogs({ abi: [MARKET_CREATED], logs: receipt.logs, eventName: "MarketCreated" })
  if (created === undefined) throw new Error(`no MarketCreated in ${receipt.transactionHash}`)
  return created.args.marketId
}

/**
 * Launches whatever of the catalogue the chain lacks (markets created after block `after`, the
 * committed state's head, are searched) and gives each new market its book; returns every
 * catalogue market's id and the event's.
 */
export const setUpBeta = async (
  client: DevnetClient,
  devnet: Devnet,
  options: { readonly after: number; readonly log?: (line: string) => void }
): Promise<Beta> => {
  const a = devnet.addresses
  const existing = await findExisting(client, devnet, options.after)
  const missing = BETA_MARKETS.filter((spec) => !existing.markets.has(spec.question))
  const ids = new Map(existing.markets)
  let launched = 0
  if (missing.length === 0 && existing.event !== undefined) return assemble(ids, existing.event, launched)

  // The chain's clock: its head's time, or the wall clock when the head is older (a fresh start
  // loads a state months old, and anvil stamps the next block with the wall clock).
  const headTime = BigInt(await client.timestamp())
  const wallTime = BigInt(Math.floor(Date.now() / 1000))
  const now = headTime > wallTime ? headTime : wallTime
  // Every maker holds enough test USDC for two pools and their books, whatever the scenario left it.
  const mint = client.abi("TestUsdc")
  await sendAtOnce(
    client,
    ADMIN,
    MAKERS.map((maker) => ({
      to: a.testUsdc,
      data: encodeFunctionData({ abi: mint, functionName: "mint", args: [client.address(maker), 20_000n * USDC] })
    }))
  )
  let event = existing.event
  const jobs: Array<{ readonly spec?: BetaMarketSpec; readonly member?: bigint }> = missing.map((spec) => ({ spec }))
  if (event === undefined) {
    const receipt = await client.sendRaw(
      ADMIN,
      a.diamond,
      encodeFunctionData({
        abi: ABI,
        functionName: "createEvent",
        args: [BETA_EVENT.name, BETA_EVENT.outcomes.map((o) => o.question), now + BigInt(BETA_EVENT.days) * 86_400n, a.manualOracle]
      })
    )
    const [created] = parseEventLogs({ abi: [EVENT_CREATED], logs: receipt.logs, eventName: "EventCreated" })
    event = { id: created!.args.eventId, members: [...created!.args.marketIds] }
    for (const member of event.members) jobs.push({ member })
  }
  const endOf = (spec: BetaMarketSpec) => now + (spec.fate.kind === "open" ? BigInt(spec.fate.days) * 86_400n : BigInt(spec.fate.seconds))
  // The depth of one market, placed by `maker` (who first splits USDC into the YES it asks with).
  const makeBook = async (maker: number, id: bigint, yes: Address) => {
    await client.send(maker, "MarketFacet", a.diamond, "splitPosition", [id, 2n * DEPTH.size])
    await client.send(maker, "TestUsdc", yes, "approve", [a.exchange, maxUint256])
    for (const price of DEPTH.asks)
      await sendPadded(client, maker, "Exchange", a.exchange, "placeOrder", [id, SIDE.SELL_YES, price, DEPTH.size, ZERO32])
    for (const price of DEPTH.bids)
      await sendPadded(client, maker, "Exchange", a.exchange, "placeOrder", [id, SIDE.BUY_YES, price, DEPTH.size, ZERO32])
  }
  const work = async (maker: number, mine: ReadonlyArray<(typeof jobs)[number]>) => {
    for (const spender of [a.marketFactory, a.diamond, a.exchange])
      await client.send(maker, "TestUsdc", a.testUsdc, "approve", [spender, maxUint256])
    for (const job of mine) {
      let id: bigint
      if (job.spec !== undefined) {
        const spec = job.spec
        const feed = spec.fate.kind === "feed"
        const end = endOf(spec)
        id = marketIdOf(
          await sendPadded(client, maker, "MarketFactory", a.marketFactory, "launch", [
            spec.question,
            end,
            feed ? a.priceFeedOracle : a.manualOracle,
            POOL_SEED
          ])
        )
        ids.set(spec.question, id)
        if (spec.fate.kind === "feed")
          await client.sendRaw(
            ADMIN,
            a.priceFeedOracle,
            encodeFunctionData({ abi: ABI, functionName: "register", args: [id, a.priceFeed, spec.fate.threshold, true, end] })
          )
      } else {
        id = job.member!
        await sendPadded(client, maker, "MarketFactory", a.marketFactory, "seedPool", [id, POOL_SEED])
      }
      launched++
      const [yes] = await client.read<readonly [Address, Address]>("MarketFacet", a.diamond, "marketTokens", [id])
      await makeBook(maker, id, yes.toLowerCase() as Address)
    }
  }
  // Round robin over the makers; at most one price-feed market, so ADMIN's one registration never races another of its sends.
  await Promise.all(
    MAKERS.map((maker, i) =>
      work(
        maker,
        jobs.filter((_, j) => j % MAKERS.length === i)
      )
    )
  )
  options.log?.(`beta: launched ${launched} markets`)
  return assemble(ids, event, launched)
}

const assemble = (ids: ReadonlyMap<string, bigint>, event: Beta["event"], launched: number): Beta => ({
  markets: BETA_MARKETS.map((spec) => ({ id: ids.get(spec.question)!, spec })),
  event,
  launched
})

/**
 * One pass over the short markets: whatever the chain's clock allows is done (report, finalize,
 * price-feed resolve, refund mode). Returns how many transactions it sent.
 */
export const betaTransitions = async (client: DevnetClient, devnet: Devnet, beta: Beta): Promise<number> => {
  const a = devnet.addresses
  const now = BigInt(await client.timestamp())
  let sent = 0
  for (const { id, spec } of beta.markets) {
    if (spec.fate.kind === "open") continue
    const market = await client.read<{ endTime: bigint; resolved: boolean; refund: boolean }>("MarketFacet", a.diamond, "getMarket", [id])
    if (market.resolved || market.refund || now < market.endTime) continue
    if (spec.fate.kind === "refund") {
      await client.sendRaw(ADMIN, a.diamond, encodeFunctionData({ abi: ABI, functionName: "enableRefundMode", args: [id] }))
    } else if (spec.fate.kind === "feed") {
      await client.sendRaw(REPORTER, a.priceFeedOracle, encodeFunctionData({ abi: ABI, functionName: "resolve", args: [id] }))
    } else {
      const [status, , reportedAt] = await client.public.readContract({
        address: a.manualOracle,
        abi: ABI,
        functionName: "marketReports",
        args: [id]
      })
      if (status === REPORT.NONE) {
        await client.sendRaw(REPORTER, a.manualOracle, encodeFunctionData({ abi: ABI, functionName: "report", args: [id, true] }))
      } else if (status === REPORT.REPORTED) {
        const delay = await client.public.readContract({ address: a.manualOracle, abi: ABI, functionName: "challengeDelay" })
        if (now < reportedAt + delay) continue
        await client.sendRaw(REPORTER, a.manualOracle, encodeFunctionData({ abi: ABI, functionName: "finalize", args: [id] }))
      } else continue
    }
    sent++
  }
  return sent
}
