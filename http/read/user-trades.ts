/**
 * A user's trade history: the position ledger's journal (`position_move`, written by
 * pipeline/reduce/positions.ts in the commit that moves the position), newest first. The one
 * reader of it: the backend's `/api/trading/{address}/trades` and the WebSocket's `user-trades`
 * topic both list these records.
 *
 * Invariant: the history holds every share move the P&L counts, each once, with its source
 * (router trade, CLOB taker fill, CLOB maker fill, split, merge, redeem, refund, transfer, dust),
 * so per market its shares sum to the position's balances and its USDC to realized P&L minus the
 * cost basis held. A router trade's row carries the trade's own fields (trader, recipient, type,
 * amounts, CLOB and AMM legs); other rows carry null there.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { TradeType } from "../../schema/enums.js"
import type { Address, TxHash } from "../../schema/primitives.js"
import { PRICE_SCALE } from "../../schema/primitives.js"
import { MOVE_SOURCES, type MoveSource } from "../../schema/move-sources.js"
import { chainPosition, chainPositionColumns } from "./records.js"
import { read } from "../core/db.js"
import { bigint, int, nullable, oneOf, rowDecoder, text } from "../core/rows.js"

export { MOVE_SOURCES, type MoveSource }

export interface UserTrade {
  readonly source: MoveSource
  readonly txHash: TxHash
  readonly blockNumber: number
  readonly logIndex: number
  readonly timestamp: number
  readonly marketId: bigint
  /** Shares in (+) or out (-) of the user's position, per side. */
  readonly yesShares: bigint
  readonly noShares: bigint
  /** USDC the user received (+) or paid (-) for them, as the P&L counts it. */
  readonly usdc: bigint
  /** Buy or sell of one side, when one side moved for USDC (trades and fills); null otherwise. */
  readonly tradeType: TradeType | null
  /** USDC per share of that side, rounded down; null unless `tradeType` is set. */
  readonly price: bigint | null
  /** The router trade's own fields (router rows only). */
  readonly router: {
    readonly trader: Address
    readonly recipient: Address
    readonly amountIn: bigint
    readonly amountOut: bigint
    readonly clobFilled: bigint
    readonly ammFilled: bigint
  } | null
}

const decodeRow = rowDecoder({
  ...chainPositionColumns,
  source: oneOf(...MOVE_SOURCES),
  market_id: bigint,
  yes_shares: bigint,
  no_shares: bigint,
  usdc: bigint,
  trader: nullable(text<Address>()),
  recipient: nullable(text<Address>()),
  trade_type: nullable(int),
  amount_in: nullable(bigint),
  amount_out: nullable(bigint),
  clob_filled: nullable(bigint),
  amm_filled: nullable(bigint)
})

const abs = (n: bigint) => (n < 0n ? -n : n)

/** The side traded when exactly one side moved against USDC: shares in for USDC out is a buy. */
const sideTraded = (yes: bigint, no: bigint, usdc: bigint): TradeType | null => {
  if (usdc === 0n || (yes === 0n) === (no === 0n)) return null
  const buy = (yes !== 0n ? yes : no) > 0n
  if (buy !== usdc < 0n) return null
  return yes !== 0n ? (buy ? "BUY_YES" : "SELL_YES") : buy ? "BUY_NO" : "SELL_NO"
}

export const toUserTrade = (raw: unknown): UserTrade => {
  const row = decodeRow(raw)
  const routerType = row.trade_type === null ? undefined : TradeType.names[row.trade_type]
  const tradeType = routerType ?? sideTraded(row.yes_shares, row.no_shares, row.usdc)
  const shares = abs(row.yes_shares !== 0n ? row.yes_shares : row.no_shares)
  return {
    source: row.source,
    ...chainPosition(row),
    marketId: row.market_id,
    yesShares: row.yes_shares,
    noShares: row.no_shares,
    usdc: row.usdc,
    tradeType,
    price: tradeType === null || shares === 0n ? null : (abs(row.usdc) * PRICE_SCALE) / shares,
    router:
      row.source === "router" && row.trader !== null && row.recipient !== null
        ? {
            trader: row.trader,
            recipient: row.recipient,
            amountIn: row.amount_in ?? 0n,
            amountOut: row.amount_out ?? 0n,
            clobFilled: row.clob_filled ?? 0n,
            ammFilled: row.amm_filled ?? 0n
          }
        : null
  }
}

export interface UserTradePage {
  readonly limit: number
  readonly offset: number
  readonly marketId?: bigint
}

/** A page of `address`'s history, newest first, and the history's length. */
export const listUserTrades = (address: Address, page: UserTradePage) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const where = sql.and([
      sql`p.user_address = ${address}`,
      ...(page.marketId === undefined ? [] : [sql`p.market_id = ${page.marketId.toString()}::numeric`])
    ])
    const rows = yield* sql`
      select p.block_number, p.log_index, p.tx_hash, p.timestamp, p.source, p.market_id, p.yes_shares, p.no_shares, p.usdc,
             t.trader, t.recipient, t.trade_type, t.amount_in, t.amount_out, t.clob_filled, t.amm_filled,
             count(*) over () as total_count
      from position_move p
      left join trade t on p.source = 'router' and t.block_number = p.block_number and t.log_index = p.log_index
      where ${where}
      order by p.block_number desc, p.log_index desc limit ${page.limit} offset ${page.offset}`
    let total = Number((rows[0] as { total_count?: string } | undefined)?.total_count ?? 0)
    if (rows.length === 0 && page.offset > 0)
      total = Number((yield* sql<{ n: string }>`select count(*) as n from position_move p where ${where}`)[0]?.n ?? 0)
    return { rows: rows.map(toUserTrade), total }
  }).pipe(read)
