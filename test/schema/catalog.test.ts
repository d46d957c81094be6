import { Schema } from "effect"
import * as fc from "fast-check"
import { decodeEventLog, encodeAbiParameters, encodeEventTopics, getAddress, type AbiEvent, type AbiParameter, type Hex } from "viem"
import { arbitraryFor } from "../support/abi-arbitrary.js"
import { describe, expect, it } from "vitest"
import { deployedEvents, specEvents } from "../../schema/abi.js"
import {
  CATALOG,
  COMPONENT_KINDS,
  CONTRACT_KINDS,
  catalogFor,
  lookup,
  lookupAny,
  type CatalogEntry,
  type ContractKind
} from "../../schema/catalog.js"
import { DomainEvent } from "../../schema/domain-events.js"

/** protocol-facts.md section 10, verbatim. */
const SECTION_10 = `
0x3ae83848e878d57cb56c995cfbaa39810ad979078baa4af518e859e250cef17f Trade(uint256,address,address,uint8,uint256,uint256,uint256,uint256)
0x84aec1880d6903db0ea5e2d7e2db07c7b22f4d6ae20bae60a8ba03332367559c Trade(uint256,address,address,uint8,uint256,uint256,uint256,uint256,bytes32)
0x1c0294a3c46fdb126ea70fedce0f087e3beb0210436a16a832f30dcd09bda2f0 DustRefunded(address,address,uint256)
0xf0999b3922dd7909cad83271d4e800820ddc5a00a78c0d9c3b2ea9e3acfa1993 ClobSkipped(uint256,address,bytes4)
0xf49148f5ec88549b0b39cf81e8ba8caf132857bba448f63f4b0a61086d0612fb Hook_MarketTraded(uint256,address,bool,uint256,uint256,uint256)
0xb652983cf3f10707dc20fd047f8044c5c5b1a0ff73bc02142a7a263d5c8ca34a Hook_MarketTraded(uint256,address,bool,uint256,uint256,uint256,uint256)
0x962bd9108f2e96cfabadf18f7a4c0f9c0b9890ac38c83f39eacb2b3e2b0c664f Hook_PoolRegistered(uint256,bytes32,address,address,bool)
0x03c8e3e34c5a2388b23050cf7cabbce74018607a282df197a4f4f9d80ac5ca33 Hook_ReferralRecorded(uint256,address,address,uint256)
0x4825267c739dfc0ece6d24ce3804bf7a731e0594c2cc154f750a82be6c83771a Hook_PauseStatusChanged(bool)
0xce4b00425c273ad3be8302802de4ef8056cbb986d297d571951bf6655f2e4ce6 OrderPlaced(bytes32,uint256,address,uint8,uint256,uint256)
0xa37661258f81527f9eb1715ff17469e0efb44df9564d9b36c042d9bfeb179d4b OrderPlaced(bytes32,uint256,address,uint8,uint256,uint256,bytes32)
0x7a79e2adcc69e149cb548306c9fee6308495a4b836912bbb04b89f5f35464ba0 OrderMatched(bytes32,bytes32,uint256,uint8,uint256,uint256)
0x7225bbc2e7ac20c23c4e39e811907516fd5198165d7adc431aa32a219fb38088 OrderMatched(bytes32,bytes32,uint256,uint8,uint256,uint256,bytes32,bytes32)
0x5152abf959f6564662358c2e52b702259b78bac5ee7842a0f01937e670efcc7d OrderCancelled(bytes32)
0xaf7c505ee772ec188af7067e1f73db08ab028e3d564273442b907742b9c41fa0 FeeCollected(uint256,uint256)
0x83b77bf483a1bcf699302fd640f8810365dc0c4b765e964f8c8e49d1a255eb2c TakerFilled(uint256,address,address,uint8,uint256,uint256,uint256)
0x071b224314c0d7db58b21e5aacc1744950475a98875b18c64acc5f7a23e9fb9c MarketCreated(uint256,address,address,address,address,uint256,string)
0x98e18159e19c0b4f9a629b42f138ce48874ed9387863a101fb30ff57ea36c975 PositionSplit(uint256,address,uint256)
0x2b8d4ca65ab82892af29c0b8dd6ebbed087d322702eb504feabfe7cb1aae2be7 PositionMerged(uint256,address,uint256)
0xc1f7924abfc39d1665019231fb651970dcad9771ce49e084cbb03f4a72a69e3a MarketResolved(uint256,bool,address)
0x06aaf479176262b959df0a0d15a41f092de895a38a0211f23645426177b0deb1 MarketEmergencyResolved(uint256,bool,address)
0xb30eca32075b92b598057bdc2bbf0f2e53531bfeec8c99249e78617530646f98 TokensRedeemed(uint256,address,uint256,uint256,uint256,uint256)
0xc76943b3358aed0d7b5339e18aab7c3c0e35a8ab5c4df9056f9c3d7b7985a9d3 RefundModeEnabled(uint256,address)
0x53d34a93b029abc41bc039108b3340a0ee481193c266785ccd794c451e0aac39 MarketRefunded(uint256,address,uint256,uint256,uint256)
0xcb7efa83662758ad5d7c93d2db7b1d6a79985019a6e15722eb696e534091ef6a UnclaimedSwept(uint256,address,uint256)
0x0e6f801a0dd8fba327d57cab561d1c1b8a933a98c5935b4b95e965f963714cb4 PerMarketRedemptionFeeUpdated(uint256,uint16,bool)
0x5b3cdca76c6068261981710c06c842dd1f61d74b0aebbf58511874f46484e3b6 EventCreated(uint256,address,uint256,string,uint256[])
0x188c1689a728e7697020f5341a38c8338fb4475d41b5bade1ef64d7c4759fe2e EventResolved(uint256,uint256,address)
0xb4822155e762ca046cc86e7befd4b18024cfb9464df10878de0a02e55a5842eb EventRefundModeEnabled(uint256,address)
0x2f9eee696bca67003e09145f73e09809e39bb1f4990b33dc07cc4054751e339e OutcomeReported(uint256,bool,address)
0x598ebe45c80e53e75743ec4dfced6019d1ef15ef7995b38de18303f85314989d OutcomeRevoked(uint256,address)
0xbda2c8bf27aa6ba7863d53ec72e92743907a577b0abab695f60557c4251ffc1b ReportReopened(uint256,address)
0xfed38d4b94efb9208e8f796f2334341babaa8c2337fb58302f7d773f93730bcc ChallengeDelayUpdated(uint256,uint256)
0xaee9f9ba631a95a84fb6623ed1762304ff0178e05f16dc92d97227ee3cc3ee59 EventOutcomeReported(uint256,uint256,address)
0x90fd78bca8d358e47061ec8455c5e9c81d27df9ffcc3d791a23dff17a1fe1f3f EventOutcomeRevoked(uint256,address)
0xac122e3d3b3c412b86772697eb6fde3980b5db8b2da9cda3c7a9ff9425cf2bd4 EventReportReopened(uint256,address)
0xe2cc2306a9814461a32d84301f6b548cddc20403ae9662761800aa56af537a51 MarketRegistered(uint256,address,int256,bool,uint64)
0x69cd9b4286be25bc24a180e33b5ec84e22e056af77c2520601a9682fe9198d9d MarketResolved(uint256,int256,bool)
0xe0edee075d808247cbec19b4f060d498481832fa3224ff31f7cfdbfa0a84ed2b MarketUnregistered(uint256)
0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef Transfer(address,address,uint256)
0xdd466e674ea557f56295e2d0218a125ea4b4f0f6f3307b95f85e6110838d6438 Initialize(bytes32,address,address,uint24,int24,address,uint160,int24)
0x40e9cecb9f5f1f1c5b9c97dec2917b7ee92e57ba5563708daca94dd84ad7112f Swap(bytes32,address,int128,int128,uint160,uint128,int24,uint24)
0xf208f4912782fd25c7f114ca3723a2d5dd6f3bcc3ac8db5af63baa85f711d5ec ModifyLiquidity(bytes32,address,int24,int24,int256,bytes32)
0x55e1c45bbb977793c68540d5f57735eefdb0dcb128b8464b7e60d3067f1375d0 EventCreated(uint256,address,uint256,string,uint256[],address)   (spec form; deployed form has no oracle)
0x48f9ba6619957152d135d6e3545186c6a9de7a5e3ef0ac7cdfa5ddd0e679f4c9 EventResolved(uint256,address)   (spec form; deployed form carries winningIndex)
0xaea85944949391c298143a514237289e5eb7c0e49708b098dba16fa891d7aa89 EventRefundModeEnabled(uint256)   (spec form; deployed form adds enabler)
0x8bc2b99bfe11bf198e76e281430752d814ff2182396d6077862d811084940095 GlobalPaused(address)
0x76c8396a39037125f433c2b7c543fb3e043777e8e7206945ec2de678c7affb52 ModulePaused(bytes32,address)
0x2f8788117e7eff1d82e926ec794901d17c78024a50270940304540a733656f0d RoleGranted(bytes32,address,address)
0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925 Approval(address,address,uint256)
0x8faa70878671ccd212d20771b795c50af8fd3ff6cf27f4bde57e5d4de0aeb673 DiamondCut((address,uint8,bytes4[])[],address,bytes)   (EIP-2535 FacetCut = (address facetAddress, uint8 action, bytes4[] functionSelectors))
`

