/**
 * Reads of the admin history tables (`role_change`, `pause_change`, `diamond_cut`, `fee_change`,
 * `hook_upgrade`): append-only, keyed by (block_number, log_index), listed newest first.
 */
import { SqlClient } from "@effect/sql"
import type { Statement } from "@effect/sql"
import { Effect } from "effect"
import { FacetCutAction } from "../../schema/enums.js"
import type { Address, Bytes32, Hex } from "../../schema/primitives.js"
import { chainPosition, chainPositionColumns, type ChainPositionRow } from "./records.js"
import { listPage, read, type Paging } from "../core/db.js"
import { bigint, bool, json, nullable, oneOf, rowDecoder, text, time, type Column, type RowOf } from "../core/rows.js"

export const FEE_KINDS = ["DEFAULT_REDEMPTION_FEE", "MARKET_CREATION_FEE", "FEE_RECIPIENT", "MARKET_REDEMPTION_FEE"] as const
export const PAUSE_SCOPES = ["GLOBAL", "MODULE", "HOOK", "EXCHANGE"] as const

/** The records of these reads (decoded rows: bigint amounts, lowercase addresses and hashes). */
export interface FeeChangeParams {
  readonly limit: number
  readonly offset: number
  readonly kind?: "DEFAULT_REDEMPTION_FEE" | "MARKET_CREATION_FEE" | "FEE_RECIPIENT" | "MARKET_REDEMPTION_FEE"
  readonly marketId?: bigint
}

export interface PauseParams {
  readonly limit: number
  readonly offset: number
  readonly scope?: "GLOBAL" | "MODULE" | "HOOK" | "EXCHANGE"
}

export interface RoleChangeParams {
  readonly account?: Address
  readonly role?: Bytes32
  readonly action?: "GRANTED" | "REVOKED"
  readonly limit: number
  readonly offset: number
}

/**
 * The list of one history `table` with its own `columns` beside the chain position: a page
 * (newest first) of the rows matching `where`, each decoded and mapped by `toRecord`.
 */
const history = <C extends Readonly<Record<string, Column<unknown>>>, A>(
  table: string,
  columns: C,
  toRecord: (row: ChainPositionRow & RowOf<C>) => A
) => {
  const decode = rowDecoder({ ...chainPositionColumns, ...columns })
  const select = `block_number, log_index, tx_hash, timestamp, ${Object.keys(columns).join(", ")}`
  return (where: (sql: SqlClient.SqlClient) => Statement.Fragment, paging: Paging) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      listPage(
        {
          select,
          from: sql`${sql.literal(table)} where ${where(sql)}`,
          orderBy: "block_number desc, log_index desc",
          record: (row) => toRecord(decode(row) as ChainPositionRow & RowOf<C>)
        },
        paging
      )
    ).pipe(read)
}

const roleChanges = history(
  "role_change",
  { role: text<Bytes32>(), account: text<Address>(), sender: text<Address>(), action: oneOf("GRANTED", "REVOKED") },
  (row) => ({ ...chainPosition(row), role: row.role, account: row.account, sender: row.sender, action: row.action })
)

export const listRoleChanges = (query: RoleChangeParams) =>
  roleChanges(
    (sql) =>
      sql.and([
        ...(query.account === undefined ? [] : [sql`account = ${query.account}`]),
        ...(query.role === undefined ? [] : [sql`role = ${query.role}`]),
        ...(query.action === undefined ? [] : [sql`action = ${query.action}`])
      ]),
    query
  )

const pauses = history(
  "pause_change",
  { scope: oneOf(...PAUSE_SCOPES), module_id: nullable(text<Bytes32>()), paused: bool, account: nullable(text<Address>()) },
  (row) => ({ ...chainPosition(row), scope: row.scope, moduleId: row.module_id, paused: row.paused, account: row.account })
)

export const listPauses = (query: PauseParams) =>
  pauses((sql) => sql.and(query.scope === undefined ? [] : [sql`scope = ${query.scope}`]), query)

type StoredCut = { readonly facetAddress: string; readonly action: number; readonly functionSelectors: ReadonlyArray<string> }

const diamondCuts = history("diamond_cut", { cuts: json<ReadonlyArray<StoredCut>>(), init: text<Address>(), data: text<Hex>() }, (row) => ({
  ...chainPosition(row),
  cuts: row.cuts.map((cut) => ({
    facetAddress: cut.facetAddress.toLowerCase() as Address,
    action: FacetCutAction.names[cut.action] ?? "Add",
    functionSelectors: cut.functionSelectors.map((s) => s.toLowerCase())
  })),
  init: row.init,
  data: row.data
}))

export const listDiamondCuts = (query: Paging) => diamondCuts((sql) => sql.and([]), query)

const feeChanges = history(
  "fee_change",
  {
    kind: oneOf(...FEE_KINDS),
    market_id: nullable(bigint),
    previous_value: nullable(text()),
    new_value: text(),
    overridden: nullable(bool)
  },
  (row) => ({
    ...chainPosition(row),
    kind: row.kind,
    marketId: row.market_id,
    previousValue: row.previous_value,
    newValue: row.new_value,
    overridden: row.overridden
  })
)

export const listFeeChanges = (query: FeeChangeParams) =>
  feeChanges(
    (sql) =>
      sql.and([
        ...(query.kind === undefined ? [] : [sql`kind = ${query.kind}`]),
        ...(query.marketId === undefined ? [] : [sql`market_id = ${query.marketId.toString()}::numeric`])
      ]),
    query
  )

const hookUpgrades = history(
  "hook_upgrade",
  { action: oneOf("PROPOSED", "EXECUTED", "CANCELLED"), implementation: text<Address>(), ready_at: nullable(time) },
  (row) => ({ ...chainPosition(row), action: row.action, implementation: row.implementation, readyAt: row.ready_at })
)

export const listHookUpgrades = (query: Paging) => hookUpgrades((sql) => sql.and([]), query)
