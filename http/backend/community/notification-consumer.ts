/**
 * Notifications from the indexer's commits: a consumer woken by every move of the indexed head
 * (`http/core/indexed-heads.ts`: the `predix_indexed` NOTIFY) and by a slow timer (faucet
 * deliveries commit no block) that turns what the indexed tables gained
 * since its cursor into notifications, in one transaction with the cursor's advance.
 *
 * Invariants:
 * - one notification per (user, type, source event): the table's unique key, every insert is
 *   ON CONFLICT DO NOTHING, so a pass that repeats a range (a restart before the cursor moved, a
 *   second consumer, a replay after a reorg) adds nothing twice;
 * - exactly once across downtime: the cursor (the indexed block and its hash) commits with the
 *   notifications it covers; a consumer that was down resumes from it;
 * - one consumer at a time: a pass holds a transaction-scoped advisory lock (and the cursor row's
 *   lock); other instances' passes wait and then find nothing left to do;
 * - reorgs: when the cursor's block is above the indexed head, or its hash differs from the
 *   head's or the `indexed_block` row of that number, everything above the finalized block (the
 *   lowest block the indexer may still revert, minus one) is checked: a notification whose
 *   source event is gone is deleted, and the range is derived again (the new branch's events).
 *
 * Sources: fills are `order_match` rows (maker and taker orders), router trades are `trade` rows
 * (their trader and, when another, their recipient: "your trade executed"), pauses are
 * `pause_change` rows; these carry their block, log index and transaction. Cancellations,
 * resolutions and redemptions are changes of mutable rows (`exchange_order`, `market`,
 * `position`): they are looked for from the cursor block's timestamp on, and carry the head block
 * at which they were first seen (at or above the event's block, so a reorg that could remove the
 * event re-checks them); a cancellation also names its OrderCancelled's transaction, and is
 * retracted when a reorg leaves the order uncancelled or cancelled by another transaction. Faucet deliveries come
 * from the faucet's own `faucet_claim` rows (confirmed receipts), which no reorg of the index
 * touches. Replies are written by the comment that replies (`community/comments-repository.ts`).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Queue, Schedule } from "effect"
import { readCheckpoint } from "../../../schema/io/indexer-checkpoint.js"
import { IndexedHeads, IndexedHeadsShared } from "../../core/indexed-heads.js"

/** The advisory lock's first key ("notification consumer"); the second is the chain id. */
const LOCK_CLASS = 0x4e6f7469

export interface PassResult {
  /** The indexed head the pass brought the cursor to (null: nothing indexed yet). */
  readonly head: number | null
  /** Blocks above this one were (re)derived. */
  readonly from: number
  readonly reorg: boolean
  readonly inserted: number
  readonly retracted: number
}

/** The resolution a market's row says, as stored in notification details. */
const RESOLUTION = `case when m.refund_mode then 'REFUND' when m.is_resolved then (case when m.outcome then 'YES' else 'NO' end) end`
const HOLDS = `(p.yes_balance > 0 or p.no_balance > 0)`

/** The default horizon: an hour of 1-second blocks. */
export const DEFAULT_HORIZON_BLOCKS = 3_600