const VECTORS: ReadonlyArray<{ readonly topic0: string; readonly signature: string }> = SECTION_10.split("\n")
  .map((line) => line.trim())
  .filter((line) => line.length > 0)
  .map((line) => {
    const [topic0 = "", signature = ""] = line.split(/\s+/)
    return { topic0, signature }
  })

/** Section 10 vectors the catalog deliberately does not decode, with the reason. */
const LEFT_OUT: ReadonlyMap<string, string> = new Map()

/**
 * The spec's event tables ("Events" section), parameter names and indexed flags (`*`) as written
 * there; enum types (TradeType, Side, MatchType) as uint8, PoolId as bytes32, FacetCut[] expanded.
 */
const SPEC_TABLES: { readonly [K in ContractKind]?: Readonly<Record<string, string>> } = {
  router: {
    Trade:
      "marketId* uint256, trader* address, recipient* address, tradeType uint8, amountIn uint256, amountOut uint256, clobFilled uint256, ammFilled uint256",
    DustRefunded: "recipient* address, token* address, amount uint256",
    ClobSkipped: "marketId* uint256, recipient* address, reason bytes4"
  },
  exchange: {
    OrderPlaced: "orderId* bytes32, marketId* uint256, owner* address, side uint8, price uint256, amount uint256, builder bytes32",
    OrderMatched:
      "makerOrderId* bytes32, takerOrderId* bytes32, marketId* uint256, matchType uint8, amount uint256, price uint256, makerBuilder bytes32, takerBuilder bytes32",
    OrderCancelled: "orderId* bytes32",
    TakerFilled:
      "marketId* uint256, taker* address, recipient* address, takerSide uint8, totalFilled uint256, totalCost uint256, matchCount uint256",
    FeeCollected: "marketId* uint256, amount uint256"
  },
  marketFacet: {
    MarketCreated:
      "marketId* uint256, creator* address, oracle* address, yesToken address, noToken address, endTime uint256, question string",
    PositionSplit: "marketId* uint256, user* address, amount uint256",
    PositionMerged: "marketId* uint256, user* address, amount uint256",
    MarketResolved: "marketId* uint256, outcome bool, resolver* address",
    MarketEmergencyResolved: "marketId* uint256, outcome bool, resolver* address",
    TokensRedeemed: "marketId* uint256, user* address, winningBurned uint256, losingBurned uint256, fee uint256, payout uint256",
    RefundModeEnabled: "marketId* uint256, enabler* address",
    MarketRefunded: "marketId* uint256, user* address, yesBurned uint256, noBurned uint256, payout uint256"
  },
  eventFacet: {
    EventCreated: "eventId* uint256, creator* address, endTime uint256, name string, marketIds uint256[], oracle address",
    EventResolved: "eventId* uint256, resolver* address",
    EventRefundModeEnabled: "eventId* uint256"
  },
  hook: {
    Hook_PoolRegistered: "marketId* uint256, poolId* bytes32, yesToken address, quoteToken address, yesIsCurrency0 bool",
    Hook_MarketTraded:
      "marketId* uint256, trader* address, isBuy bool, usdcVolume uint256, yesVolume uint256, yesPrice uint256, noPrice uint256"
  },
  manualOracle: {
    OutcomeReported: "marketId* uint256, outcome bool, reporter* address",
    OutcomeRevoked: "marketId* uint256, admin* address",
    ReportReopened: "marketId* uint256, admin* address",
    ChallengeDelayUpdated: "previous uint256, current uint256",
    EventOutcomeReported: "eventId* uint256, winningIndex uint256, reporter* address",
    EventOutcomeRevoked: "eventId* uint256, admin* address",
    EventReportReopened: "eventId* uint256, admin* address"
  },
  priceFeedOracle: {
    MarketRegistered: "marketId* uint256, feed* address, threshold int256, gte bool, snapshotAt uint64",
    MarketResolved: "marketId* uint256, price int256, outcome bool",
    MarketUnregistered: "marketId* uint256"
  },
  diamondAdmin: {
    RoleGranted: "role* bytes32, account* address, sender address",
    RoleRevoked: "role* bytes32, account* address, sender address",
    DiamondCut: "cuts (address facetAddress, uint8 action, bytes4[] functionSelectors)[], init address, data bytes",
    GlobalPaused: "account address",
    ModulePaused: "module bytes32, account address"
  },
  // The spec names these with indexed flags but without types; types are ERC-20's.
  outcomeToken: {
    Transfer: "from* address, to* address, value uint256",
    Approval: "owner* address, spender* address, value uint256"
  },
  // The spec names these without parameter lists; these are Uniswap v4 IPoolManager's.
  poolManager: {
    Initialize:
      "id* bytes32, currency0* address, currency1* address, fee uint24, tickSpacing int24, hooks address, sqrtPriceX96 uint160, tick int24",
    Swap: "id* bytes32, sender* address, amount0 int128, amount1 int128, sqrtPriceX96 uint160, liquidity uint128, tick int24, fee uint24",
    ModifyLiquidity: "id* bytes32, sender* address, tickLower int24, tickUpper int24, liquidityDelta int256, salt bytes32"
  }
}

