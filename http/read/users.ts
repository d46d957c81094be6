/** Reads for `/api/users/{address}/...` (see `users.ts`). */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Address } from "../../schema/primitives.js"
import { listPage, read, type Paging } from "../core/db.js"
import { matchPage } from "./exchange.js"
import { positionColumns, toPosition } from "./market-book.js"
import { positionsSource } from "./positions.js"
import { bigint, bool, int, nullable, oneOf, rowDecoder, text } from "../core/rows.js"
import { readAccuracy } from "./user-stats.js"

/** The records of these reads (decoded rows: bigint amounts, lowercase addresses and hashes). */
export interface MakerFillParams {
  readonly marketId?: bigint
  readonly limit: number
  readonly offset: number
}

export interface ResolvedPositionRecord {
  readonly marketId: bigint
  readonly user: Address
  readonly yesBalance: bigint
  readonly noBalance: bigint
  readonly yesCost: bigint
  readonly noCost: bigint
  readonly realizedPnl: bigint
  readonly question: string
  readonly resolutionType: "ORACLE" | "EMERGENCY" | "REFUND"
  readonly outcome: boolean | null
  readonly resolvedAt: number | null
  readonly call: "YES" | "NO" | null
  readonly correct: boolean | null
}

export const readUserAccuracy = (address: Address) =>
  readAccuracy(address).pipe(
    Effect.map((data) => ({ data, meta: null })),
    read
  )

const decodeResolvedRow = rowDecoder({
  ...positionColumns,
  question: text(),
  resolution_type: oneOf("ORACLE", "EMERGENCY", "REFUND"),
  outcome: nullable(bool),
  resolved_at: nullable(int),
  net_yes: nullable(bigint),
  net_no: nullable(bigint)
})

const toResolved = (raw: unknown): ResolvedPositionRecord => {
  const row = decodeResolvedRow(raw)
  const netYes = row.net_yes ?? 0n
  const netNo = row.net_no ?? 0n
  // A call exists only in a market resolved YES or NO (see user-stats.ts).
  const call = row.outcome === null || netYes === netNo ? null : netYes > netNo ? "YES" : "NO"
  return {
    ...toPosition(row),
    question: row.question,
    resolutionType: row.resolution_type,
    outcome: row.outcome,
    resolvedAt: row.resolved_at,
    call,
    correct: call === null ? null : (call === "YES") === row.outcome
  }
}

export const listResolvedPositions = (address: Address, query: Paging) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const from = sql`
      ${positionsSource(sql, { user: address })} p join market m on m.id = p.market_id
      left join (
        select t.market_id,
               sum(case t.trade_type when 0 then t.amount_out when 1 then -t.amount_in else 0 end) as net_yes,
               sum(case t.trade_type when 2 then t.amount_out when 3 then -t.amount_in else 0 end) as net_no
        from trade t where t.recipient = ${address} group by t.market_id
      ) c on c.market_id = p.market_id
      where m.is_resolved or m.refund_mode`
    return yield* listPage(
      {
        select: `p.user_address, p.market_id, p.yes_balance, p.no_balance, p.yes_cost, p.no_cost, p.realized_pnl,
          m.question, m.resolution_type, m.outcome, m.resolved_at, c.net_yes, c.net_no`,
        from,
        orderBy: "m.resolved_at desc nulls last, m.id desc",
        record: toResolved
      },
      query
    )
  }).pipe(read)

export const listMakerFills = (address: Address, query: MakerFillParams) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const where = sql.and([
      sql`maker = ${address}`,
      ...(query.marketId === undefined ? [] : [sql`market_id = ${query.marketId.toString()}::numeric`])
    ])
    return yield* matchPage(where, query)
  }).pipe(read)
