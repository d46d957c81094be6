/**
 * The event catalog: one entry per (contract kind, ABI variant), each tying an ABI to its
 * canonical signature, topic0, topic count and domain event.
 *
 * Routing a log: emitting contract kind first, then topic0, then topic count. The contract kind
 * must come first because two contracts emit different events under one name (`MarketResolved`),
 * and the topic count last because a deployed variant may differ from the spec form only in an
 * indexed flag (`ModulePaused`, `RoleGranted`, `RoleRevoked`), which keeps topic0 and moves a
 * parameter from data to topics. Within one contract kind (topic0, topic count) is unique; that
 * is checked when this module loads.
 */
import { keccak256, stringToBytes, toEventSignature, type AbiEvent, type Hex } from "viem"
import { deployedEvents as d, specEvents as s } from "./abi.js"
import type { Component } from "./components.js"
import type { DomainEvent, DomainEventOf, DomainTag } from "./domain-events.js"

export const CONTRACT_KINDS = [
  "router",
  "exchange",
  "marketFacet",
  "eventFacet",
  "diamondAdmin",
  "hook",
  "hookProxy",
  "manualOracle",
  "priceFeedOracle",
  "outcomeToken",
  "poolManager"
] as const
export type ContractKind = (typeof CONTRACT_KINDS)[number]

/**
 * The contract kinds whose events a deployed component's address emits. The diamond hosts three
 * facet kinds and the hook runs behind its proxy, so one address can carry several kinds; outcome
 * tokens are not components (their addresses come from MarketCreated).
 */
export const COMPONENT_KINDS: { readonly [C in Component]?: ReadonlyArray<ContractKind> } = {
  diamond: ["marketFacet", "eventFacet", "diamondAdmin"],
  router: ["router"],
  exchange: ["exchange"],
  hookProxy: ["hook", "hookProxy"],
  manualOracle: ["manualOracle"],
  priceFeedOracle: ["priceFeedOracle"],
  poolManager: ["poolManager"]
}

/** "spec": the spec's event table form. "deployed": what deployed contracts emit beyond it. */
export type Variant = "spec" | "deployed"

/** Decoded event arguments keyed by parameter name, as viem's `decodeEventLog` returns them. */
export type DecodedArgs = Readonly<Record<string, unknown>>

export interface CatalogEntry<T extends DomainTag = DomainTag> {
  readonly contract: ContractKind
  /** On-chain event name (not unique across contracts: see `domain`). */
  readonly name: string
  /** Canonical signature: name and parameter types, no names, no `indexed`, tuples expanded. */
  readonly signature: string
  /** keccak256 of `signature`, lowercase hex. */
  readonly topic0: Hex
  readonly variant: Variant
  /** A log of this entry has exactly `1 + indexedCount` topics. */
  readonly indexedCount: number
  readonly abi: AbiEvent
  readonly domain: T
  /**
   * Pure: decoded arguments to the domain event. Addresses and hex values are lowercased; fields
   * the variant lacks are derived or null. Throws on a missing argument (the args do not come
   * from this entry's ABI).
   */
  readonly toDomain: (args: DecodedArgs) => DomainEventOf<T>
}

/** 1.0 in the protocol's 1e6 price scale. */
const PRICE_UNIT = 1_000_000n

interface Row {
  readonly contract: ContractKind
  readonly variant: Variant
  readonly abi: AbiEvent
  readonly domain: DomainTag
  /** ABI parameter name -> domain field name, where they differ. */
  readonly rename?: Readonly<Record<string, string>>
  /** Domain fields this variant does not carry, from the fields it does. */
  readonly complete?: (fields: Readonly<Record<string, unknown>>) => Record<string, unknown>
}

type Mapping = Pick<Row, "rename" | "complete"> & { readonly domain?: DomainTag }

/** A row whose domain tag is the on-chain name unless `mapping.domain` says otherwise. */
function row(contract: ContractKind, variant: Variant, abi: AbiEvent & { readonly name: DomainTag }, mapping?: Mapping): Row
function row(contract: ContractKind, variant: Variant, abi: AbiEvent, mapping: Mapping & { readonly domain: DomainTag }): Row
function row(contract: ContractKind, variant: Variant, abi: AbiEvent, { domain, ...mapping }: Mapping = {}): Row {
  return { contract, variant, abi, domain: domain ?? (abi.name as DomainTag), ...mapping }
}

const noBuilder: Mapping = { complete: () => ({ builder: null }) }