interface Param {
  readonly name?: string | undefined
  readonly type: string
  readonly indexed?: boolean | undefined
  readonly components?: ReadonlyArray<Param> | undefined
}

const formatType = (param: Param): string =>
  param.type.startsWith("tuple")
    ? `(${(param.components ?? []).map((c) => `${formatType(c)} ${c.name ?? ""}`).join(", ")})${param.type.slice(5)}`
    : param.type

const formatParams = (abi: AbiEvent): string =>
  abi.inputs.map((p) => `${p.name ?? ""}${p.indexed === true ? "*" : ""} ${formatType(p)}`).join(", ")

const entriesOf = (contract: ContractKind, name: string, variant?: "spec" | "deployed") =>
  catalogFor(contract).filter((e) => e.name === name && (variant === undefined || e.variant === variant))

const only = (contract: ContractKind, name: string, variant: "spec" | "deployed", topicCount?: number) => {
  const found = entriesOf(contract, name, variant).filter((e) => topicCount === undefined || 1 + e.indexedCount === topicCount)
  expect(found).toHaveLength(1)
  return found[0] as CatalogEntry
}

/** An encoded log of `entry` carrying `args`, as a node would return it. */
const encodeLog = (entry: CatalogEntry, args: Readonly<Record<string, unknown>>) => {
  const indexed = Object.fromEntries(entry.abi.inputs.filter((p) => p.indexed === true).map((p) => [p.name ?? "", args[p.name ?? ""]]))
  const dataParams = entry.abi.inputs.filter((p) => p.indexed !== true)
  const topics = encodeEventTopics({ abi: [entry.abi], eventName: entry.name, args: indexed } as never) as Array<Hex>
  const data = encodeAbiParameters(dataParams as ReadonlyArray<AbiParameter>, dataParams.map((p) => args[p.name ?? ""]) as never)
  return { topics, data }
}