/** `horizonBlocks`: only events in the last this many blocks below the chain head are notified. */
export const makeNotificationConsumer = (chainId: number, horizonBlocks: number = DEFAULT_HORIZON_BLOCKS) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** Deletes the chain notifications above `ancestor` whose source event the index no longer holds. */
    const retract = (ancestor: number) =>
      sql`delete from notification n where n.block_number > ${ancestor} and (
          (n.type = 'orderFilled' and not exists (select 1 from order_match m
             where m.block_number = n.block_number and m.log_index = (n.detail ->> 'logIndex')::int and m.tx_hash = n.tx_hash))
          or (n.type = 'marketPaused' and not exists (select 1 from pause_change c
             where c.block_number = n.block_number and c.log_index = (n.detail ->> 'logIndex')::int and c.tx_hash = n.tx_hash and c.paused))
          or (n.type = 'tradeExecuted' and not exists (select 1 from trade t
             where t.block_number = n.block_number and t.log_index = (n.detail ->> 'logIndex')::int and t.tx_hash = n.tx_hash))
          or (n.type = 'orderCancelled' and not exists (select 1 from exchange_order o
             where o.id = n.detail ->> 'orderId' and o.status = 'CANCELLED' and o.cancelled_tx is not distinct from n.tx_hash))
          or (n.type in ('marketResolved', 'redemptionAvailable') and not exists (select 1 from market m
             where m.id = n.market_id and ${sql.literal(RESOLUTION)} = n.detail ->> 'resolution'))
        ) returning n.id`

    /**
     * Inserts the notifications of the events in blocks (from, head] and of row changes since the
     * chain time `since` (null: any time; "never": none, the range is history beyond the horizon).
     */
    const derive = (from: number, head: number, since: number | null | "never") =>
      Effect.gen(function* () {
        const changedSince = (column: string) =>
          since === null ? sql`true` : since === "never" ? sql`false` : sql`${sql.literal(column)} >= ${since}`
        const fills = yield* sql`
          insert into notification (user_address, type, source, market_id, block_number, tx_hash, detail)
          select f.owner, 'orderFilled', 'match:' || f.block_number || ':' || f.log_index || ':' || f.role, f.market_id, f.block_number, f.tx_hash,
            jsonb_build_object('orderId', f.order_id, 'role', f.role, 'logIndex', f.log_index, 'shares', f.amount::text, 'price', f.price::text,
              'filled', f.through::text,
              'fill', case when o.amount is not null and f.through >= o.amount then 'FULL' else 'PARTIAL' end)
          from (
            select m.block_number, m.log_index, m.tx_hash, m.market_id, m.amount, m.price, x.owner, x.order_id, x.role,
              coalesce((select sum(a.amount) from order_match a where a.maker_order_id = x.order_id and (a.block_number, a.log_index) <= (m.block_number, m.log_index)), 0)
              + coalesce((select sum(b.amount) from order_match b where b.taker_order_id = x.order_id and (b.block_number, b.log_index) <= (m.block_number, m.log_index)), 0) as through
            from order_match m
            cross join lateral (values (m.maker, m.maker_order_id, 'maker'), (m.taker, m.taker_order_id, 'taker')) as x (owner, order_id, role)
            where m.block_number > ${from} and m.block_number <= ${head} and x.owner is not null
          ) f
          left join exchange_order o on o.id = f.order_id
          on conflict (user_address, type, source) do nothing returning id`
        const trades = yield* sql`
          insert into notification (user_address, type, source, market_id, block_number, tx_hash, detail)
          select x.owner, 'tradeExecuted', 'trade:' || t.block_number || ':' || t.log_index, t.market_id, t.block_number, t.tx_hash,
            jsonb_build_object('role', x.role, 'logIndex', t.log_index, 'tradeType', t.trade_type, 'amountIn', t.amount_in::text,
              'amountOut', t.amount_out::text, 'clobFilled', t.clob_filled::text, 'ammFilled', t.amm_filled::text,
              'trader', t.trader, 'recipient', t.recipient)
          from trade t
          cross join lateral (values (t.trader, 'trader'), (t.recipient, 'recipient')) as x (owner, role)
          where t.block_number > ${from} and t.block_number <= ${head} and (x.role = 'trader' or t.recipient <> t.trader)
          on conflict (user_address, type, source) do nothing returning id`
        const cancels = yield* sql`
          insert into notification (user_address, type, source, market_id, block_number, tx_hash, detail)
          select o.owner, 'orderCancelled', 'order:' || o.id, o.market_id, ${head}, o.cancelled_tx,
            jsonb_build_object('orderId', o.id, 'filled', o.filled::text, 'amount', o.amount::text)
          from exchange_order o where o.status = 'CANCELLED' and ${changedSince("o.updated_at")}
          on conflict (user_address, type, source) do nothing returning id`
        // A resolution is a broadcast: one row (no user) read by the market's holders (community/notifications-repository.ts).
        const resolutions = yield* sql`
          insert into notification (user_address, type, source, market_id, block_number, detail)
          select null, 'marketResolved', 'market:' || m.id, m.id, ${head},
            jsonb_build_object('resolution', ${sql.literal(RESOLUTION)}, 'resolutionType', m.resolution_type)
          from market m
          where (m.is_resolved or m.refund_mode) and ${changedSince("m.resolved_at")}
          on conflict (type, source) where user_address is null do nothing returning id`
        const redemptions = yield* sql`
          insert into notification (user_address, type, source, market_id, block_number, detail)
          select p.user_address, 'redemptionAvailable', 'market:' || m.id, m.id, ${head},
            jsonb_build_object('kind', case when m.refund_mode then 'refund' else 'redeem' end, 'resolution', ${sql.literal(RESOLUTION)},
              'yes', p.yes_balance::text, 'no', p.no_balance::text)
          from market m join position p on p.market_id = m.id
          where ${changedSince("m.resolved_at")} and (
            (m.refund_mode and ${sql.literal(HOLDS)})
            or (not m.refund_mode and m.is_resolved and ((m.outcome and p.yes_balance > 0) or (not m.outcome and p.no_balance > 0))))
          on conflict (user_address, type, source) do nothing returning id`
        // A pause is a broadcast: one row (no user) read by every holder (community/notifications-repository.ts).
        const pauses = yield* sql`
          insert into notification (user_address, type, source, block_number, tx_hash, detail)
          select null, 'marketPaused', 'pause:' || c.block_number || ':' || c.log_index, c.block_number, c.tx_hash,
            jsonb_build_object('scope', c.scope, 'moduleId', c.module_id, 'logIndex', c.log_index)
          from pause_change c
          where c.paused and c.block_number > ${from} and c.block_number <= ${head}
          on conflict (type, source) where user_address is null do nothing returning id`
        const faucet = yield* sql`
          insert into notification (user_address, type, source, tx_hash, detail)
          select f.owner, 'faucetDelivered', 'faucet:' || f.address, f.tx_hash,
            jsonb_build_object('address', f.address, 'txHash', f.tx_hash, 'usdc', f.usdc_raw::text, 'eth', f.eth_raw::text)
          from faucet_claim f where f.status = 'confirmed'
          on conflict (user_address, type, source) do nothing returning id`
        return fills.length + trades.length + cancels.length + resolutions.length + redemptions.length + pauses.length + faucet.length
      })

    /** One pass: from the cursor to the indexed head, in one transaction. */
    const pass: Effect.Effect<PassResult, import("@effect/sql/SqlError").SqlError> = sql.withTransaction(
      Effect.gen(function* () {
        yield* sql`select pg_advisory_xact_lock(${LOCK_CLASS}, ${chainId})`
        yield* sql`insert into notification_cursor (chain_id, block_number) values (${chainId}, -1) on conflict (chain_id) do nothing`
        const [cursor] = yield* sql<{ block_number: string; block_hash: string | null; block_timestamp: string | null }>`
          select block_number, block_hash, block_timestamp from notification_cursor where chain_id = ${chainId} for update`
        const checkpoint = yield* readCheckpoint(chainId).pipe(Effect.provideService(SqlClient.SqlClient, sql))
        if (cursor === undefined || checkpoint === undefined) return { head: null, from: -1, reorg: false, inserted: 0, retracted: 0 }
        const at = Number(cursor.block_number)
        const head = checkpoint.block
        const [window] = yield* sql<{
          lowest: string | null
          lowest_timestamp: string | null
          at_hash: string | null
          head_timestamp: string | null
        }>`
          select (select min(number) from indexed_block where chain_id = ${chainId}) as lowest,
                 (select timestamp from indexed_block where chain_id = ${chainId} order by number limit 1) as lowest_timestamp,
                 (select hash from indexed_block where chain_id = ${chainId} and number = ${at}) as at_hash,
                 (select timestamp from indexed_block where chain_id = ${chainId} and number = ${head}) as head_timestamp`
        const consistent =
          at === -1
            ? true
            : at > head
              ? false
              : at === head
                ? cursor.block_hash === checkpoint.hash
                : // A block no longer in the window is final: it cannot have been reorged.
                  window?.at_hash == null || window.at_hash === cursor.block_hash
        const lowest = window?.lowest == null ? null : Number(window.lowest)
        const start = consistent ? at : lowest === null ? -1 : Math.min(head, lowest - 1)
        // Retraction covers everything a reorg may have changed, however old the horizon makes it.
        const retracted = consistent ? 0 : (yield* retract(start)).length
        // Row changes of the blocks above `start` are at or after the timestamp of the block above it.
        const sinceText = consistent ? cursor.block_timestamp : lowest !== null && start === lowest - 1 ? window!.lowest_timestamp : null
        let from = start
        let since: number | null | "never" = sinceText === null ? null : Number(sinceText)
        // Near the head: only blocks above `floor` (the horizon below the newest chain head the
        // indexer has seen) are notified; a range below it is history, skipped in O(1).
        const floor = Math.max(head, checkpoint.head ?? head) - horizonBlocks
        if (start < floor) from = Math.min(floor, head)
        // No new blocks, no new row changes. Else "any time" only when the whole chain is in range
        // (from -1); a range that starts later without its start's time (skipped to the floor, or
        // a cursor block the indexer no longer held) looks from the first block above it the
        // indexer still holds (its unfinalized window): the horizon, or less when it reaches below.
        if (from >= head) since = "never"
        else if (from !== start || (since === null && from >= 0)) {
          const [above] = yield* sql<{ timestamp: string }>`select timestamp from indexed_block
            where chain_id = ${chainId} and number > ${from} order by number limit 1`
          since = above === undefined ? "never" : Number(above.timestamp)
        }
        const inserted = yield* derive(from, head, since)
        yield* sql`update notification_cursor set block_number = ${head}, block_hash = ${checkpoint.hash},
          block_timestamp = ${window?.head_timestamp ?? null}, updated_at = now() where chain_id = ${chainId}`
        return { head, from, reorg: !consistent, inserted, retracted }
      })
    )
    return { pass }
  })

