/**
 * Reads of `user_stats` and `trade` for user aggregates (see `user-stats.ts` for the accuracy
 * definition, which `CALLS` implements).
 */
import { SqlClient } from "@effect/sql"
import type { Statement } from "@effect/sql"
import { Effect } from "effect"
import type { Address } from "../../schema/primitives.js"
import { listPage, read } from "../core/db.js"
import { bigint, int, nullable, rowDecoder, text } from "../core/rows.js"

export const LEADERBOARD_SORTS = ["pnl", "volume", "accuracy"] as const
export type LeaderboardSort = (typeof LEADERBOARD_SORTS)[number]

/** The records of these reads (decoded rows: bigint amounts, lowercase addresses and hashes). */
export interface AccuracyRecord {
  readonly address: Address
  readonly resolvedPositions: number
  readonly correctPositions: number
  readonly accuracy: bigint | null
}

export interface LeaderboardParams {
  readonly sort: "accuracy" | "volume" | "pnl"
  readonly limit: number
  readonly offset: number
}

export interface UserStatsRecord {
  readonly address: Address
  readonly resolvedPositions: number
  readonly correctPositions: number
  readonly accuracy: bigint | null
  readonly rank: number | null
  readonly volume: bigint
  readonly tradeCount: number
  readonly realizedPnl: bigint
}

/**
 * Per (recipient, resolved market): net YES and net NO shares from router trades (buys add
 * amountOut, sells remove amountIn), with the market's outcome. `filter` narrows the trades.
 */
export const calls = (sql: SqlClient.SqlClient, filter: Statement.Fragment) => sql`
  select t.recipient as address, t.market_id, m.outcome,
         sum(case t.trade_type when 0 then t.amount_out when 1 then -t.amount_in else 0 end) as net_yes,
         sum(case t.trade_type when 2 then t.amount_out when 3 then -t.amount_in else 0 end) as net_no
  from trade t join market m on m.id = t.market_id
  where m.is_resolved and m.outcome is not null and ${filter}
  group by t.recipient, t.market_id, m.outcome`

/** Calls and correct calls per address, from `calls`. */
const accuracyOf = (sql: SqlClient.SqlClient, filter: Statement.Fragment) => sql`
  select c.address,
         count(*) filter (where c.net_yes <> c.net_no) as calls,
         count(*) filter (where c.net_yes <> c.net_no and (c.net_yes > c.net_no) = c.outcome) as correct
  from (${calls(sql, filter)}) c group by c.address`

/** correct / calls in the 1e6 scale, rounded down; null without a call. */
const ratio = (correct: bigint, made: bigint): bigint | null => (made === 0n ? null : (correct * 1_000_000n) / made)

const accuracyRecord = (address: Address, made: number, correct: number): AccuracyRecord => ({
  address,
  resolvedPositions: made,
  correctPositions: correct,
  accuracy: ratio(BigInt(correct), BigInt(made))
})

const decodeAccuracyRow = rowDecoder({ calls: int, correct: int })

export const readAccuracy = (address: Address) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [raw] = yield* sql`select calls, correct from (${accuracyOf(sql, sql`t.recipient = ${address}`)}) a`
    const row = raw === undefined ? undefined : decodeAccuracyRow(raw)
    return accuracyRecord(address, row?.calls ?? 0, row?.correct ?? 0)
  })

const SORT_ORDER: Record<LeaderboardSort, string> = {
  pnl: "realized_pnl desc, address",
  volume: "volume desc, address",
  accuracy: "accuracy desc nulls last, calls desc, address"
}

const decodeLeaderRow = rowDecoder({
  address: text<Address>(),
  volume: bigint,
  trade_count: int,
  realized_pnl: bigint,
  calls: int,
  correct: int
})

const toStats = (row: ReturnType<typeof decodeLeaderRow>, rank: number | null): UserStatsRecord => ({
  ...accuracyRecord(row.address, row.calls, row.correct),
  rank,
  volume: row.volume,
  tradeCount: row.trade_count,
  realizedPnl: row.realized_pnl
})

/** The leaderboard: addresses with at least one router trade, ranked in the order asked for. */
export const readLeaderboard = (query: LeaderboardParams) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const board = sql`
      select u.address, u.volume, u.trade_count, u.realized_pnl, coalesce(a.calls, 0) as calls, coalesce(a.correct, 0) as correct,
             case when a.calls > 0 then (a.correct * 1000000) / a.calls end as accuracy
      from user_stats u left join (${accuracyOf(sql, sql`true`)}) a on a.address = u.address
      where u.trade_count > 0`
    return yield* listPage(
      {
        select: "b.*",
        from: sql`(${board}) b`,
        orderBy: SORT_ORDER[query.sort],
        count: sql`select count(*) as count from user_stats where trade_count > 0`,
        record: (row, i) => toStats(decodeLeaderRow(row), query.offset + i + 1)
      },
      query
    )
  }).pipe(read)

const decodeRankedRow = rowDecoder({ volume: bigint, trade_count: int, realized_pnl: bigint, rank: nullable(int) })

/** One address's stats (zeros when it has none), ranked by pnl among traders when it traded. */
export const readUserStats = (address: Address) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [[raw], accuracy] = yield* Effect.all(
      [
        sql`
        select u.volume, u.trade_count, u.realized_pnl,
               case when u.trade_count > 0 then 1 + (select count(*) from user_stats o where o.trade_count > 0
                 and (o.realized_pnl > u.realized_pnl or (o.realized_pnl = u.realized_pnl and o.address < u.address))) end as rank
        from user_stats u where u.address = ${address}`,
        readAccuracy(address)
      ],
      { concurrency: 2 }
    )
    const row = raw === undefined ? undefined : decodeRankedRow(raw)
    const stats: UserStatsRecord = {
      ...accuracy,
      rank: row?.rank ?? null,
      volume: row?.volume ?? 0n,
      tradeCount: row?.trade_count ?? 0,
      realizedPnl: row?.realized_pnl ?? 0n
    }
    return { data: stats, meta: null }
  }).pipe(read)