/** Routes an encoded log like the pipeline does, decodes it with viem and maps it to the domain. */
const roundTrip = (contract: ContractKind, log: { readonly topics: ReadonlyArray<Hex>; readonly data: Hex }) => {
  const topic0 = log.topics[0] ?? "0x"
  const entry = lookup(contract, topic0, log.topics.length)
  if (entry === undefined) throw new Error(`no route for ${contract} ${topic0}/${log.topics.length}`)
  const decoded = decodeEventLog({
    abi: [entry.abi],
    topics: log.topics as [Hex, ...Array<Hex>],
    data: log.data
  })
  const domain = entry.toDomain(decoded.args as unknown as Readonly<Record<string, unknown>>)
  expect(Schema.decodeUnknownSync(DomainEvent)(domain)).toEqual(domain)
  return { entry, domain }
}

/** EIP-55 checksummed (mixed case), as viem decodes them; the domain must hold them lowercase. */
const A = {
  market: getAddress("0x5fbdb2315678afecb367f032d93f642f64180aa3"),
  trader: getAddress("0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266"),
  recipient: getAddress("0x70997970c51812dc3a010c7d01b50e0d17dc79c8"),
  facet: getAddress("0xe7f1725e7734ce288f8367e1bb143e90bb3f0512"),
  oracle: getAddress("0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0")
} as const

