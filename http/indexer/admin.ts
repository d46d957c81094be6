/** The five admin histories, newest first (block, log index descending). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { IndexerList } from "../../schema/envelopes.js"
import { IndexerInvalidAddress, IndexerInvalidMarketId } from "../../schema/errors.js"
import { FacetCutAction } from "../../schema/enums.js"
import { Address, Bytes32, Hex, Timestamp, Uint256 } from "../../schema/primitives.js"
import { addressParam, bytes32Param, literalParam, marketIdParam, optional, page, PageQuery, strictQuery } from "../core/params.js"
import { chainPositionFields } from "./records.js"
import { FEE_KINDS, PAUSE_SCOPES } from "../read/admin.js"

export { FEE_KINDS, PAUSE_SCOPES }

export const RoleChange = Schema.Struct({
  ...chainPositionFields,
  role: Bytes32,
  account: Address,
  sender: Address,
  action: Schema.Literal("GRANTED", "REVOKED")
}).annotations({ identifier: "RoleChange", title: "Role change", description: "a RoleGranted or RoleRevoked of the diamond" })

export const PauseChange = Schema.Struct({
  ...chainPositionFields,
  scope: Schema.Literal(...PAUSE_SCOPES),
  moduleId: Schema.NullOr(Bytes32).annotations({ description: "the module of a MODULE pause" }),
  paused: Schema.Boolean,
  account: Schema.NullOr(Address)
}).annotations({
  identifier: "PauseChange",
  title: "Pause change",
  description: "a pause or unpause (diamond globally, a diamond module, the hook, or the exchange)"
})

export const DiamondCut = Schema.Struct({
  ...chainPositionFields,
  cuts: Schema.Array(
    Schema.Struct({
      facetAddress: Address,
      action: FacetCutAction.Name,
      functionSelectors: Schema.Array(Schema.String.pipe(Schema.pattern(/^0x[0-9a-f]{8}$/)))
    })
  ),
  init: Address,
  data: Hex
}).annotations({ identifier: "DiamondCut", title: "Diamond cut", description: "a DiamondCut of the diamond" })

export const FeeChange = Schema.Struct({
  ...chainPositionFields,
  kind: Schema.Literal(...FEE_KINDS),
  marketId: Schema.NullOr(Uint256).annotations({ description: "the market of a MARKET_REDEMPTION_FEE" }),
  previousValue: Schema.NullOr(Schema.String).annotations({ description: "as emitted: basis points, raw USDC units or an address" }),
  newValue: Schema.String,
  overridden: Schema.NullOr(Schema.Boolean)
}).annotations({ identifier: "FeeChange", title: "Fee change", description: "a change of a fee setting or of the fee recipient" })

export const HookUpgrade = Schema.Struct({
  ...chainPositionFields,
  action: Schema.Literal("PROPOSED", "EXECUTED", "CANCELLED"),
  implementation: Address,
  readyAt: Schema.NullOr(Timestamp).annotations({ description: "when a proposed upgrade may execute" })
}).annotations({
  identifier: "HookUpgrade",
  title: "Hook upgrade",
  description: "a proposal, execution or cancellation of a hook implementation upgrade"
})

export const RoleChangeQuery = strictQuery({
  account: optional(addressParam("account", "only changes of this account's roles")),
  role: optional(bytes32Param("role", "only changes of this role")),
  action: optional(literalParam("action", ["GRANTED", "REVOKED"], "only grants or only revocations")),
  ...page
})
export type RoleChangeQuery = typeof RoleChangeQuery.Type

export const PauseQuery = strictQuery({
  scope: optional(literalParam("scope", PAUSE_SCOPES, "only pauses of this scope")),
  ...page
})
export type PauseQuery = typeof PauseQuery.Type

export const FeeChangeQuery = strictQuery({
  kind: optional(literalParam("kind", FEE_KINDS, "only changes of this kind")),
  marketId: optional(marketIdParam("marketId", "only per-market changes of this market")),
  ...page
})
export type FeeChangeQuery = typeof FeeChangeQuery.Type

export class AdminGroup extends HttpApiGroup.make("admin")
  .add(
    HttpApiEndpoint.get("roleChanges", "/api/admin/role-changes")
      .setUrlParams(RoleChangeQuery)
      .addSuccess(IndexerList(RoleChange))
      .addError(IndexerInvalidAddress.wire)
      .annotate(OpenApi.Summary, "Role grants and revocations")
  )
  .add(
    HttpApiEndpoint.get("pauses", "/api/admin/pauses")
      .setUrlParams(PauseQuery)
      .addSuccess(IndexerList(PauseChange))
      .annotate(OpenApi.Summary, "Pauses and unpauses")
  )
  .add(
    HttpApiEndpoint.get("diamondCuts", "/api/admin/diamond-cuts")
      .setUrlParams(PageQuery)
      .addSuccess(IndexerList(DiamondCut))
      .annotate(OpenApi.Summary, "Diamond cuts")
  )
  .add(
    HttpApiEndpoint.get("feeChanges", "/api/admin/fee-changes")
      .setUrlParams(FeeChangeQuery)
      .addSuccess(IndexerList(FeeChange))
      .addError(IndexerInvalidMarketId.wire)
      .annotate(OpenApi.Summary, "Fee setting changes")
  )
  .add(
    HttpApiEndpoint.get("hookUpgrades", "/api/admin/hook-proxy-upgrades")
      .setUrlParams(PageQuery)
      .addSuccess(IndexerList(HookUpgrade))
      .annotate(OpenApi.Summary, "Hook implementation upgrades")
  ) {}
