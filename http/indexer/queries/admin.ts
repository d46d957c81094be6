/**
 * Reads of the admin history tables (`role_change`, `pause_change`, `diamond_cut`, `fee_change`,
 * `hook_upgrade`): append-only, keyed by (block_number, log_index), listed newest first.
 */
import { SqlClient } from "@effect/sql"
import type { Statement } from "@effect/sql"
import { Effect } from "effect"
import { FacetCutAction } from "../../../schema/enums.js"
import type { Address, Bytes32, Hex } from "../../../schema/primitives.js"
import type { FeeChangeQuery, PauseQuery, RoleChangeQuery } from "../admin.js"
import { chainPosition, toTimeInt, type ChainPositionRow } from "../records.js"
import { pageOf, read } from "./db.js"

interface Paging {
  readonly limit: number
  readonly offset: number
}

/** One page of `table` (newest first) with `where`, each row mapped by `toRecord`. */
const history = <Row extends ChainPositionRow, A>(
  table: string,
  columns: string,
  where: (sql: SqlClient.SqlClient) => Statement.Fragment,
  paging: Paging,
  toRecord: (row: Row) => A
) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const condition = where(sql)
    const page = yield* pageOf(
      sql<Row & { total_count: string }>`
        select block_number, log_index, tx_hash, timestamp, ${sql.literal(columns)}, count(*) over () as total_count
        from ${sql.literal(table)} where ${condition}
        order by block_number desc, log_index desc limit ${paging.limit} offset ${paging.offset}`,
      sql<{ count: string }>`select count(*) as count from ${sql.literal(table)} where ${condition}`,
      paging.offset
    )
    return { data: page.rows.map(toRecord), meta: { limit: paging.limit, offset: paging.offset, count: page.count } }
  }).pipe(read)

export const listRoleChanges = (query: RoleChangeQuery) =>
  history(
    "role_change",
    "role, account, sender, action",
    (sql) =>
      sql.and([
        ...(query.account === undefined ? [] : [sql`account = ${query.account}`]),
        ...(query.role === undefined ? [] : [sql`role = ${query.role}`]),
        ...(query.action === undefined ? [] : [sql`action = ${query.action}`])
      ]),
    query,
    (row: ChainPositionRow & { role: string; account: string; sender: string; action: "GRANTED" | "REVOKED" }) => ({ ...chainPosition(row), role: row.role as Bytes32, account: row.account as Address, sender: row.sender as Address, action: row.action })
  )

export const listPauses = (query: PauseQuery) =>
  history(
    "pause_change",
    "scope, module_id, paused, account",
    (sql) => sql.and(query.scope === undefined ? [] : [sql`scope = ${query.scope}`]),
    query,
    (row: ChainPositionRow & { scope: "GLOBAL" | "MODULE" | "HOOK" | "EXCHANGE"; module_id: string | null; paused: boolean; account: string | null }) => ({
      ...chainPosition(row),
      scope: row.scope,
      moduleId: row.module_id as Bytes32 | null,
      paused: row.paused,
      account: row.account as Address | null
    })
  )

type StoredCut = { readonly facetAddress: string; readonly action: number; readonly functionSelectors: ReadonlyArray<string> }

export const listDiamondCuts = (query: Paging) =>
  history(
    "diamond_cut",
    "cuts, init, data",
    (sql) => sql.and([]),
    query,
    (row: ChainPositionRow & { cuts: ReadonlyArray<StoredCut>; init: string; data: string }) => ({
      ...chainPosition(row),
      cuts: row.cuts.map((cut) => ({
        facetAddress: cut.facetAddress.toLowerCase() as Address,
        action: FacetCutAction.names[cut.action] ?? "Add",
        functionSelectors: cut.functionSelectors.map((s) => s.toLowerCase())
      })),
      init: row.init as Address,
      data: row.data as Hex
    })
  )

export const listFeeChanges = (query: FeeChangeQuery) =>
  history(
    "fee_change",
    "kind, market_id, previous_value, new_value, overridden",
    (sql) =>
      sql.and([
        ...(query.kind === undefined ? [] : [sql`kind = ${query.kind}`]),
        ...(query.marketId === undefined ? [] : [sql`market_id = ${query.marketId.toString()}::numeric`])
      ]),
    query,
    (row: ChainPositionRow & { kind: "DEFAULT_REDEMPTION_FEE" | "MARKET_CREATION_FEE" | "FEE_RECIPIENT" | "MARKET_REDEMPTION_FEE"; market_id: string | null; previous_value: string | null; new_value: string; overridden: boolean | null }) => ({
      ...chainPosition(row),
      kind: row.kind,
      marketId: row.market_id === null ? null : BigInt(row.market_id),
      previousValue: row.previous_value,
      newValue: row.new_value,
      overridden: row.overridden
    })
  )

export const listHookUpgrades = (query: Paging) =>
  history(
    "hook_upgrade",
    "action, implementation, ready_at",
    (sql) => sql.and([]),
    query,
    (row: ChainPositionRow & { action: "PROPOSED" | "EXECUTED" | "CANCELLED"; implementation: string; ready_at: string | null }) => ({
      ...chainPosition(row),
      action: row.action,
      implementation: row.implementation as Address,
      readyAt: row.ready_at === null ? null : toTimeInt(row.ready_at)
    })
  )