/** The whole catalog. Every ABI in `abi.ts` appears exactly once. */
const ROWS: ReadonlyArray<Row> = [
  row("router", "spec", s.router.Trade, noBuilder),
  row("router", "deployed", d.router.TradeWithBuilder),
  row("router", "spec", s.router.DustRefunded),
  row("router", "spec", s.router.ClobSkipped),

  row("exchange", "spec", s.exchange.OrderPlaced),
  row("exchange", "deployed", d.exchange.OrderPlacedWithoutBuilder, noBuilder),
  row("exchange", "spec", s.exchange.OrderMatched),
  row("exchange", "deployed", d.exchange.OrderMatchedWithoutBuilders, {
    complete: () => ({ makerBuilder: null, takerBuilder: null })
  }),
  row("exchange", "spec", s.exchange.OrderCancelled),
  row("exchange", "spec", s.exchange.TakerFilled),
  row("exchange", "spec", s.exchange.FeeCollected),
  row("exchange", "deployed", d.exchange.Paused, { domain: "ExchangePaused" }),
  row("exchange", "deployed", d.exchange.Unpaused, { domain: "ExchangeUnpaused" }),

  row("marketFacet", "spec", s.marketFacet.MarketCreated),
  row("marketFacet", "spec", s.marketFacet.PositionSplit),
  row("marketFacet", "spec", s.marketFacet.PositionMerged),
  row("marketFacet", "spec", s.marketFacet.MarketResolved),
  row("marketFacet", "spec", s.marketFacet.MarketEmergencyResolved),
  row("marketFacet", "spec", s.marketFacet.TokensRedeemed),
  row("marketFacet", "spec", s.marketFacet.RefundModeEnabled),
  row("marketFacet", "spec", s.marketFacet.MarketRefunded),
  row("marketFacet", "deployed", d.marketFacet.UnclaimedSwept),
  row("marketFacet", "deployed", d.marketFacet.PerMarketRedemptionFeeUpdated),
  row("marketFacet", "deployed", d.marketFacet.OracleApproved),
  row("marketFacet", "deployed", d.marketFacet.OracleRevoked),
  row("marketFacet", "deployed", d.marketFacet.DefaultRedemptionFeeUpdated),
  row("marketFacet", "deployed", d.marketFacet.MarketCreationFeeUpdated),
  row("marketFacet", "deployed", d.marketFacet.FeeRecipientUpdated),

  row("eventFacet", "spec", s.eventFacet.EventCreated),
  row("eventFacet", "deployed", d.eventFacet.EventCreatedWithoutOracle, { complete: () => ({ oracle: null }) }),
  row("eventFacet", "spec", s.eventFacet.EventResolved, { complete: () => ({ winningIndex: null }) }),
  row("eventFacet", "deployed", d.eventFacet.EventResolvedWithWinningIndex),
  row("eventFacet", "spec", s.eventFacet.EventRefundModeEnabled, { complete: () => ({ enabler: null }) }),
  row("eventFacet", "deployed", d.eventFacet.EventRefundModeEnabledWithEnabler),

  row("diamondAdmin", "spec", s.diamondAdmin.RoleGranted),
  row("diamondAdmin", "deployed", d.diamondAdmin.RoleGrantedSenderIndexed),
  row("diamondAdmin", "spec", s.diamondAdmin.RoleRevoked),
  row("diamondAdmin", "deployed", d.diamondAdmin.RoleRevokedSenderIndexed),
  row("diamondAdmin", "spec", s.diamondAdmin.DiamondCut),
  row("diamondAdmin", "spec", s.diamondAdmin.GlobalPaused),
  row("diamondAdmin", "deployed", d.diamondAdmin.GlobalUnpaused),
  row("diamondAdmin", "spec", s.diamondAdmin.ModulePaused, { rename: { module: "moduleId" } }),
  row("diamondAdmin", "deployed", d.diamondAdmin.ModulePausedModuleIndexed),
  row("diamondAdmin", "deployed", d.diamondAdmin.ModuleUnpaused),

  row("hook", "spec", s.hook.Hook_PoolRegistered),
  row("hook", "spec", s.hook.Hook_MarketTraded),
  row("hook", "deployed", d.hook.MarketTradedWithoutNoPrice, {
    // yesPrice is clamped to [0, 1e6] on-chain, so noPrice is never negative.
    complete: ({ yesPrice }) => ({ noPrice: PRICE_UNIT - (yesPrice as bigint) })
  }),
  row("hook", "deployed", d.hook.Hook_ReferralRecorded),
  row("hook", "deployed", d.hook.Hook_PauseStatusChanged),

  row("hookProxy", "deployed", d.hookProxy.Hook_UpgradeProposed),
  row("hookProxy", "deployed", d.hookProxy.Hook_Upgraded),
  row("hookProxy", "deployed", d.hookProxy.Hook_UpgradeCancelled),

  row("manualOracle", "spec", s.manualOracle.OutcomeReported),
  row("manualOracle", "spec", s.manualOracle.OutcomeRevoked),
  row("manualOracle", "spec", s.manualOracle.ReportReopened),
  row("manualOracle", "spec", s.manualOracle.ChallengeDelayUpdated),
  row("manualOracle", "spec", s.manualOracle.EventOutcomeReported),
  row("manualOracle", "spec", s.manualOracle.EventOutcomeRevoked),
  row("manualOracle", "spec", s.manualOracle.EventReportReopened),

  row("priceFeedOracle", "spec", s.priceFeedOracle.MarketRegistered),
  row("priceFeedOracle", "spec", s.priceFeedOracle.MarketResolved, { domain: "PriceFeedMarketResolved" }),
  row("priceFeedOracle", "spec", s.priceFeedOracle.MarketUnregistered),

  row("outcomeToken", "spec", s.outcomeToken.Transfer),
  row("outcomeToken", "spec", s.outcomeToken.Approval),

  row("poolManager", "spec", s.poolManager.Initialize),
  row("poolManager", "spec", s.poolManager.Swap),
  row("poolManager", "spec", s.poolManager.ModifyLiquidity)
]

