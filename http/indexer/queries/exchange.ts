/** Reads of `exchange_order` and `order_match` (see `exchange.ts`). */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect } from "effect"
import { MatchType, Side } from "../../../schema/enums.js"
import { OrderNotFound } from "../../../schema/errors.js"
import type { Address, Bytes32, TxHash } from "../../../schema/primitives.js"
import type { Match, MatchListQuery, Order, OrderListQuery } from "../exchange.js"
import { chainPosition, toIntOrNull, type ChainPositionRow } from "../records.js"
import { pageOf, read } from "./db.js"

interface OrderRow {
  readonly id: string
  readonly market_id: string
  readonly owner: string
  readonly side: number
  readonly price: string
  readonly amount: string
  readonly filled: string
  readonly status: Order["status"]
  readonly builder: string | null
  readonly placed_at: string
  readonly placed_block: string
  readonly placed_tx: string
  readonly updated_at: string
  readonly filled_at: string | null
  readonly cancelled_at: string | null
}

const sideName = (code: number) => Side.names[code] ?? "BUY_YES"

const toOrder = (row: OrderRow): Order => {
  const amount = BigInt(row.amount)
  const filled = BigInt(row.filled)
  const live = row.status === "OPEN" || row.status === "PARTIALLY_FILLED"
  return {
    orderId: row.id as Bytes32,
    marketId: BigInt(row.market_id),
    owner: row.owner as Address,
    side: sideName(row.side),
    price: BigInt(row.price),
    amount,
    filled,
    remaining: live && amount > filled ? amount - filled : 0n,
    status: row.status,
    builder: row.builder as Bytes32 | null,
    placedAt: Number(row.placed_at),
    placedBlock: Number(row.placed_block),
    placedTx: row.placed_tx as TxHash,
    updatedAt: Number(row.updated_at),
    filledAt: toIntOrNull(row.filled_at),
    cancelledAt: toIntOrNull(row.cancelled_at)
  }
}

const ORDER_COLUMNS = `id, market_id, owner, side, price, amount, filled, status, builder, placed_at, placed_block, placed_tx,
  updated_at, filled_at, cancelled_at`

export const listOrders = (query: OrderListQuery) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const where = sql.and([
      ...(query.marketId === undefined ? [] : [sql`market_id = ${query.marketId.toString()}::numeric`]),
      ...(query.owner === undefined ? [] : [sql`owner = ${query.owner}`]),
      ...(query.status === undefined ? [] : [sql`status = ${query.status}`]),
      ...(query.side === undefined ? [] : [sql`side = ${Side.toCode(query.side)}`])
    ])
    const page = yield* pageOf(
      sql<OrderRow & { total_count: string }>`
        select ${sql.literal(ORDER_COLUMNS)}, count(*) over () as total_count from exchange_order where ${where}
        order by placed_block desc, id limit ${query.limit} offset ${query.offset}`,
      sql<{ count: string }>`select count(*) as count from exchange_order where ${where}`,
      query.offset
    )
    return { data: page.rows.map(toOrder), meta: { limit: query.limit, offset: query.offset, count: page.count } }
  }).pipe(read)

export const getOrder = (orderId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<OrderRow>`select ${sql.literal(ORDER_COLUMNS)} from exchange_order where id = ${orderId}`
    return row === undefined ? undefined : toOrder(row)
  }).pipe(
    read,
    Effect.flatMap((order) =>
      order === undefined ? Effect.fail(new OrderNotFound({ message: `no order with id ${orderId}` })) : Effect.succeed({ data: order, meta: null })
    )
  )

export interface MatchRow extends ChainPositionRow {
  readonly market_id: string
  readonly maker_order_id: string
  readonly taker_order_id: string
  readonly maker: string | null
  readonly maker_side: number | null
  readonly taker: string | null
  readonly match_type: number
  readonly amount: string
  readonly price: string
  readonly maker_builder: string | null
  readonly taker_builder: string | null
}

export const MATCH_COLUMNS = `block_number, log_index, tx_hash, timestamp, market_id, maker_order_id, taker_order_id, maker, maker_side,
  taker, match_type, amount, price, maker_builder, taker_builder`

export const toMatch = (row: MatchRow): Match => ({
  ...chainPosition(row),
  marketId: BigInt(row.market_id),
  makerOrderId: row.maker_order_id as Bytes32,
  takerOrderId: row.taker_order_id as Bytes32,
  maker: row.maker as Address | null,
  makerSide: row.maker_side === null ? null : sideName(row.maker_side),
  taker: row.taker as Address | null,
  matchType: MatchType.names[row.match_type] ?? "COMPLEMENTARY",
  amount: BigInt(row.amount),
  price: BigInt(row.price),
  makerBuilder: row.maker_builder as Bytes32 | null,
  takerBuilder: row.taker_builder as Bytes32 | null
})

/** One page of `order_match` rows under `where`, newest first (the order every match list uses). */
export const matchPage = (where: Statement.Fragment, page: { readonly limit: number; readonly offset: number }) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const found = yield* pageOf(
      sql<MatchRow & { total_count: string }>`
        select ${sql.literal(MATCH_COLUMNS)}, count(*) over () as total_count from order_match where ${where}
        order by block_number desc, log_index desc limit ${page.limit} offset ${page.offset}`,
      sql<{ count: string }>`select count(*) as count from order_match where ${where}`,
      page.offset
    )
    return { data: found.rows.map(toMatch), meta: { limit: page.limit, offset: page.offset, count: found.count } }
  })

export const listMatches = (query: MatchListQuery) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const where = sql.and([
      ...(query.marketId === undefined ? [] : [sql`market_id = ${query.marketId.toString()}::numeric`]),
      ...(query.maker === undefined ? [] : [sql`maker = ${query.maker}`]),
      ...(query.taker === undefined ? [] : [sql`taker = ${query.taker}`]),
      ...(query.orderId === undefined ? [] : [sql`(maker_order_id = ${query.orderId} or taker_order_id = ${query.orderId})`]),
      ...(query.matchType === undefined ? [] : [sql`match_type = ${MatchType.toCode(query.matchType)}`])
    ])
    return yield* matchPage(where, query)
  }).pipe(read)