describe("topic0 vectors (protocol-facts section 10)", () => {
  it("copies the whole block", () => {
    expect(VECTORS).toHaveLength(51)
    for (const v of VECTORS) expect(v.topic0).toMatch(/^0x[0-9a-f]{64}$/)
  })

  it.each(VECTORS)("$signature", ({ topic0, signature }) => {
    const entries = CATALOG.filter((e) => e.signature === signature)
    if (LEFT_OUT.has(signature)) {
      expect(entries).toHaveLength(0)
      return
    }
    expect(entries.length).toBeGreaterThan(0)
    for (const entry of entries) expect(entry.topic0).toBe(topic0)
  })
})

describe("catalog shape", () => {
  it("every ABI in abi.ts is in the catalog exactly once, with its variant", () => {
    const groups = [
      ["spec", specEvents],
      ["deployed", deployedEvents]
    ] as const
    let count = 0
    for (const [variant, byContract] of groups) {
      for (const [contract, events] of Object.entries(byContract)) {
        for (const abi of Object.values(events) as ReadonlyArray<AbiEvent>) {
          const entries = CATALOG.filter((e) => e.abi === abi)
          expect(entries.map((e) => [e.contract, e.variant])).toEqual([[contract, variant]])
          count++
        }
      }
    }
    expect(CATALOG).toHaveLength(count)
  })

  it("entries are consistent: lowercase topic0, indexedCount from the ABI, name from the ABI", () => {
    for (const e of CATALOG) {
      expect(e.topic0).toMatch(/^0x[0-9a-f]{64}$/)
      expect(e.name).toBe(e.abi.name)
      expect(e.indexedCount).toBe(e.abi.inputs.filter((p) => p.indexed === true).length)
      expect(e.signature.startsWith(`${e.name}(`)).toBe(true)
      expect(e.indexedCount).toBeLessThanOrEqual(3)
    }
  })

  it("every spec-table event is present with variant spec and exactly the spec's parameters", () => {
    for (const contract of CONTRACT_KINDS) {
      const table = SPEC_TABLES[contract] ?? {}
      for (const [name, params] of Object.entries(table)) {
        expect(formatParams(only(contract, name, "spec").abi), `${contract}.${name}`).toBe(params)
      }
      const specNames = catalogFor(contract)
        .filter((e) => e.variant === "spec")
        .map((e) => e.name)
      expect(specNames.sort(), contract).toEqual(Object.keys(table).sort())
    }
  })

  it("no two entries of one contract, or of one component's address, share (topic0, topic count)", () => {
    const groups: Array<ReadonlyArray<ContractKind>> = [...CONTRACT_KINDS.map((k) => [k]), ...Object.values(COMPONENT_KINDS)]
    for (const kinds of groups) {
      const keys = kinds.flatMap((k) => catalogFor(k).map((e) => `${e.topic0}/${1 + e.indexedCount}`))
      expect(new Set(keys).size, kinds.join("+")).toBe(keys.length)
    }
  })

  it("every entry is found by lookup under its own contract only", () => {
    for (const e of CATALOG) {
      expect(lookup(e.contract, e.topic0, 1 + e.indexedCount)).toBe(e)
      expect(lookup(e.contract, e.topic0.toUpperCase().replace("0X", "0x"), 1 + e.indexedCount)).toBe(e)
      expect(lookup(e.contract, e.topic0, 2 + e.indexedCount)?.abi).not.toBe(e.abi)
    }
    const diamondResolved = only("marketFacet", "MarketResolved", "spec")
    const feedResolved = only("priceFeedOracle", "MarketResolved", "spec")
    expect(diamondResolved.domain).toBe("MarketResolved")
    expect(feedResolved.domain).toBe("PriceFeedMarketResolved")
    expect(lookup("priceFeedOracle", diamondResolved.topic0, 3)).toBeUndefined()
    expect(lookup("marketFacet", feedResolved.topic0, 2)).toBeUndefined()
    expect(lookupAny(COMPONENT_KINDS.diamond ?? [], diamondResolved.topic0, 3)).toBe(diamondResolved)
    expect(lookup("router", "0x" + "00".repeat(32), 1)).toBeUndefined()
  })

  it("each deployed variant maps to the same domain event as its spec form", () => {
    // Deployed-only events named after their contract in the domain (the on-chain name says too little).
    const renamed: Readonly<Record<string, string>> = { "exchange.Paused": "ExchangePaused", "exchange.Unpaused": "ExchangeUnpaused" }
    for (const e of CATALOG.filter((e) => e.variant === "deployed")) {
      const spec = entriesOf(e.contract, e.name, "spec")
      if (spec.length > 0) {
        for (const s of spec) expect(e.domain, e.signature).toBe(s.domain)
      } else {
        expect(e.domain, e.signature).toBe(renamed[`${e.contract}.${e.name}`] ?? e.name)
      }
    }
    const variants: Array<[ContractKind, string, number]> = [
      ["router", "Trade", 2],
      ["exchange", "OrderPlaced", 2],
      ["exchange", "OrderMatched", 2],
      ["eventFacet", "EventCreated", 2],
      ["eventFacet", "EventResolved", 2],
      ["eventFacet", "EventRefundModeEnabled", 2],
      ["hook", "Hook_MarketTraded", 2],
      ["diamondAdmin", "ModulePaused", 2],
      ["diamondAdmin", "RoleGranted", 2],
      ["diamondAdmin", "RoleRevoked", 2]
    ]
    for (const [contract, name, count] of variants) {
      const entries = entriesOf(contract, name)
      expect(entries, `${contract}.${name}`).toHaveLength(count)
      expect(new Set(entries.map((e) => e.domain)).size).toBe(1)
    }
  })
})