interface Param {
  readonly name?: string | undefined
  readonly type: string
  readonly components?: ReadonlyArray<Param> | undefined
}

const ARRAY_TYPE = /^(.*)\[\d*\]$/
const identity = (value: unknown): unknown => value
const lowercase = (value: unknown): unknown => (value as string).toLowerCase()

/**
 * The normalizer of one ABI parameter, built once per entry: lowercases addresses and bytes values
 * at any depth (arrays, tuples); every other value passes through unchanged.
 */
const normalizerFor = (param: Param): ((value: unknown) => unknown) => {
  const array = ARRAY_TYPE.exec(param.type)
  if (array !== null) {
    const element = normalizerFor({ type: array[1] ?? "", components: param.components })
    return element === identity ? identity : (value) => (value as ReadonlyArray<unknown>).map(element)
  }
  if (param.type === "tuple") {
    const fields = (param.components ?? []).map((c) => [c.name ?? "", normalizerFor(c)] as const)
    return (value) => {
      const tuple = value as Readonly<Record<string, unknown>>
      return Object.fromEntries(fields.map(([name, normalize]) => [name, normalize(tuple[name])]))
    }
  }
  return param.type === "address" || param.type.startsWith("bytes") ? lowercase : identity
}

const makeToDomain = (r: Row, signature: string) => {
  const fields = r.abi.inputs.map((input) => {
    const name = input.name ?? ""
    return { name, field: r.rename?.[name] ?? name, normalize: normalizerFor(input) }
  })
  return (args: DecodedArgs): DomainEvent => {
    const out: Record<string, unknown> = {}
    for (const { name, field, normalize } of fields) {
      const value = args[name]
      if (value === undefined) throw new Error(`${signature}: decoded args lack "${name}"`)
      out[field] = normalize(value)
    }
    return { ...out, ...r.complete?.(out), _tag: r.domain } as DomainEvent
  }
}

const toEntry = (r: Row): CatalogEntry => {
  const signature = toEventSignature(r.abi)
  return {
    contract: r.contract,
    name: r.abi.name,
    signature,
    topic0: keccak256(stringToBytes(signature)),
    variant: r.variant,
    indexedCount: r.abi.inputs.filter((input) => input.indexed === true).length,
    abi: r.abi,
    domain: r.domain,
    toDomain: makeToDomain(r, signature)
  }
}

export const CATALOG: ReadonlyArray<CatalogEntry> = ROWS.map(toEntry)

const routeKey = (topic0: string, topicCount: number): string => `${topic0.toLowerCase()}/${topicCount}`

const BY_CONTRACT: ReadonlyMap<ContractKind, ReadonlyArray<CatalogEntry>> = new Map(
  CONTRACT_KINDS.map((kind) => [kind, CATALOG.filter((e) => e.contract === kind)])
)

const ROUTES: ReadonlyMap<ContractKind, ReadonlyMap<string, CatalogEntry>> = new Map(
  CONTRACT_KINDS.map((kind) => {
    const routes = new Map<string, CatalogEntry>()
    for (const entry of BY_CONTRACT.get(kind) ?? []) {
      const key = routeKey(entry.topic0, 1 + entry.indexedCount)
      const clash = routes.get(key)
      if (clash !== undefined) {
        throw new Error(`catalog: ${kind} ${clash.signature} and ${entry.signature} share topic0 and topic count`)
      }
      routes.set(key, entry)
    }
    return [kind, routes]
  })
)

/** Every entry of one contract kind, spec forms and deployed variants. */
export const catalogFor = (contract: ContractKind): ReadonlyArray<CatalogEntry> => BY_CONTRACT.get(contract) ?? []

/** The entry a log of `contract` with this topic0 (any case) and topic count decodes with, if any. */
export const lookup = (contract: ContractKind, topic0: string, topicCount: number): CatalogEntry | undefined =>
  ROUTES.get(contract)?.get(routeKey(topic0, topicCount))

/**
 * `lookup` over the kinds one address emits (see COMPONENT_KINDS), first match in order.
 * Callers must pass kinds that never share a route; the catalog test checks this for every
 * component.
 */
export const lookupAny = (contracts: ReadonlyArray<ContractKind>, topic0: string, topicCount: number): CatalogEntry | undefined => {
  for (const contract of contracts) {
    const entry = lookup(contract, topic0, topicCount)
    if (entry !== undefined) return entry
  }
  return undefined
}
