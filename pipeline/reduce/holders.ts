/**
 * Outcome-token holders: balances per (token, holder) from ERC-20 `Transfer` logs, and per token
 * its supply and holder count (the spec's "holder balance view").
 *
 * Invariants:
 * - the zero address is never a holder: a transfer from it mints (supply grows), to it burns;
 * - a holder row exists exactly while its balance is positive (a balance reaching zero deletes
 *   the row), so a token's `holders` equals the number of its holder rows;
 * - a token's `supply` equals the sum of its holders' balances;
 * - only tokens announced by MarketCreated count; a Transfer of any other contract is ignored.
 *
 * Holders keep every address (protocol contracts included). Positions (positions.ts) move here
 * only for transfers the protocol's own events do not describe: a user's shares to or from
 * another user or a contract other than the router and the exchange (liquidity into the pool
 * manager, seed tokens from the market factory, ...): out of the sender pro rata to its cost
 * basis, in at cost 0; and outcome-token dust the router refunds (in at cost 0). Shares moving
 * between a user and the router or the exchange are the other side of a trade, a fill or an
 * order's escrow, which move the position themselves; mints and burns are splits, merges,
 * redemptions and refunds.
 */
import type { DomainEventOf } from "../../schema/domain-events.js"
import type { Located, OutcomeTokenRow, ProtocolContracts } from "./model.js"
import { acquire, dispose } from "./positions.js"
import { dropRow, getRow, putRow, rowKey } from "./rows.js"
import type { State } from "./state.js"

export const ZERO_ADDRESS = `0x${"0".repeat(40)}`

export const holderKey = (token: string, holder: string) => rowKey(token, holder)

export const onTokensCreated = (s: State, e: DomainEventOf<"MarketCreated">): void => {
  for (const [address, side] of [
    [e.yesToken, "YES"],
    [e.noToken, "NO"]
  ] as const) {
    if (getRow(s.rows.outcomeTokens, rowKey(address), "outcome_token") !== undefined) continue
    putRow(s.rows.outcomeTokens, rowKey(address), { address, marketId: e.marketId, side, supply: 0n, holders: 0n }, "outcome_token")
  }
}

const credit = (s: State, token: OutcomeTokenRow, holder: string, value: bigint): void => {
  const key = holderKey(token.address, holder)
  const row = getRow(s.rows.holders, key, "token_holder")
  if (row === undefined) {
    putRow(
      s.rows.holders,
      key,
      { token: token.address, holder, marketId: token.marketId, side: token.side, balance: value },
      "token_holder"
    )
    token.holders += 1n
    return
  }
  row.balance += value
}

const debit = (s: State, token: OutcomeTokenRow, holder: string, value: bigint): void => {
  const key = holderKey(token.address, holder)
  const row = getRow(s.rows.holders, key, "token_holder")
  const balance = row?.balance ?? 0n
  if (balance < value) throw new Error(`Transfer of ${value} ${token.side} token ${token.address} from ${holder} holding ${balance}`)
  if (balance === value) {
    dropRow(s.rows.holders, key, "token_holder")
    token.holders -= 1n
    return
  }
  row!.balance = balance - value
}

export const onTransfer = (s: State, e: DomainEventOf<"Transfer">, at: Located, protocol: ProtocolContracts): void => {
  const token = getRow(s.rows.outcomeTokens, rowKey(at.address), "outcome_token")
  if (token === undefined || e.value === 0n || e.from === e.to) return
  if (e.from === ZERO_ADDRESS) token.supply += e.value
  else debit(s, token, e.from, e.value)
  if (e.to === ZERO_ADDRESS) token.supply -= e.value
  else credit(s, token, e.to, e.value)
  if (e.from === ZERO_ADDRESS || e.to === ZERO_ADDRESS) return
  if (protocol.isVenue(e.from) || protocol.isVenue(e.to)) return
  const yes = token.side === "YES"
  dispose(s, protocol, e.from, token.marketId, yes, e.value, 0n)
  acquire(s, protocol, e.to, token.marketId, yes, e.value, 0n)
}

/** Outcome tokens the router hands back after a trade arrive at cost 0 (USDC dust moves no position). */
export const onDustRefunded = (s: State, e: DomainEventOf<"DustRefunded">, protocol: ProtocolContracts): void => {
  const token = getRow(s.rows.outcomeTokens, rowKey(e.token), "outcome_token")
  if (token === undefined) return
  acquire(s, protocol, e.recipient, token.marketId, token.side === "YES", e.amount, 0n)
}