describe("round trip: encode, route, decode with viem, map to the domain", () => {
  it("Trade, spec form (no builder) and deployed form (builder)", () => {
    const args = {
      marketId: 7n,
      trader: A.trader,
      recipient: A.recipient,
      tradeType: 2,
      amountIn: 25_000_000n,
      amountOut: 49_750_123n,
      clobFilled: 10_000_000n,
      ammFilled: 39_750_123n
    }
    const spec = roundTrip("router", encodeLog(only("router", "Trade", "spec"), args))
    expect(spec.entry.variant).toBe("spec")
    expect(spec.domain).toEqual({
      _tag: "Trade",
      marketId: 7n,
      trader: A.trader.toLowerCase(),
      recipient: A.recipient.toLowerCase(),
      tradeType: 2,
      amountIn: 25_000_000n,
      amountOut: 49_750_123n,
      clobFilled: 10_000_000n,
      ammFilled: 39_750_123n,
      builder: null
    })
    const builder = "0xABCDEF" + "01".repeat(29)
    const deployed = roundTrip("router", encodeLog(only("router", "Trade", "deployed"), { ...args, builder }))
    expect(deployed.entry.topic0.startsWith("0x84aec188")).toBe(true)
    expect(deployed.domain).toEqual({ ...spec.domain, builder: builder.toLowerCase() })
  })

  it("Hook_MarketTraded, deployed 6-field form: noPrice = 1e6 - yesPrice", () => {
    const { entry, domain } = roundTrip(
      "hook",
      encodeLog(only("hook", "Hook_MarketTraded", "deployed"), {
        marketId: 3n,
        trader: A.trader,
        isBuy: true,
        usdcVolume: 1_000_000n,
        yesVolume: 1_604_107n,
        yesPrice: 623_400n
      })
    )
    expect(entry.topic0).toBe("0xf49148f5ec88549b0b39cf81e8ba8caf132857bba448f63f4b0a61086d0612fb")
    expect(domain).toEqual({
      _tag: "Hook_MarketTraded",
      marketId: 3n,
      trader: A.trader.toLowerCase(),
      isBuy: true,
      usdcVolume: 1_000_000n,
      yesVolume: 1_604_107n,
      yesPrice: 623_400n,
      noPrice: 376_600n
    })
  })

  it("EventCreated, spec form (oracle) and deployed form (oracle null)", () => {
    const args = {
      eventId: 2n,
      creator: A.trader,
      endTime: 1_767_225_600n,
      name: "Who wins the Cup? (Ünïcode kept as is)",
      marketIds: [11n, 12n, 13n]
    }
    const expected = {
      _tag: "EventCreated",
      eventId: 2n,
      creator: A.trader.toLowerCase(),
      endTime: 1_767_225_600n,
      name: args.name,
      marketIds: [11n, 12n, 13n]
    }
    const spec = roundTrip("eventFacet", encodeLog(only("eventFacet", "EventCreated", "spec"), { ...args, oracle: A.oracle }))
    expect(spec.domain).toEqual({ ...expected, oracle: A.oracle.toLowerCase() })
    const deployed = roundTrip("eventFacet", encodeLog(only("eventFacet", "EventCreated", "deployed"), args))
    expect(deployed.entry.topic0).toBe("0x5b3cdca76c6068261981710c06c842dd1f61d74b0aebbf58511874f46484e3b6")
    expect(deployed.domain).toEqual({ ...expected, oracle: null })
  })

  it("EventResolved and EventRefundModeEnabled fill what their form lacks with null", () => {
    const resolvedSpec = roundTrip(
      "eventFacet",
      encodeLog(only("eventFacet", "EventResolved", "spec"), { eventId: 2n, resolver: A.oracle })
    )
    expect(resolvedSpec.domain).toEqual({
      _tag: "EventResolved",
      eventId: 2n,
      winningIndex: null,
      resolver: A.oracle.toLowerCase()
    })
    const resolvedDeployed = roundTrip(
      "eventFacet",
      encodeLog(only("eventFacet", "EventResolved", "deployed"), { eventId: 2n, winningIndex: 1n, resolver: A.oracle })
    )
    expect(resolvedDeployed.domain).toEqual({ ...resolvedSpec.domain, winningIndex: 1n })
    const refundSpec = roundTrip("eventFacet", encodeLog(only("eventFacet", "EventRefundModeEnabled", "spec"), { eventId: 4n }))
    expect(refundSpec.domain).toEqual({ _tag: "EventRefundModeEnabled", eventId: 4n, enabler: null })
  })

  it("DiamondCut: tuple array with addresses and selectors lowercased", () => {
    const { domain } = roundTrip(
      "diamondAdmin",
      encodeLog(only("diamondAdmin", "DiamondCut", "spec"), {
        cuts: [
          { facetAddress: A.facet, action: 0, functionSelectors: ["0xA9059CBB", "0x095ea7b3"] },
          { facetAddress: A.market, action: 2, functionSelectors: [] }
        ],
        init: A.oracle,
        data: "0xE1C7392A"
      })
    )
    expect(domain).toEqual({
      _tag: "DiamondCut",
      cuts: [
        { facetAddress: A.facet.toLowerCase(), action: 0, functionSelectors: ["0xa9059cbb", "0x095ea7b3"] },
        { facetAddress: A.market.toLowerCase(), action: 2, functionSelectors: [] }
      ],
      init: A.oracle.toLowerCase(),
      data: "0xe1c7392a"
    })
  })

  it("ModulePaused: same topic0, told apart by topic count, one domain event", () => {
    const moduleId = "0x" + "AB".repeat(32)
    const spec = roundTrip("diamondAdmin", encodeLog(only("diamondAdmin", "ModulePaused", "spec"), { module: moduleId, account: A.trader }))
    const deployed = roundTrip("diamondAdmin", encodeLog(only("diamondAdmin", "ModulePaused", "deployed"), { moduleId, account: A.trader }))
    expect(spec.entry.topic0).toBe(deployed.entry.topic0)
    expect(spec.entry.indexedCount).toBe(0)
    expect(deployed.entry.indexedCount).toBe(1)
    const expected = { _tag: "ModulePaused", moduleId: moduleId.toLowerCase(), account: A.trader.toLowerCase() }
    expect(spec.domain).toEqual(expected)
    expect(deployed.domain).toEqual(expected)
  })

  it("the exchange's Paused/Unpaused: account indexed, ExchangePaused/ExchangeUnpaused in the domain", () => {
    const paused = roundTrip("exchange", encodeLog(only("exchange", "Paused", "deployed"), { account: A.trader }))
    const unpaused = roundTrip("exchange", encodeLog(only("exchange", "Unpaused", "deployed"), { account: A.trader }))
    expect(paused.entry.signature).toBe("Paused(address)")
    expect(paused.entry.topic0).toBe("0x62e78cea01bee320cd4e420270b5ea74000d11b0c9f74754ebdbfc544b05a258")
    expect(unpaused.entry.topic0).toBe("0x5db9ee0a495bf2e6ff9c91a7834c1ba4fdd244a5e8aa4e537bd38aeae4b073aa")
    expect(paused.entry.indexedCount).toBe(1)
    expect(paused.domain).toEqual({ _tag: "ExchangePaused", account: A.trader.toLowerCase() })
    expect(unpaused.domain).toEqual({ _tag: "ExchangeUnpaused", account: A.trader.toLowerCase() })
  })

  it("Swap: negative int128 amounts and a negative tick survive exactly", () => {
    const id = "0x" + "3c".repeat(32)
    const { domain } = roundTrip(
      "poolManager",
      encodeLog(only("poolManager", "Swap", "spec"), {
        id,
        sender: A.market,
        amount0: -(2n ** 127n),
        amount1: 170_141_183_460_469_231_731_687_303_715_884_105_727n,
        sqrtPriceX96: 79_228_162_514_264_337_593_543_950_336n,
        liquidity: 2n ** 128n - 1n,
        tick: -887_272,
        fee: 50_000
      })
    )
    expect(domain).toEqual({
      _tag: "Swap",
      id,
      sender: A.market.toLowerCase(),
      amount0: -(2n ** 127n),
      amount1: 2n ** 127n - 1n,
      sqrtPriceX96: 2n ** 96n,
      liquidity: 2n ** 128n - 1n,
      tick: -887_272,
      fee: 50_000
    })
  })

  it("MarketResolved: the emitting contract decides the domain event", () => {
    const diamond = roundTrip(
      "marketFacet",
      encodeLog(only("marketFacet", "MarketResolved", "spec"), { marketId: 9n, outcome: true, resolver: A.oracle })
    )
    expect(diamond.domain).toEqual({ _tag: "MarketResolved", marketId: 9n, outcome: true, resolver: A.oracle.toLowerCase() })
    const feed = roundTrip(
      "priceFeedOracle",
      encodeLog(only("priceFeedOracle", "MarketResolved", "spec"), { marketId: 9n, price: -5_000_000_000n, outcome: false })
    )
    expect(feed.domain).toEqual({ _tag: "PriceFeedMarketResolved", marketId: 9n, price: -5_000_000_000n, outcome: false })
  })
})

