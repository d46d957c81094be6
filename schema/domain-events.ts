/**
 * Typed domain events: what reducers consume, independent of which ABI variant a log used.
 *
 * Invariants every member keeps:
 * - uint64 and wider integers (amounts, ids, prices, sqrtPriceX96, liquidity) are `bigint`, never
 *   `number`; unsigned ones are non-negative.
 * - addresses are lowercase `0x` + 40 hex; bytes32/bytes4/bytes values are lowercase hex.
 * - uint8 enum codes, uint16 basis points and the int24/uint24 pool tick/fee fields are numbers.
 * - a field a variant does not carry is `null`, except where it is derivable (Hook_MarketTraded
 *   noPrice = 1e6 - yesPrice, since yesPrice is clamped to [0, 1e6] on-chain).
 *
 * Tags are the on-chain event names, except the price-feed oracle's MarketResolved, which is
 * `PriceFeedMarketResolved` so it cannot be confused with the diamond's MarketResolved, and the
 * exchange's Paused/Unpaused, which are `ExchangePaused`/`ExchangeUnpaused` (the names say whose).
 */
import { Schema } from "effect"

export const EvmAddress = Schema.String.pipe(
  Schema.pattern(/^0x[0-9a-f]{40}$/),
  Schema.annotations({ identifier: "EvmAddress", description: "lowercase 20-byte address" })
)
export const Bytes32 = Schema.String.pipe(
  Schema.pattern(/^0x[0-9a-f]{64}$/),
  Schema.annotations({ identifier: "Bytes32", description: "lowercase 32-byte hex" })
)
export const Bytes4 = Schema.String.pipe(
  Schema.pattern(/^0x[0-9a-f]{8}$/),
  Schema.annotations({ identifier: "Bytes4", description: "lowercase 4-byte hex" })
)
export const HexBytes = Schema.String.pipe(
  Schema.pattern(/^0x(?:[0-9a-f]{2})*$/),
  Schema.annotations({ identifier: "HexBytes", description: "lowercase hex of any byte length" })
)
/** Any unsigned ABI integer of 64 bits or more. */
export const UintBig = Schema.NonNegativeBigIntFromSelf
/** Any signed ABI integer of 128 bits or more. */
export const IntBig = Schema.BigIntFromSelf
const Int24 = Schema.Int.pipe(Schema.between(-(2 ** 23), 2 ** 23 - 1))
const Uint24 = Schema.Int.pipe(Schema.between(0, 2 ** 24 - 1))
const Uint16 = Schema.Int.pipe(Schema.between(0, 2 ** 16 - 1))

/** Router TradeType: BUY_YES=0, SELL_YES=1, BUY_NO=2, SELL_NO=3. */
export const TradeTypeCode = Schema.Literal(0, 1, 2, 3)
/** Exchange Side: BUY_YES=0, SELL_YES=1, BUY_NO=2, SELL_NO=3. */
export const SideCode = Schema.Literal(0, 1, 2, 3)
/** Exchange MatchType: COMPLEMENTARY=0, MINT=1, MERGE=2. */
export const MatchTypeCode = Schema.Literal(0, 1, 2)
/** EIP-2535 FacetCutAction: Add=0, Replace=1, Remove=2. */
export const FacetCutActionCode = Schema.Literal(0, 1, 2)

// Router

/** The only source of volume and trade counts. builder is null where the router predates builder codes. */
export const Trade = Schema.TaggedStruct("Trade", {
  marketId: UintBig,
  trader: EvmAddress,
  recipient: EvmAddress,
  tradeType: TradeTypeCode,
  amountIn: UintBig,
  amountOut: UintBig,
  clobFilled: UintBig,
  ammFilled: UintBig,
  builder: Schema.NullOr(Bytes32)
})
export const DustRefunded = Schema.TaggedStruct("DustRefunded", {
  recipient: EvmAddress,
  token: EvmAddress,
  amount: UintBig
})
export const ClobSkipped = Schema.TaggedStruct("ClobSkipped", {
  marketId: UintBig,
  recipient: EvmAddress,
  reason: Bytes4
})

// Exchange

