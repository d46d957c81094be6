/** Reads of `approved_oracle`, `manual_report` and `price_feed_market` (see `oracles.ts`). */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Address } from "../../../schema/primitives.js"
import type { ApprovedOracle, FeedMarketQuery, ManualReport, PriceFeedMarket, ReportQuery } from "../oracles.js"
import { toIntOrNull, toTimeInt } from "../records.js"
import { pageOf, read } from "./db.js"

export const listApprovedOracles = (query: { readonly limit: number; readonly offset: number }) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const page = yield* pageOf(
      sql<{ oracle: string; updated_at: string; updated_block: string; total_count: string }>`
        select oracle, updated_at, updated_block, count(*) over () as total_count from approved_oracle where approved
        order by oracle limit ${query.limit} offset ${query.offset}`,
      sql<{ count: string }>`select count(*) as count from approved_oracle where approved`,
      query.offset
    )
    const data = page.rows.map(
      (row): ApprovedOracle => ({ oracle: row.oracle as Address, approvedAt: Number(row.updated_at), approvedBlock: Number(row.updated_block) })
    )
    return { data, meta: { limit: query.limit, offset: query.offset, count: page.count } }
  }).pipe(read)

interface ReportRow {
  readonly oracle: string
  readonly subject: ManualReport["subject"]
  readonly subject_id: string
  readonly state: ManualReport["state"]
  readonly outcome: boolean | null
  readonly winning_index: string | null
  readonly reporter: string | null
  readonly reported_at: string | null
  readonly finalizes_at: string | null
  readonly admin: string | null
  readonly updated_at: string
  readonly updated_block: string
}

export const listManualReports = (oracle: Address, query: ReportQuery) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const where = sql.and([
      sql`oracle = ${oracle}`,
      ...(query.subject === undefined ? [] : [sql`subject = ${query.subject}`]),
      ...(query.state === undefined ? [] : [sql`state = ${query.state}`])
    ])
    const page = yield* pageOf(
      sql<ReportRow & { total_count: string }>`
        select oracle, subject, subject_id, state, outcome, winning_index, reporter, reported_at, finalizes_at, admin, updated_at,
               updated_block, count(*) over () as total_count
        from manual_report where ${where}
        order by updated_block desc, subject, subject_id limit ${query.limit} offset ${query.offset}`,
      sql<{ count: string }>`select count(*) as count from manual_report where ${where}`,
      query.offset
    )
    const data = page.rows.map(
      (row): ManualReport => ({
        oracle: row.oracle as Address,
        subject: row.subject,
        subjectId: BigInt(row.subject_id),
        state: row.state,
        outcome: row.outcome,
        winningIndex: row.winning_index === null ? null : BigInt(row.winning_index),
        reporter: row.reporter as Address | null,
        reportedAt: toIntOrNull(row.reported_at),
        finalizesAt: row.finalizes_at === null ? null : toTimeInt(row.finalizes_at),
        admin: row.admin as Address | null,
        updatedAt: Number(row.updated_at),
        updatedBlock: Number(row.updated_block)
      })
    )
    return { data, meta: { limit: query.limit, offset: query.offset, count: page.count } }
  }).pipe(read)

interface FeedRow {
  readonly oracle: string
  readonly market_id: string
  readonly feed: string
  readonly threshold: string
  readonly gte: boolean
  readonly snapshot_at: string
  readonly state: PriceFeedMarket["state"]
  readonly price: string | null
  readonly outcome: boolean | null
  readonly registered_at: string
  readonly updated_at: string
  readonly updated_block: string
}

export const listPriceFeedMarkets = (oracle: Address, query: FeedMarketQuery) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const where = sql.and([sql`oracle = ${oracle}`, ...(query.state === undefined ? [] : [sql`state = ${query.state}`])])
    const page = yield* pageOf(
      sql<FeedRow & { total_count: string }>`
        select oracle, market_id, feed, threshold, gte, snapshot_at, state, price, outcome, registered_at, updated_at, updated_block,
               count(*) over () as total_count
        from price_feed_market where ${where}
        order by market_id limit ${query.limit} offset ${query.offset}`,
      sql<{ count: string }>`select count(*) as count from price_feed_market where ${where}`,
      query.offset
    )
    const data = page.rows.map(
      (row): PriceFeedMarket => ({
        oracle: row.oracle as Address,
        marketId: BigInt(row.market_id),
        feed: row.feed as Address,
        threshold: BigInt(row.threshold),
        gte: row.gte,
        snapshotAt: toTimeInt(row.snapshot_at),
        state: row.state,
        price: row.price === null ? null : BigInt(row.price),
        outcome: row.outcome,
        registeredAt: Number(row.registered_at),
        updatedAt: Number(row.updated_at),
        updatedBlock: Number(row.updated_block)
      })
    )
    return { data, meta: { limit: query.limit, offset: query.offset, count: page.count } }
  }).pipe(read)