/** The domain value a decoded argument must become: addresses and bytes lowercased at any depth. */
const expectedValue = (param: Param, value: unknown): unknown => {
  const array = /^(.*)\[\d*\]$/.exec(param.type)
  if (array !== null) {
    return (value as ReadonlyArray<unknown>).map((v) => expectedValue({ type: array[1] ?? "", components: param.components }, v))
  }
  if (param.type === "tuple") {
    const obj = value as Record<string, unknown>
    return Object.fromEntries((param.components ?? []).map((c) => [c.name ?? "", expectedValue(c, obj[c.name ?? ""])]))
  }
  if (param.type === "address" || param.type.startsWith("bytes")) return (value as string).toLowerCase()
  return value
}

/** ABI parameters whose domain field has another name. */
const RENAMED: Readonly<Record<string, string>> = { "diamondAdmin/ModulePaused/module": "moduleId" }

describe("every entry round-trips arbitrary arguments into a valid domain event", () => {
  it.each(CATALOG.map((e) => [`${e.contract} ${e.variant} ${e.signature} /${1 + e.indexedCount}`, e] as const))("%s", (_label, entry) => {
    const args = fc.record(
      Object.fromEntries(entry.abi.inputs.map((p) => [p.name ?? "", arbitraryFor(p)])) as Record<string, fc.Arbitrary<unknown>>
    )
    fc.assert(
      fc.property(args, (values) => {
        if (entry.domain === "Hook_MarketTraded" && typeof values.yesPrice === "bigint") {
          // On-chain yesPrice is clamped to [0, 1e6].
          values = { ...values, yesPrice: values.yesPrice % 1_000_001n }
        }
        const { entry: routed, domain } = roundTrip(entry.contract, encodeLog(entry, values))
        expect(routed).toBe(entry)
        expect(domain._tag).toBe(entry.domain)
        expect(Schema.is(DomainEvent)(domain)).toBe(true)
        const fields = domain as unknown as Record<string, unknown>
        for (const p of entry.abi.inputs) {
          const name = p.name ?? ""
          const field = RENAMED[`${entry.contract}/${entry.name}/${name}`] ?? name
          expect(fields[field]).toEqual(expectedValue(p, values[name]))
        }
      }),
      { numRuns: 25 }
    )
  })
})
