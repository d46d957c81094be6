/**
 * A market's AMM: its pool state (`/amm-state`) and its liquidity book (`/liquidity`, liquidity
 * per tick range). Pools count only once registered through Hook_PoolRegistered (rule 5).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { IndexerItem, IndexerList } from "../../schema/envelopes.js"
import { IndexerInvalidMarketId, IndexerMarketNotFound } from "../../schema/errors.js"
import { Address, BlockNumber, Bytes32, Price, Timestamp, Uint256 } from "../../schema/primitives.js"
import { MarketPath, NoQuery, PageQuery } from "../core/params.js"
import { Count } from "./records.js"

export const AmmState = Schema.Struct({
  poolId: Bytes32,
  marketId: Uint256,
  yesToken: Address,
  quoteToken: Address,
  yesIsCurrency0: Schema.Boolean,
  initialized: Schema.Boolean,
  sqrtPriceX96: Schema.NullOr(Uint256).annotations({ description: "current sqrt price (Q64.96); null before Initialize" }),
  liquidity: Uint256.annotations({ description: "in-range liquidity (uint128)" }),
  tick: Schema.NullOr(Schema.Int),
  fee: Schema.NullOr(Schema.Int).annotations({ description: "fee field of the pool key (0x800000 = dynamic fee)" }),
  tickSpacing: Schema.NullOr(Schema.Int),
  yesPrice: Schema.NullOr(Price).annotations({ description: "YES price implied by sqrtPriceX96, clamped to 0..1; null before Initialize" }),
  registeredAt: Timestamp,
  registeredBlock: BlockNumber,
  updatedAt: Timestamp,
  updatedBlock: BlockNumber
}).annotations({ identifier: "AmmState", title: "AMM state", description: "the AMM pool of a market" })
export type AmmState = typeof AmmState.Type

export const LiquidityRange = Schema.Struct({
  poolId: Bytes32,
  tickLower: Schema.Int,
  tickUpper: Schema.Int,
  liquidity: Uint256.annotations({ description: "sum of the liquidity of the positions on this range" }),
  positions: Count,
  inRange: Schema.Boolean.annotations({ description: "whether the pool's current tick is within [tickLower, tickUpper)" })
}).annotations({ identifier: "LiquidityRange", title: "Liquidity range", description: "AMM liquidity provided on one tick range" })
export type LiquidityRange = typeof LiquidityRange.Type

export class MarketAmmGroup extends HttpApiGroup.make("marketAmm")
  .add(
    HttpApiEndpoint.get("ammState", "/api/markets/:id/amm-state")
      .setPath(MarketPath)
      .setUrlParams(NoQuery)
      .addSuccess(IndexerItem(AmmState))
      .addError(IndexerMarketNotFound.wire)
      .addError(IndexerInvalidMarketId.wire)
      .annotate(OpenApi.Summary, "AMM pool state (the latest pool registered for the market); NotFound when it has none")
  )
  .add(
    HttpApiEndpoint.get("liquidity", "/api/markets/:id/liquidity")
      .setPath(MarketPath)
      .setUrlParams(PageQuery)
      .addSuccess(IndexerList(LiquidityRange))
      .addError(IndexerMarketNotFound.wire)
      .addError(IndexerInvalidMarketId.wire)
      .annotate(OpenApi.Summary, "AMM liquidity book: liquidity per tick range of the market's pools, by pool, tickLower, tickUpper")
  ) {}
