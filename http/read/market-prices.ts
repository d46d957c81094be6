/** Reads of `price_snapshot`, `candle` and `trade` for a market's price history (see `market-prices.ts`). */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type { Timeframe } from "../../schema/enums.js"
import { PRICE_SCALE } from "../../schema/primitives.js"
import { checkRange, listPage, read, type ListQuery } from "../core/db.js"
import { requireMarket } from "./markets.js"
import { bigint, int, nullable, oneOf, rowDecoder } from "../core/rows.js"

/** The records of these reads (decoded rows: bigint amounts, lowercase addresses and hashes). */
export interface CandleParams {
  readonly from?: number
  readonly to?: number
  readonly limit: number
  readonly offset: number
  readonly timeframe: "1m" | "5m" | "15m" | "1h" | "4h" | "1d" | "1w"
}

export interface PriceDeltaRecord {
  readonly currentYesPrice: bigint | null
  readonly previousYesPrice: bigint | null
  readonly absolute: bigint | null
  readonly percentBps: number | null
  readonly latestAt: number | null
  readonly baselineAt: number | null
  readonly marketId: bigint
  readonly windowHours: number
  readonly windowStart: number
  readonly windowEnd: number
}

export interface PriceParams {
  readonly from?: number
  readonly to?: number
  readonly source?: "router" | "hook_amm"
  readonly limit: number
  readonly offset: number
}

export interface PricePointRecord {
  readonly blockNumber: number
  readonly logIndex: number
  readonly timestamp: number
  readonly yesPrice: bigint
  readonly noPrice: bigint
  readonly source: "router" | "hook_amm"
  readonly openInterest: bigint
}

export interface CandleRecord {
  readonly timeframe: Timeframe
  readonly timestamp: number
  readonly open: bigint | null
  readonly high: bigint | null
  readonly low: bigint | null
  readonly close: bigint | null
  readonly volume: bigint
  readonly tradeCount: number
}

export interface VolumeWindowRecord {
  readonly marketId: bigint
  readonly windowHours: number
  readonly windowStart: number
  readonly windowEnd: number
  readonly volume: bigint
  readonly tradeCount: number
}

const decodePriceRow = rowDecoder({
  block_number: int,
  log_index: int,
  timestamp: int,
  yes_price: bigint,
  source: oneOf("router", "hook_amm"),
  open_interest: bigint
})

const decodeCandleRow = rowDecoder({
  bucket: int,
  open: nullable(bigint),
  high: nullable(bigint),
  low: nullable(bigint),
  close: nullable(bigint),
  volume: bigint,
  trade_count: int
})

/**
 * The price points of a market as a list query, oldest first (filtered by `query`'s range and
 * source); `latest` orders it newest first, for the last points alone.
 */
export const pricesQuery = (
  sql: SqlClient.SqlClient,
  marketId: bigint,
  query: Omit<PriceParams, "limit" | "offset">,
  latest = false
): ListQuery<PricePointRecord> => {
  const where = sql.and([
    sql`market_id = ${marketId.toString()}::numeric`,
    ...(query.from === undefined ? [] : [sql`timestamp >= ${query.from}`]),
    ...(query.to === undefined ? [] : [sql`timestamp <= ${query.to}`]),
    ...(query.source === undefined ? [] : [sql`source = ${query.source}`])
  ])
  return {
    select: "block_number, log_index, timestamp, yes_price, source, open_interest",
    from: sql`price_snapshot where ${where}`,
    // (block_number, log_index) is the table's key: a total order.
    orderBy: latest ? "timestamp desc, block_number desc, log_index desc" : "timestamp, block_number, log_index",
    record: (raw): PricePointRecord => {
      const row = decodePriceRow(raw)
      return {
        blockNumber: row.block_number,
        logIndex: row.log_index,
        timestamp: row.timestamp,
        yesPrice: row.yes_price,
        noPrice: PRICE_SCALE - row.yes_price,
        source: row.source,
        openInterest: row.open_interest
      }
    }
  }
}

export const listPrices = (marketId: bigint, query: PriceParams) =>
  Effect.gen(function* () {
    yield* checkRange(query.from, query.to)
    yield* requireMarket(marketId)
    const sql = yield* SqlClient.SqlClient
    return yield* listPage(pricesQuery(sql, marketId, query), query)
  }).pipe(read)

