/** Reads of `approved_oracle`, `manual_report` and `price_feed_market` (see `oracles.ts`). */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Address } from "../../schema/primitives.js"
import { listPage, read, type Paging } from "../core/db.js"
import { bigint, bool, int, nullable, oneOf, rowDecoder, text, time } from "../core/rows.js"

export const FEED_MARKET_STATES = ["REGISTERED", "RESOLVED", "UNREGISTERED"] as const
export const REPORT_STATES = ["REPORTED", "REVOKED", "REOPENED"] as const
export const REPORT_SUBJECTS = ["market", "event"] as const

/** The records of these reads (decoded rows: bigint amounts, lowercase addresses and hashes). */
export interface ApprovedOracleRecord {
  readonly oracle: Address
  readonly approvedAt: number
  readonly approvedBlock: number
}

export interface FeedMarketParams {
  readonly state?: "REGISTERED" | "RESOLVED" | "UNREGISTERED"
  readonly limit: number
  readonly offset: number
}

export interface ManualReportRecord {
  readonly oracle: Address
  readonly subject: "market" | "event"
  readonly subjectId: bigint
  readonly state: "REPORTED" | "REVOKED" | "REOPENED"
  readonly outcome: boolean | null
  readonly winningIndex: bigint | null
  readonly reporter: Address | null
  readonly reportedAt: number | null
  readonly finalizesAt: number | null
  readonly admin: Address | null
  readonly updatedAt: number
  readonly updatedBlock: number
}

export interface PriceFeedMarketRecord {
  readonly oracle: Address
  readonly state: "REGISTERED" | "RESOLVED" | "UNREGISTERED"
  readonly outcome: boolean | null
  readonly updatedAt: number
  readonly updatedBlock: number
  readonly marketId: bigint
  readonly feed: Address
  readonly threshold: bigint
  readonly gte: boolean
  readonly snapshotAt: number
  readonly price: bigint | null
  readonly registeredAt: number
}

export interface ReportParams {
  readonly subject?: "market" | "event"
  readonly state?: "REPORTED" | "REVOKED" | "REOPENED"
  readonly limit: number
  readonly offset: number
}

const decodeApprovedRow = rowDecoder({ oracle: text<Address>(), updated_at: int, updated_block: int })

export const listApprovedOracles = (query: Paging) =>
  Effect.gen(function* () {
    return yield* listPage(
      {
        select: "oracle, updated_at, updated_block",
        from: "approved_oracle where approved",
        orderBy: "oracle",
        record: (raw): ApprovedOracleRecord => {
          const row = decodeApprovedRow(raw)
          return { oracle: row.oracle, approvedAt: row.updated_at, approvedBlock: row.updated_block }
        }
      },
      query
    )
  }).pipe(read)

const decodeReportRow = rowDecoder({
  oracle: text<Address>(),
  subject: oneOf(...REPORT_SUBJECTS),
  subject_id: bigint,
  state: oneOf(...REPORT_STATES),
  outcome: nullable(bool),
  winning_index: nullable(bigint),
  reporter: nullable(text<Address>()),
  reported_at: nullable(int),
  finalizes_at: nullable(time),
  admin: nullable(text<Address>()),
  updated_at: int,
  updated_block: int
})

const toReport = (raw: unknown): ManualReportRecord => {
  const row = decodeReportRow(raw)
  return {
    oracle: row.oracle,
    subject: row.subject,
    subjectId: row.subject_id,
    state: row.state,
    outcome: row.outcome,
    winningIndex: row.winning_index,
    reporter: row.reporter,
    reportedAt: row.reported_at,
    finalizesAt: row.finalizes_at,
    admin: row.admin,
    updatedAt: row.updated_at,
    updatedBlock: row.updated_block
  }
}

export const listManualReports = (oracle: Address, query: ReportParams) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const where = sql.and([
      sql`oracle = ${oracle}`,
      ...(query.subject === undefined ? [] : [sql`subject = ${query.subject}`]),
      ...(query.state === undefined ? [] : [sql`state = ${query.state}`])
    ])
    return yield* listPage(
      {
        select: `oracle, subject, subject_id, state, outcome, winning_index, reporter, reported_at, finalizes_at, admin, updated_at,
          updated_block`,
        from: sql`manual_report where ${where}`,
        orderBy: "updated_block desc, subject, subject_id",
        record: toReport
      },
      query
    )
  }).pipe(read)

const decodeFeedRow = rowDecoder({
  oracle: text<Address>(),
  market_id: bigint,
  feed: text<Address>(),
  threshold: bigint,
  gte: bool,
  snapshot_at: time,
  state: oneOf(...FEED_MARKET_STATES),
  price: nullable(bigint),
  outcome: nullable(bool),
  registered_at: int,
  updated_at: int,
  updated_block: int
})

const toFeedMarket = (raw: unknown): PriceFeedMarketRecord => {
  const row = decodeFeedRow(raw)
  return {
    oracle: row.oracle,
    marketId: row.market_id,
    feed: row.feed,
    threshold: row.threshold,
    gte: row.gte,
    snapshotAt: row.snapshot_at,
    state: row.state,
    price: row.price,
    outcome: row.outcome,
    registeredAt: row.registered_at,
    updatedAt: row.updated_at,
    updatedBlock: row.updated_block
  }
}

export const listPriceFeedMarkets = (oracle: Address, query: FeedMarketParams) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const where = sql.and([sql`oracle = ${oracle}`, ...(query.state === undefined ? [] : [sql`state = ${query.state}`])])
    return yield* listPage(
      {
        select: "oracle, market_id, feed, threshold, gte, snapshot_at, state, price, outcome, registered_at, updated_at, updated_block",
        from: sql`price_feed_market where ${where}`,
        orderBy: "market_id",
        record: toFeedMarket
      },
      query
    )
  }).pipe(read)
