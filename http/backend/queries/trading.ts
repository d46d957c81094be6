/** Reads for the trading and portfolio endpoints that the indexer's query modules do not have. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Address } from "../../../schema/primitives.js"
import { read } from "../../indexer/queries/db.js"
import { toTrade } from "../../indexer/queries/market-trades.js"

/**
 * A user's router trades (as trader or recipient) and direct CLOB taker fills, newest first, with
 * the indexer's rule for the overlap: a taker fill whose transaction has a router trade of the
 * same market is that trade's CLOB leg, not a trade of its own.
 */
export const listUserTrades = (address: Address, page: { readonly limit: number; readonly offset: number; readonly marketId?: bigint }) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const market = (column: string) =>
      page.marketId === undefined ? sql`` : sql`and ${sql(column)} = ${page.marketId.toString()}::numeric`
    const union = sql`
      select 'router' as source, t.block_number, t.log_index, t.tx_hash, t.timestamp, t.market_id, t.trader, t.recipient,
             t.trade_type, t.amount_in, t.amount_out, t.clob_filled, t.amm_filled, null::numeric as match_count
      from trade t where (t.trader = ${address} or t.recipient = ${address}) ${market("t.market_id")}
      union all
      select 'clob' as source, f.block_number, f.log_index, f.tx_hash, f.timestamp, f.market_id, f.taker, f.recipient,
             f.taker_side, f.total_cost, f.total_filled, f.total_filled, 0::numeric, f.match_count
      from taker_fill f where f.taker = ${address} ${market("f.market_id")}
        and not exists (select 1 from trade t where t.tx_hash = f.tx_hash and t.market_id = f.market_id)`
    const rows = yield* sql<{ total_count: string }>`
      select x.*, count(*) over () as total_count from (${union}) x
      order by x.block_number desc, x.log_index desc limit ${page.limit} offset ${page.offset}`
    let total = Number(rows[0]?.total_count ?? 0)
    if (rows.length === 0 && page.offset > 0) total = Number((yield* sql<{ n: string }>`select count(*) as n from (${union}) x`)[0]?.n ?? 0)
    return { rows: rows.map(toTrade), total }
  }).pipe(read)

/**
 * The redemption fee of a market in basis points, as the diamond keeps it: the default fee when
 * the market was created (a snapshot), then each per-market change in order (overridden: its
 * bps; not overridden: back to the default of that moment).
 */
export const readRedemptionFeeBps = (marketId: bigint, createdBlock: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{
      kind: string
      market_id: string | null
      new_value: string
      overridden: boolean | null
      block_number: string
    }>`
      select kind, market_id, new_value, overridden, block_number from fee_change
      where kind = 'DEFAULT_REDEMPTION_FEE' or (kind = 'MARKET_REDEMPTION_FEE' and market_id = ${marketId.toString()}::numeric)
      order by block_number, log_index`
    // The snapshot: the default in force before the market's block (a change in the same block
    // is taken to come after the creation; the creation's log index is not kept).
    let defaultBps = 0
    let fee = 0
    for (const row of rows) {
      if (row.kind === "DEFAULT_REDEMPTION_FEE") {
        defaultBps = Number(row.new_value)
        if (Number(row.block_number) < createdBlock) fee = defaultBps
      } else {
        fee = row.overridden === true ? Number(row.new_value) : defaultBps
      }
    }
    return fee
  }).pipe(read)

/**
 * An address's YES and NO token balances in a market: what `redeem()` and `refund()` burn. Not
 * the position's balances, which also count shares locked in the owner's live SELL orders (the
 * exchange holds those; they come back on a cancel, and only then can be redeemed).
 */
export const readTokenBalances = (address: Address, marketId: bigint) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ side: "YES" | "NO"; balance: string }>`
      select side, balance from token_holder where holder = ${address} and market_id = ${marketId.toString()}::numeric`
    const of = (side: "YES" | "NO") => BigInt(rows.find((row) => row.side === side)?.balance ?? 0)
    return { yes: of("YES"), no: of("NO") }
  }).pipe(read)