export const OrderPlaced = Schema.TaggedStruct("OrderPlaced", {
  orderId: Bytes32,
  marketId: UintBig,
  owner: EvmAddress,
  side: SideCode,
  price: UintBig,
  amount: UintBig,
  builder: Schema.NullOr(Bytes32)
})
export const OrderMatched = Schema.TaggedStruct("OrderMatched", {
  makerOrderId: Bytes32,
  takerOrderId: Bytes32,
  marketId: UintBig,
  matchType: MatchTypeCode,
  amount: UintBig,
  price: UintBig,
  makerBuilder: Schema.NullOr(Bytes32),
  takerBuilder: Schema.NullOr(Bytes32)
})
export const OrderCancelled = Schema.TaggedStruct("OrderCancelled", {
  orderId: Bytes32
})
export const TakerFilled = Schema.TaggedStruct("TakerFilled", {
  marketId: UintBig,
  taker: EvmAddress,
  recipient: EvmAddress,
  takerSide: SideCode,
  totalFilled: UintBig,
  totalCost: UintBig,
  matchCount: UintBig
})
export const FeeCollected = Schema.TaggedStruct("FeeCollected", {
  marketId: UintBig,
  amount: UintBig
})
/** The exchange's Paused(address indexed account) / Unpaused: the book neither takes nor fills orders. */
export const ExchangePaused = Schema.TaggedStruct("ExchangePaused", {
  account: EvmAddress
})
export const ExchangeUnpaused = Schema.TaggedStruct("ExchangeUnpaused", {
  account: EvmAddress
})

// Market facet

export const MarketCreated = Schema.TaggedStruct("MarketCreated", {
  marketId: UintBig,
  creator: EvmAddress,
  oracle: EvmAddress,
  yesToken: EvmAddress,
  noToken: EvmAddress,
  endTime: UintBig,
  question: Schema.String
})
export const PositionSplit = Schema.TaggedStruct("PositionSplit", {
  marketId: UintBig,
  user: EvmAddress,
  amount: UintBig
})
export const PositionMerged = Schema.TaggedStruct("PositionMerged", {
  marketId: UintBig,
  user: EvmAddress,
  amount: UintBig
})
/** Resolution through the market's oracle (emitted by the diamond). */
export const MarketResolved = Schema.TaggedStruct("MarketResolved", {
  marketId: UintBig,
  outcome: Schema.Boolean,
  resolver: EvmAddress
})
export const MarketEmergencyResolved = Schema.TaggedStruct("MarketEmergencyResolved", {
  marketId: UintBig,
  outcome: Schema.Boolean,
  resolver: EvmAddress
})
export const TokensRedeemed = Schema.TaggedStruct("TokensRedeemed", {
  marketId: UintBig,
  user: EvmAddress,
  winningBurned: UintBig,
  losingBurned: UintBig,
  fee: UintBig,
  payout: UintBig
})
export const RefundModeEnabled = Schema.TaggedStruct("RefundModeEnabled", {
  marketId: UintBig,
  enabler: EvmAddress
})
export const MarketRefunded = Schema.TaggedStruct("MarketRefunded", {
  marketId: UintBig,
  user: EvmAddress,
  yesBurned: UintBig,
  noBurned: UintBig,
  payout: UintBig
})
export const UnclaimedSwept = Schema.TaggedStruct("UnclaimedSwept", {
  marketId: UintBig,
  recipient: EvmAddress,
  amount: UintBig
})
export const PerMarketRedemptionFeeUpdated = Schema.TaggedStruct("PerMarketRedemptionFeeUpdated", {
  marketId: UintBig,
  bps: Uint16,
  overridden: Schema.Boolean
})
export const OracleApproved = Schema.TaggedStruct("OracleApproved", {
  oracle: EvmAddress
})
export const OracleRevoked = Schema.TaggedStruct("OracleRevoked", {
  oracle: EvmAddress
})
export const DefaultRedemptionFeeUpdated = Schema.TaggedStruct("DefaultRedemptionFeeUpdated", {
  previousBps: Uint16,
  newBps: Uint16
})
export const MarketCreationFeeUpdated = Schema.TaggedStruct("MarketCreationFeeUpdated", {
  previousFee: UintBig,
  newFee: UintBig
})
export const FeeRecipientUpdated = Schema.TaggedStruct("FeeRecipientUpdated", {
  previousRecipient: EvmAddress,
  newRecipient: EvmAddress
})

// Event facet