export const listCandles = (marketId: bigint, query: CandleParams) =>
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
    return yield* listPage(
      {
        select: "bucket, open, high, low, close, volume, trade_count",
        from: sql`candle where ${where}`,
        orderBy: "bucket",
        record: (raw): CandleRecord => {
          const row = decodeCandleRow(raw)
          return {
            timeframe: query.timeframe as Timeframe,
            timestamp: row.bucket,
            open: row.open,
            high: row.high,
            low: row.low,
            close: row.close,
            volume: row.volume,
            tradeCount: row.trade_count
          }
        }
      },
      query
    )
  }).pipe(read)

const decodeHeadTimeRow = rowDecoder({ head_time: int })

/**
 * The time windows end at: the latest indexed block's timestamp (the unfinalized window holds
 * the head), else the latest price snapshot's, else the current time.
 */
export const headTime = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    sql`
    select coalesce(
      (select timestamp from indexed_block order by number desc limit 1),
      (select timestamp from price_snapshot order by block_number desc, log_index desc limit 1),
      extract(epoch from now())::bigint
    ) as head_time`
).pipe(Effect.map((rows) => (rows[0] === undefined ? Math.floor(Date.now() / 1000) : decodeHeadTimeRow(rows[0]).head_time)))

const decodeSnapshotRow = rowDecoder({ yes_price: bigint, timestamp: int })

export const priceDelta = (marketId: bigint, windowHours: number) =>
  Effect.gen(function* () {
    yield* requireMarket(marketId)
    const sql = yield* SqlClient.SqlClient
    const windowEnd = yield* headTime
    const windowStart = Math.max(0, windowEnd - windowHours * 3_600)
    const id = marketId.toString()
    const snapshot = (query: Effect.Effect<ReadonlyArray<unknown>, SqlError>) =>
      Effect.map(query, (rows) => (rows[0] === undefined ? undefined : decodeSnapshotRow(rows[0])))
    const [latest, before, firstInside] = yield* Effect.all(
      [
        snapshot(sql`select yes_price, timestamp from price_snapshot where market_id = ${id}::numeric and timestamp <= ${windowEnd}
          order by timestamp desc, block_number desc, log_index desc limit 1`),
        snapshot(sql`select yes_price, timestamp from price_snapshot where market_id = ${id}::numeric and timestamp <= ${windowStart}
          order by timestamp desc, block_number desc, log_index desc limit 1`),
        snapshot(sql`select yes_price, timestamp from price_snapshot where market_id = ${id}::numeric and timestamp > ${windowStart}
          and timestamp <= ${windowEnd} order by timestamp, block_number, log_index limit 1`)
      ],
      { concurrency: 3 }
    )
    const baseline = before ?? firstInside
    const current = latest?.yes_price ?? null
    const previous = baseline?.yes_price ?? null
    const absolute = current !== null && previous !== null ? current - previous : null
    const delta: PriceDeltaRecord = {
      marketId,
      windowHours,
      windowStart,
      windowEnd,
      currentYesPrice: current,
      previousYesPrice: previous,
      absolute,
      // bigint division truncates toward zero.
      percentBps: absolute !== null && previous !== null && previous !== 0n ? Number((absolute * 10_000n) / previous) : null,
      latestAt: latest?.timestamp ?? null,
      baselineAt: baseline?.timestamp ?? null
    }
    return { data: delta, meta: null }
  }).pipe(read)

const decodeVolumeRow = rowDecoder({ volume: bigint, trades: int })

export const volumeWindow = (marketId: bigint, windowHours: number) =>
  Effect.gen(function* () {
    yield* requireMarket(marketId)
    const sql = yield* SqlClient.SqlClient
    const windowEnd = yield* headTime
    const windowStart = Math.max(0, windowEnd - windowHours * 3_600)
    // Volume is the USDC side of each router Trade (buys: amountIn, sells: amountOut), as market volume.
    const [raw] = yield* sql`
      select coalesce(sum(case when trade_type in (0, 2) then amount_in else amount_out end), 0) as volume, count(*) as trades
      from trade where market_id = ${marketId.toString()}::numeric and timestamp > ${windowStart} and timestamp <= ${windowEnd}`
    const row = raw === undefined ? undefined : decodeVolumeRow(raw)
    const data: VolumeWindowRecord = {
      marketId,
      windowHours,
      windowStart,
      windowEnd,
      volume: row?.volume ?? 0n,
      tradeCount: row?.trades ?? 0
    }
    return { data, meta: null }
  }).pipe(read)
