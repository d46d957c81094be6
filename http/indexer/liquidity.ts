/**
 * AMM liquidity by provider (`/api/liquidity/positions/{address}`) and the add/remove history
 * (`/api/liquidity/events`). The provider is the ModifyLiquidity sender (the contract that called
 * the pool manager, often a position manager or router, not the end user).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { IndexerList } from "../../schema/envelopes.js"
import { IndexerInvalidAddress, IndexerInvalidMarketId } from "../../schema/errors.js"
import { Address, Bytes32, Int256, Timestamp, Uint256 } from "../../schema/primitives.js"
import { AddressPath, addressParam, literalParam, marketIdParam, optional, page, strictQuery } from "../core/params.js"
import { chainPositionFields } from "./records.js"

export const LiquidityPosition = Schema.Struct({
  poolId: Bytes32,
  marketId: Uint256,
  provider: Address,
  tickLower: Schema.Int,
  tickUpper: Schema.Int,
  salt: Bytes32,
  liquidity: Uint256.annotations({ description: "the position's liquidity (sum of its deltas, positive)" }),
  updatedAt: Timestamp
}).annotations({ identifier: "LiquidityPosition", title: "Liquidity position", description: "an AMM liquidity position" })
export type LiquidityPosition = typeof LiquidityPosition.Type

export const LIQUIDITY_EVENT_TYPES = ["add", "remove"] as const

export const LiquidityEvent = Schema.Struct({
  ...chainPositionFields,
  type: Schema.Literal(...LIQUIDITY_EVENT_TYPES),
  poolId: Bytes32,
  marketId: Uint256,
  provider: Address,
  tickLower: Schema.Int,
  tickUpper: Schema.Int,
  salt: Bytes32,
  liquidityDelta: Int256.annotations({ description: "signed liquidity change: positive adds, negative removes" })
}).annotations({ identifier: "LiquidityEvent", title: "Liquidity event", description: "a ModifyLiquidity of a registered pool" })
export type LiquidityEvent = typeof LiquidityEvent.Type

export const LiquidityPositionQuery = strictQuery({
  marketId: optional(marketIdParam("marketId", "only positions in this market's pools")),
  ...page
})
export type LiquidityPositionQuery = typeof LiquidityPositionQuery.Type

export const LiquidityEventQuery = strictQuery({
  marketId: optional(marketIdParam("marketId", "only events of this market's pools")),
  provider: optional(addressParam("provider", "only events sent by this address")),
  type: optional(literalParam("type", LIQUIDITY_EVENT_TYPES, "only additions or only removals")),
  ...page
})
export type LiquidityEventQuery = typeof LiquidityEventQuery.Type

export class LiquidityGroup extends HttpApiGroup.make("liquidity")
  .add(
    HttpApiEndpoint.get("positions", "/api/liquidity/positions/:address")
      .setPath(AddressPath)
      .setUrlParams(LiquidityPositionQuery)
      .addSuccess(IndexerList(LiquidityPosition))
      .addError(IndexerInvalidAddress.wire)
      .addError(IndexerInvalidMarketId.wire)
      .annotate(OpenApi.Summary, "LP positions of a provider, by market, pool, tickLower, tickUpper, salt")
  )
  .add(
    HttpApiEndpoint.get("events", "/api/liquidity/events")
      .setUrlParams(LiquidityEventQuery)
      .addSuccess(IndexerList(LiquidityEvent))
      .addError(IndexerInvalidAddress.wire)
      .addError(IndexerInvalidMarketId.wire)
      .annotate(OpenApi.Summary, "Liquidity additions and removals, newest first")
  ) {}
