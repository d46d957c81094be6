/**
 * The protocol invariants of protocol-facts section 9, checked over the canonical chain of a
 * recording by decoding every log through the catalog: clobFilled + ammFilled == amountOut per
 * Trade; fee + payout == winningBurned per redemption; equal burns in refunds; a market resolves
 * once and never flips back; outcome tokens minted and burned only in a transaction of the
 * diamond's split, merge, redemption or refund for that market; for a live market YES supply ==
 * NO supply == totalCollateral, for a resolved one totalCollateral == the winning supply.
 */
import { expect } from "vitest"
import { decodeEventLog, type Hex } from "viem"
import { COMPONENT_KINDS, lookupAny, type ContractKind } from "../../schema/catalog.js"
import { COMPONENTS } from "../../schema/components.js"
import type { DomainEvent } from "../../schema/domain-events.js"
import type { BlockRecord } from "../../tools/recording/format.js"
import { ReplayChain } from "../../tools/replay/chain.js"

const ZERO = `0x${"0".repeat(40)}`

export interface Decoded {
  readonly block: number
  readonly tx: string
  readonly address: string
  readonly event: DomainEvent
}

/**
 * Every canonical log of the recording, decoded with viem (strict) as an independent check of
 * the fast decoder. A log of a protocol contract that no entry knows fails; logs of contracts
 * outside the catalog (faucet, timelock, market factory) are skipped.
 */
export const decodeCanonical = async (recording: string): Promise<Array<Decoded>> => {
  const chain = await ReplayChain.load(recording, { finalityDepth: 64 })
  chain.advanceAll()
  const deployment = chain.meta.deployment
  const kinds = new Map<string, ReadonlyArray<ContractKind>>()
  for (const c of COMPONENTS) {
    const k = COMPONENT_KINDS[c]
    if (k !== undefined) kinds.set(deployment[c].toLowerCase(), k)
  }
  // The collateral is an ERC-20 of the same shape: its Transfer and Approval decode alike.
  kinds.set(deployment.testUsdc.toLowerCase(), ["outcomeToken"])
  const decoded: Array<Decoded> = []
  for (let n = deployment.deployBlock; n <= chain.headNumber; n++) {
    const block = chain.blockAt(n) as BlockRecord | undefined
    for (const log of block?.logs ?? []) {
      const routes = kinds.get(log.address.toLowerCase())
      if (routes === undefined) continue
      const entry = lookupAny(routes, log.topics[0]!, log.topics.length)
      if (entry === undefined) throw new Error(`unknown log at block ${n}: ${log.address} ${log.topics[0]}`)
      const args = decodeEventLog({
        abi: [entry.abi],
        topics: log.topics as [Hex, ...Array<Hex>],
        data: log.data as Hex,
        strict: true
      }).args
      const event = entry.toDomain(args as Record<string, unknown>)
      if (event._tag === "MarketCreated") {
        kinds.set(event.yesToken, ["outcomeToken"])
        kinds.set(event.noToken, ["outcomeToken"])
      }
      decoded.push({ block: n, tx: log.transactionHash, address: log.address.toLowerCase(), event })
    }
  }
  return decoded
}

/** Asserts every invariant; returns how many live markets had their supplies checked. */
export const expectProtocolInvariants = (events: ReadonlyArray<Decoded>): number => {
  const markets = new Map<bigint, { yes: string; no: string; collateral: bigint; resolved: boolean; outcome?: boolean }>()
  const supply = new Map<string, bigint>()
  const tokenMarket = new Map<string, bigint>()
  const settlingTx = new Map<string, Set<bigint>>()
  for (const { tx, event } of events) {
    if (["PositionSplit", "PositionMerged", "TokensRedeemed", "MarketRefunded"].includes(event._tag)) {
      const id = (event as { marketId: bigint }).marketId
      if (!settlingTx.has(tx)) settlingTx.set(tx, new Set())
      settlingTx.get(tx)!.add(id)
    }
  }
  const resolve = (marketId: bigint, outcome: boolean) => {
    const m = markets.get(marketId)!
    expect(m.resolved, `market ${marketId} resolves once`).toBe(false)
    m.resolved = true
    m.outcome = outcome
  }
  for (const { tx, address, event } of events) {
    switch (event._tag) {
      case "MarketCreated":
        markets.set(event.marketId, { yes: event.yesToken, no: event.noToken, collateral: 0n, resolved: false })
        tokenMarket.set(event.yesToken, event.marketId)
        tokenMarket.set(event.noToken, event.marketId)
        break
      case "PositionSplit":
        markets.get(event.marketId)!.collateral += event.amount
        break
      case "PositionMerged":
        markets.get(event.marketId)!.collateral -= event.amount
        break
      case "TokensRedeemed":
        expect(event.fee + event.payout).toBe(event.winningBurned)
        markets.get(event.marketId)!.collateral -= event.winningBurned
        break
      case "MarketRefunded":
        expect(event.yesBurned).toBe(event.noBurned)
        markets.get(event.marketId)!.collateral -= event.payout
        break
      case "UnclaimedSwept":
        markets.get(event.marketId)!.collateral -= event.amount
        break
      case "MarketResolved":
      case "MarketEmergencyResolved":
        resolve(event.marketId, event.outcome)
        break
      case "Trade":
        expect(event.clobFilled + event.ammFilled).toBe(event.amountOut)
        break
      case "Transfer": {
        const market = tokenMarket.get(address)
        if (market === undefined) break
        if (event.from === ZERO || event.to === ZERO) {
          expect(settlingTx.get(tx)?.has(market), `mint/burn of ${address} in ${tx} settles market ${market}`).toBe(true)
        }
        if (event.from === ZERO) supply.set(address, (supply.get(address) ?? 0n) + event.value)
        if (event.to === ZERO) supply.set(address, (supply.get(address) ?? 0n) - event.value)
        break
      }
    }
  }
  let live = 0
  for (const [id, m] of markets) {
    const yes = supply.get(m.yes) ?? 0n
    const no = supply.get(m.no) ?? 0n
    if (!m.resolved) {
      expect(yes, `market ${id}: YES supply == NO supply`).toBe(no)
      expect(m.collateral, `market ${id}: collateral == supply`).toBe(yes)
      live++
    } else {
      expect(m.collateral, `market ${id}: collateral == winning supply`).toBe(m.outcome ? yes : no)
    }
  }
  return live
}