export interface ConsumerOptions {
  /** How often a pass runs without a move of the head (faucet deliveries, a missed notification). Default 5 s. */
  readonly pollEveryMs?: number
  /** Only events in blocks above (chain head - horizonBlocks) are notified. Default DEFAULT_HORIZON_BLOCKS. */
  readonly horizonBlocks?: number
}

/**
 * The consumer of this process for as long as the layer lives: a pass at start (catching up), then
 * on every commit of `chainId` (the process's `IndexedHeads` when one is provided, else its own).
 */
export const NotificationConsumerLive = (chainId: number, options: ConsumerOptions = {}) =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const consumer = yield* makeNotificationConsumer(chainId, options.horizonBlocks)
      const moves = yield* Effect.flatMap(IndexedHeads, (heads) => heads.subscribe)
      // At most one pass waiting: a burst of commits is covered by the next pass.
      const wake = yield* Queue.sliding<void>(1)
      yield* Queue.take(moves).pipe(Effect.zipRight(Queue.offer(wake, undefined)), Effect.forever, Effect.forkScoped)
      yield* Queue.offer(wake, undefined).pipe(Effect.repeat(Schedule.spaced(`${options.pollEveryMs ?? 5_000} millis`)), Effect.forkScoped)
      yield* Queue.take(wake).pipe(
        Effect.zipRight(consumer.pass),
        Effect.tap((result) =>
          result.inserted + result.retracted > 0 || result.reorg
            ? Effect.logDebug("notifications: consumed indexed blocks").pipe(Effect.annotateLogs({ ...result }))
            : Effect.void
        ),
        Effect.catchAllCause((cause) => Effect.logWarning("notifications: pass failed; retried at the next commit", cause)),
        Effect.forever,
        Effect.forkScoped
      )
    })
  ).pipe(Layer.provide(IndexedHeadsShared(chainId, options.pollEveryMs === undefined ? {} : { pollEveryMs: options.pollEveryMs })))