/** oracle is null for the deployed form, which does not carry it. */
export const EventCreated = Schema.TaggedStruct("EventCreated", {
  eventId: UintBig,
  creator: EvmAddress,
  endTime: UintBig,
  name: Schema.String,
  marketIds: Schema.Array(UintBig),
  oracle: Schema.NullOr(EvmAddress)
})
/** winningIndex is null for the spec form, which does not carry it. */
export const EventResolved = Schema.TaggedStruct("EventResolved", {
  eventId: UintBig,
  winningIndex: Schema.NullOr(UintBig),
  resolver: EvmAddress
})
/** enabler is null for the spec form, which does not carry it. */
export const EventRefundModeEnabled = Schema.TaggedStruct("EventRefundModeEnabled", {
  eventId: UintBig,
  enabler: Schema.NullOr(EvmAddress)
})

// Hook and hook proxy

export const Hook_PoolRegistered = Schema.TaggedStruct("Hook_PoolRegistered", {
  marketId: UintBig,
  poolId: Bytes32,
  yesToken: EvmAddress,
  quoteToken: EvmAddress,
  yesIsCurrency0: Schema.Boolean
})
/** Feeds price snapshots only, never volume. yesPrice + noPrice == 1_000_000n. */
export const Hook_MarketTraded = Schema.TaggedStruct("Hook_MarketTraded", {
  marketId: UintBig,
  trader: EvmAddress,
  isBuy: Schema.Boolean,
  usdcVolume: UintBig,
  yesVolume: UintBig,
  yesPrice: UintBig,
  noPrice: UintBig
})
export const Hook_ReferralRecorded = Schema.TaggedStruct("Hook_ReferralRecorded", {
  marketId: UintBig,
  referrer: EvmAddress,
  trader: EvmAddress,
  usdcVolume: UintBig
})
export const Hook_PauseStatusChanged = Schema.TaggedStruct("Hook_PauseStatusChanged", {
  paused: Schema.Boolean
})
export const Hook_UpgradeProposed = Schema.TaggedStruct("Hook_UpgradeProposed", {
  implementation: EvmAddress,
  readyAt: UintBig
})
export const Hook_Upgraded = Schema.TaggedStruct("Hook_Upgraded", {
  implementation: EvmAddress
})
export const Hook_UpgradeCancelled = Schema.TaggedStruct("Hook_UpgradeCancelled", {
  implementation: EvmAddress
})

// Manual oracle

export const OutcomeReported = Schema.TaggedStruct("OutcomeReported", {
  marketId: UintBig,
  outcome: Schema.Boolean,
  reporter: EvmAddress
})
export const OutcomeRevoked = Schema.TaggedStruct("OutcomeRevoked", {
  marketId: UintBig,
  admin: EvmAddress
})
export const ReportReopened = Schema.TaggedStruct("ReportReopened", {
  marketId: UintBig,
  admin: EvmAddress
})
export const ChallengeDelayUpdated = Schema.TaggedStruct("ChallengeDelayUpdated", {
  previous: UintBig,
  current: UintBig
})
export const EventOutcomeReported = Schema.TaggedStruct("EventOutcomeReported", {
  eventId: UintBig,
  winningIndex: UintBig,
  reporter: EvmAddress
})
export const EventOutcomeRevoked = Schema.TaggedStruct("EventOutcomeRevoked", {
  eventId: UintBig,
  admin: EvmAddress
})
export const EventReportReopened = Schema.TaggedStruct("EventReportReopened", {
  eventId: UintBig,
  admin: EvmAddress
})

// Price-feed oracle

export const MarketRegistered = Schema.TaggedStruct("MarketRegistered", {
  marketId: UintBig,
  feed: EvmAddress,
  threshold: IntBig,
  gte: Schema.Boolean,
  snapshotAt: UintBig
})
/** The price-feed oracle's MarketResolved (same on-chain name as the diamond's). */
export const PriceFeedMarketResolved = Schema.TaggedStruct("PriceFeedMarketResolved", {
  marketId: UintBig,
  price: IntBig,
  outcome: Schema.Boolean
})
export const MarketUnregistered = Schema.TaggedStruct("MarketUnregistered", {
  marketId: UintBig
})

// Diamond admin

