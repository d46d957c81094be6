/** Reads for the trading and portfolio endpoints beyond the shared read model (`http/read/*`, where a user's trades are: `http/read/user-trades.ts`). */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Address } from "../../../schema/primitives.js"
import { read } from "../../core/db.js"

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
