/** Handlers of the admin group. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { IndexerList } from "../../../schema/envelopes.js"
import { DiamondCut, FeeChange, HookUpgrade, PauseChange, RoleChange } from "../admin.js"
import { IndexerApi } from "../definition.js"
import { listDiamondCuts, listFeeChanges, listHookUpgrades, listPauses, listRoleChanges } from "../../read/admin.js"
import { respond } from "../respond.js"

const roles = respond(IndexerList(RoleChange))
const pauses = respond(IndexerList(PauseChange))
const cuts = respond(IndexerList(DiamondCut))
const fees = respond(IndexerList(FeeChange))
const upgrades = respond(IndexerList(HookUpgrade))

export const AdminLive = HttpApiBuilder.group(IndexerApi, "admin", (handlers) =>
  handlers
    .handle("roleChanges", ({ urlParams }) => Effect.flatMap(listRoleChanges(urlParams), roles))
    .handle("pauses", ({ urlParams }) => Effect.flatMap(listPauses(urlParams), pauses))
    .handle("diamondCuts", ({ urlParams }) => Effect.flatMap(listDiamondCuts(urlParams), cuts))
    .handle("feeChanges", ({ urlParams }) => Effect.flatMap(listFeeChanges(urlParams), fees))
    .handle("hookUpgrades", ({ urlParams }) => Effect.flatMap(listHookUpgrades(urlParams), upgrades))
)