export const RoleGranted = Schema.TaggedStruct("RoleGranted", {
  role: Bytes32,
  account: EvmAddress,
  sender: EvmAddress
})
export const RoleRevoked = Schema.TaggedStruct("RoleRevoked", {
  role: Bytes32,
  account: EvmAddress,
  sender: EvmAddress
})
export const FacetCut = Schema.Struct({
  facetAddress: EvmAddress,
  action: FacetCutActionCode,
  functionSelectors: Schema.Array(Bytes4)
})
export const DiamondCut = Schema.TaggedStruct("DiamondCut", {
  cuts: Schema.Array(FacetCut),
  init: EvmAddress,
  data: HexBytes
})
export const GlobalPaused = Schema.TaggedStruct("GlobalPaused", {
  account: EvmAddress
})
export const GlobalUnpaused = Schema.TaggedStruct("GlobalUnpaused", {
  account: EvmAddress
})
/** moduleId is the spec's `module` parameter (keccak of e.g. "predix.module.market"). */
export const ModulePaused = Schema.TaggedStruct("ModulePaused", {
  moduleId: Bytes32,
  account: EvmAddress
})
export const ModuleUnpaused = Schema.TaggedStruct("ModuleUnpaused", {
  moduleId: Bytes32,
  account: EvmAddress
})

// Outcome token (ERC-20)

export const Transfer = Schema.TaggedStruct("Transfer", {
  from: EvmAddress,
  to: EvmAddress,
  value: UintBig
})
export const Approval = Schema.TaggedStruct("Approval", {
  owner: EvmAddress,
  spender: EvmAddress,
  value: UintBig
})

// Pool manager (Uniswap v4)

export const Initialize = Schema.TaggedStruct("Initialize", {
  id: Bytes32,
  currency0: EvmAddress,
  currency1: EvmAddress,
  fee: Uint24,
  tickSpacing: Int24,
  hooks: EvmAddress,
  sqrtPriceX96: UintBig,
  tick: Int24
})
export const Swap = Schema.TaggedStruct("Swap", {
  id: Bytes32,
  sender: EvmAddress,
  amount0: IntBig,
  amount1: IntBig,
  sqrtPriceX96: UintBig,
  liquidity: UintBig,
  tick: Int24,
  fee: Uint24
})
export const ModifyLiquidity = Schema.TaggedStruct("ModifyLiquidity", {
  id: Bytes32,
  sender: EvmAddress,
  tickLower: Int24,
  tickUpper: Int24,
  liquidityDelta: IntBig,
  salt: Bytes32
})

export const DomainEvent = Schema.Union(
  Trade,
  DustRefunded,
  ClobSkipped,
  OrderPlaced,
  OrderMatched,
  OrderCancelled,
  TakerFilled,
  FeeCollected,
  ExchangePaused,
  ExchangeUnpaused,
  MarketCreated,
  PositionSplit,
  PositionMerged,
  MarketResolved,
  MarketEmergencyResolved,
  TokensRedeemed,
  RefundModeEnabled,
  MarketRefunded,
  UnclaimedSwept,
  PerMarketRedemptionFeeUpdated,
  OracleApproved,
  OracleRevoked,
  DefaultRedemptionFeeUpdated,
  MarketCreationFeeUpdated,
  FeeRecipientUpdated,
  EventCreated,
  EventResolved,
  EventRefundModeEnabled,
  Hook_PoolRegistered,
  Hook_MarketTraded,
  Hook_ReferralRecorded,
  Hook_PauseStatusChanged,
  Hook_UpgradeProposed,
  Hook_Upgraded,
  Hook_UpgradeCancelled,
  OutcomeReported,
  OutcomeRevoked,
  ReportReopened,
  ChallengeDelayUpdated,
  EventOutcomeReported,
  EventOutcomeRevoked,
  EventReportReopened,
  MarketRegistered,
  PriceFeedMarketResolved,
  MarketUnregistered,
  RoleGranted,
  RoleRevoked,
  DiamondCut,
  GlobalPaused,
  GlobalUnpaused,
  ModulePaused,
  ModuleUnpaused,
  Transfer,
  Approval,
  Initialize,
  Swap,
  ModifyLiquidity
).annotations({ identifier: "DomainEvent" })
export type DomainEvent = typeof DomainEvent.Type

export type DomainTag = DomainEvent["_tag"]
export type DomainEventOf<T extends DomainTag> = Extract<DomainEvent, { readonly _tag: T }>
