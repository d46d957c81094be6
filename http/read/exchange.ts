/** Reads of `exchange_order` and `order_match` (see `exchange.ts`). */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect } from "effect"
import { MatchType, Side } from "../../schema/enums.js"
import { OrderNotFound } from "../../schema/errors.js"
import type { Address, Bytes32, TxHash } from "../../schema/primitives.js"
import { chainPosition, chainPositionColumns } from "./records.js"
import { listPage, read, type Paging } from "../core/db.js"
import { bigint, int, nullable, oneOf, rowDecoder, text } from "../core/rows.js"

export const ORDER_STATUSES = ["OPEN", "PARTIALLY_FILLED", "FILLED", "CANCELLED"] as const

/** The records of these reads (decoded rows: bigint amounts, lowercase addresses and hashes). */
export interface MatchRecord {
  readonly marketId: bigint
  readonly price: bigint
  readonly amount: bigint
  readonly makerOrderId: Bytes32
  readonly takerOrderId: Bytes32
  readonly maker: Address | null
  readonly makerSide: "BUY_YES" | "SELL_YES" | "BUY_NO" | "SELL_NO" | null
  readonly taker: Address | null
  readonly matchType: "COMPLEMENTARY" | "MINT" | "MERGE"
  readonly makerBuilder: Bytes32 | null
  readonly takerBuilder: Bytes32 | null
  readonly txHash: `0x${string}`
  readonly blockNumber: number
  readonly logIndex: number
  readonly timestamp: number
}

export interface MatchListParams {
  readonly orderId?: Bytes32
  readonly marketId?: bigint
  readonly maker?: Address
  readonly taker?: Address
  readonly matchType?: "COMPLEMENTARY" | "MINT" | "MERGE"
  readonly limit: number
  readonly offset: number
}

export interface OrderRecord {
  readonly orderId: Bytes32
  readonly marketId: bigint
  readonly owner: Address
  readonly side: "BUY_YES" | "SELL_YES" | "BUY_NO" | "SELL_NO"
  readonly price: bigint
  readonly amount: bigint
  readonly filled: bigint
  readonly remaining: bigint
  readonly status: "OPEN" | "PARTIALLY_FILLED" | "FILLED" | "CANCELLED"
  readonly builder: Bytes32 | null
  readonly placedAt: number
  readonly placedBlock: number
  readonly placedTx: TxHash
  readonly updatedAt: number
  readonly filledAt: number | null
  readonly cancelledAt: number | null
}

export interface OrderListParams {
  readonly marketId?: bigint
  readonly owner?: Address
  readonly side?: "BUY_YES" | "SELL_YES" | "BUY_NO" | "SELL_NO"
  readonly status?: "OPEN" | "PARTIALLY_FILLED" | "FILLED" | "CANCELLED"
  readonly limit: number
  readonly offset: number
}

const decodeOrderRow = rowDecoder({
  id: text<Bytes32>(),
  market_id: bigint,
  owner: text<Address>(),
  side: int,
  price: bigint,
  amount: bigint,
  filled: bigint,
  status: oneOf(...ORDER_STATUSES),
  builder: nullable(text<Bytes32>()),
  placed_at: int,
  placed_block: int,
  placed_tx: text<TxHash>(),
  updated_at: int,
  filled_at: nullable(int),
  cancelled_at: nullable(int)
})

const sideName = (code: number) => Side.names[code] ?? "BUY_YES"

const toOrder = (raw: unknown): OrderRecord => {
  const row = decodeOrderRow(raw)
  const live = row.status === "OPEN" || row.status === "PARTIALLY_FILLED"
  return {
    orderId: row.id,
    marketId: row.market_id,
    owner: row.owner,
    side: sideName(row.side),
    price: row.price,
    amount: row.amount,
    filled: row.filled,
    remaining: live && row.amount > row.filled ? row.amount - row.filled : 0n,
    status: row.status,
    builder: row.builder,
    placedAt: row.placed_at,
    placedBlock: row.placed_block,
    placedTx: row.placed_tx,
    updatedAt: row.updated_at,
    filledAt: row.filled_at,
    cancelledAt: row.cancelled_at
  }
}

const ORDER_COLUMNS = `id, market_id, owner, side, price, amount, filled, status, builder, placed_at, placed_block, placed_tx,
  updated_at, filled_at, cancelled_at`

export const listOrders = (query: OrderListParams) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const where = sql.and([
      ...(query.marketId === undefined ? [] : [sql`market_id = ${query.marketId.toString()}::numeric`]),
      ...(query.owner === undefined ? [] : [sql`owner = ${query.owner}`]),
      ...(query.status === undefined ? [] : [sql`status = ${query.status}`]),
      ...(query.side === undefined ? [] : [sql`side = ${Side.toCode(query.side)}`])
    ])
    return yield* listPage(
      { select: ORDER_COLUMNS, from: sql`exchange_order where ${where}`, orderBy: "placed_block desc, id", record: toOrder },
      query
    )
  }).pipe(read)

export const getOrder = (orderId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql`select ${sql.literal(ORDER_COLUMNS)} from exchange_order where id = ${orderId}`
    return row === undefined ? undefined : toOrder(row)
  }).pipe(
    read,
    Effect.flatMap((order) =>
      order === undefined
        ? Effect.fail(new OrderNotFound({ message: `no order with id ${orderId}` }))
        : Effect.succeed({ data: order, meta: null })
    )
  )

const decodeMatchRow = rowDecoder({
  ...chainPositionColumns,
  market_id: bigint,
  maker_order_id: text<Bytes32>(),
  taker_order_id: text<Bytes32>(),
  maker: nullable(text<Address>()),
  maker_side: nullable(int),
  taker: nullable(text<Address>()),
  match_type: int,
  amount: bigint,
  price: bigint,
  maker_builder: nullable(text<Bytes32>()),
  taker_builder: nullable(text<Bytes32>())
})

export const MATCH_COLUMNS = `block_number, log_index, tx_hash, timestamp, market_id, maker_order_id, taker_order_id, maker, maker_side,
  taker, match_type, amount, price, maker_builder, taker_builder`

/** The match record of a row selected with `MATCH_COLUMNS`. */
export const toMatch = (raw: unknown): MatchRecord => {
  const row = decodeMatchRow(raw)
  return {
    ...chainPosition(row),
    marketId: row.market_id,
    makerOrderId: row.maker_order_id,
    takerOrderId: row.taker_order_id,
    maker: row.maker,
    makerSide: row.maker_side === null ? null : sideName(row.maker_side),
    taker: row.taker,
    matchType: MatchType.names[row.match_type] ?? "COMPLEMENTARY",
    amount: row.amount,
    price: row.price,
    makerBuilder: row.maker_builder,
    takerBuilder: row.taker_builder
  }
}

/** One page of `order_match` rows under `where`, newest first (the order every match list uses). */
export const matchPage = (where: Statement.Fragment, paging: Paging) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    listPage(
      { select: MATCH_COLUMNS, from: sql`order_match where ${where}`, orderBy: "block_number desc, log_index desc", record: toMatch },
      paging
    )
  )

export const listMatches = (query: MatchListParams) =>
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
