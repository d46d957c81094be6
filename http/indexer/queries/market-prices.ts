/** Reads of `price_snapshot`, `candle` and `trade` for a market's price history (see `market-prices.ts`). */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Timeframe } from "../../../schema/enums.js"
import { PRICE_SCALE } from "../../../schema/primitives.js"
import type { CandleQuery, PriceDelta, PriceQuery, VolumeWindow } from "../market-prices.js"
import { checkRange, pageOf, read } from "./db.js"
import { requireMarket } from "./markets.js"

export const listPrices = (marketId: bigint, query: PriceQuery) =>
  Effect.gen(function* () {
    yield* checkRange(query.from, query.to)
    yield* requireMarket(marketId)
    const sql = yield* SqlClient.SqlClient
    const where = sql.and([
      sql`market_id = ${marketId.toString()}::numeric`,
      ...(query.from === undefined ? [] : [sql`timestamp >= ${query.from}`]),
      ...(query.to === undefined ? [] : [sql`timestamp <= ${query.to}`]),
      ...(query.source === undefined ? [] : [sql`source = ${query.source}`])
    ])
    const page = yield* pageOf(
      sql<{ block_number: string; log_index: number; timestamp: string; yes_price: string; source: "router" | "hook_amm"; open_interest: string; total_count: string }>`
        select block_number, log_index, timestamp, yes_price, source, open_interest, count(*) over () as total_count
        from price_snapshot where ${where}
        order by timestamp, block_number, log_index limit ${query.limit} offset ${query.offset}`,
      sql<{ count: string }>`select count(*) as count from price_snapshot where ${where}`,
      query.offset
    )
    const data = page.rows.map((row) => ({
      blockNumber: Number(row.block_number),
      logIndex: row.log_index,
      timestamp: Number(row.timestamp),
      yesPrice: BigInt(row.yes_price),
      noPrice: PRICE_SCALE - BigInt(row.yes_price),
      source: row.source,
      openInterest: BigInt(row.open_interest)
    }))
    return { data, meta: { limit: query.limit, offset: query.offset, count: page.count } }
  }).pipe(read)

const priceOrNull = (value: string | null) => (value === null ? null : BigInt(value))

export const listCandles = (marketId: bigint, query: CandleQuery) =>
  Effect.gen(function* () {
    yield* checkRange(query.from, query.to)
    yield* requireMarket(marketId)
    const sql = yield* SqlClient.SqlClient
    const where = sql.and([
      sql`market_id = ${marketId.toString()}::numeric`,
      sql`timeframe = ${query.timeframe}`,
      ...(query.from === undefined ? [] : [sql`bucket >= ${query.from}`]),
      ...(query.to === undefined ? [] : [sql`bucket <= ${query.to}`])
    ])
    const page = yield* pageOf(
      sql<{ bucket: string; open: string | null; high: string | null; low: string | null; close: string | null; volume: string; trade_count: string; total_count: string }>`
        select bucket, open, high, low, close, volume, trade_count, count(*) over () as total_count
        from candle where ${where} order by bucket limit ${query.limit} offset ${query.offset}`,
      sql<{ count: string }>`select count(*) as count from candle where ${where}`,
      query.offset
    )
    const data = page.rows.map((row) => ({
      timeframe: query.timeframe as Timeframe,
      timestamp: Number(row.bucket),
      open: priceOrNull(row.open),
      high: priceOrNull(row.high),
      low: priceOrNull(row.low),
      close: priceOrNull(row.close),
      volume: BigInt(row.volume),
      tradeCount: Number(row.trade_count)
    }))
    return { data, meta: { limit: query.limit, offset: query.offset, count: page.count } }
  }).pipe(read)

/**
 * The time windows end at: the latest indexed block's timestamp (the unfinalized window holds
 * the head), else the latest price snapshot's, else the current time.
 */
export const headTime = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ head_time: string }>`
    select coalesce(
      (select timestamp from indexed_block order by number desc limit 1),
      (select timestamp from price_snapshot order by block_number desc, log_index desc limit 1),
      extract(epoch from now())::bigint
    ) as head_time`
).pipe(Effect.map((rows) => Number(rows[0]?.head_time ?? Math.floor(Date.now() / 1000))))

export const priceDelta = (marketId: bigint, windowHours: number) =>
  Effect.gen(function* () {
    yield* requireMarket(marketId)
    const sql = yield* SqlClient.SqlClient
    const windowEnd = yield* headTime
    const windowStart = Math.max(0, windowEnd - windowHours * 3_600)
    const id = marketId.toString()
    type Snapshot = { yes_price: string; timestamp: string }
    const snapshot = (query: ReturnType<typeof sql<Snapshot>>) => Effect.map(query, (rows) => rows[0])
    const [latest, before, firstInside] = yield* Effect.all(
      [
        snapshot(sql<Snapshot>`select yes_price, timestamp from price_snapshot where market_id = ${id}::numeric and timestamp <= ${windowEnd}
          order by timestamp desc, block_number desc, log_index desc limit 1`),
        snapshot(sql<Snapshot>`select yes_price, timestamp from price_snapshot where market_id = ${id}::numeric and timestamp <= ${windowStart}
          order by timestamp desc, block_number desc, log_index desc limit 1`),
        snapshot(sql<Snapshot>`select yes_price, timestamp from price_snapshot where market_id = ${id}::numeric and timestamp > ${windowStart}
          and timestamp <= ${windowEnd} order by timestamp, block_number, log_index limit 1`)
      ],
      { concurrency: 3 }
    )
    const baseline = before ?? firstInside
    const current = latest === undefined ? null : BigInt(latest.yes_price)
    const previous = baseline === undefined ? null : BigInt(baseline.yes_price)
    const absolute = current !== null && previous !== null ? current - previous : null
    const delta: PriceDelta = {
      marketId,
      windowHours,
      windowStart,
      windowEnd,
      currentYesPrice: current,
      previousYesPrice: previous,
      absolute,
      // bigint division truncates toward zero.
      percentBps: absolute !== null && previous !== null && previous !== 0n ? Number((absolute * 10_000n) / previous) : null,
      latestAt: latest === undefined ? null : Number(latest.timestamp),
      baselineAt: baseline === undefined ? null : Number(baseline.timestamp)
    }
    return { data: delta, meta: null }
  }).pipe(read)

export const volumeWindow = (marketId: bigint, windowHours: number) =>
  Effect.gen(function* () {
    yield* requireMarket(marketId)
    const sql = yield* SqlClient.SqlClient
    const windowEnd = yield* headTime
    const windowStart = Math.max(0, windowEnd - windowHours * 3_600)
    // Volume is the USDC side of each router Trade (buys: amountIn, sells: amountOut), as market volume.
    const [row] = yield* sql<{ volume: string; trades: string }>`
      select coalesce(sum(case when trade_type in (0, 2) then amount_in else amount_out end), 0) as volume, count(*) as trades
      from trade where market_id = ${marketId.toString()}::numeric and timestamp > ${windowStart} and timestamp <= ${windowEnd}`
    const data: VolumeWindow = {
      marketId,
      windowHours,
      windowStart,
      windowEnd,
      volume: BigInt(row?.volume ?? "0"),
      tradeCount: Number(row?.trades ?? 0)
    }
    return { data, meta: null }
  }).pipe(read)
