/**
 * Reads of markets and events for the backend, over the indexer's tables and row mapping
 * (`http/read/markets.ts`), so the backend shows exactly what the indexer derived.
 *
 * Invariants: every list order ends in the primary key, so pages never overlap or skip; filters
 * and sorts come from closed sets, so the only text spliced into SQL is one of the literals here
 * and every value is a bound parameter. "Now" is the chain's time (the latest indexed block's
 * timestamp), not the wall clock: an answer depends only on the indexed head, which is what the
 * cache keys on.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { MARKET_MODULE_ID, marketStatusSql, TRADING_PAUSED_SQL, type ChainMoment } from "../../../schema/market-status.js"
import { derivedSlugId, marketSlug } from "../../../schema/market-slug.js"
import type { MarketRecord } from "../../read/markets.js"
import { read } from "../../core/db.js"
import { prepared } from "../../core/prepared.js"
import { Freshness } from "../../core/freshness.js"
import { headTime } from "../../read/market-prices.js"
import { MARKET_COLUMNS, MARKET_FROM, toMarket } from "../../read/markets.js"

/** A row selected with `MARKET_COLUMNS`, read by `toMarket`; only its id (NUMERIC, as text) is read here. */
type MarketColumns = { readonly id: string }

export { MARKET_MODULE_ID }

/** What a market's status depends on besides its own row (schema/market-status.ts), and the exchange's pause. */
export interface ChainNow extends ChainMoment {
  /** The exchange is paused: its book fills nothing and the router trades on the AMM alone. */
  readonly exchangePaused: boolean
}

export const readChainNow = Effect.zipWith(
  headTime,
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ paused: boolean; exchange_paused: boolean }>`
      select ${sql.literal(TRADING_PAUSED_SQL)} as paused,
        exists (select 1 from pause_state where paused and scope = 'exchange') as exchange_paused`
  ),
  (time, rows): ChainNow => ({ time, paused: rows[0]?.paused === true, exchangePaused: rows[0]?.exchange_paused === true }),
  { concurrent: true }
)

/**
 * `readChainNow` once per indexed head and database: both of its parts (the head block's time,
 * the pause flags) change only with an indexed block, and every market answer needs them. The
 * memo is keyed on the head as last heard of (`Freshness`); a value read after a newer block
 * committed but before its NOTIFY arrived is newer than its key, never older.
 */
const nowByDatabase = new WeakMap<object, { readonly key: string; readonly value: ChainNow }>()

export const chainNowAtHead = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const head = yield* Effect.flatMap(Freshness, (f) => f.current)
  const key = head === null ? undefined : `${head.block}:${head.hash}`
  const held = nowByDatabase.get(sql)
  if (key !== undefined && held?.key === key) return held.value
  const value = yield* read(readChainNow)
  if (key !== undefined) nowByDatabase.set(sql, { key, value })
  return value
})

/**
 * The totals of market lists by filter, for the indexed head (and database) they were counted
 * at: a total changes only with an indexed block, and counting is most of a list's cost on a
 * large index (a scan of every market). Undefined before the first head is heard of.
 */
const totalsByDatabase = new WeakMap<object, { readonly key: string; readonly totals: Map<string, number> }>()

const totalsAtHead = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const head = yield* Effect.flatMap(Freshness, (f) => f.current)
  if (head === null) return undefined
  const key = `${head.block}:${head.hash}`
  const held = totalsByDatabase.get(sql)
  if (held?.key === key) return held.totals
  const totals = new Map<string, number>()
  totalsByDatabase.set(sql, { key, totals })
  return totals
})

export const LIST_STATUSES = ["active", "paused", "closed", "resolved", "refunding"] as const
export type ListStatus = (typeof LIST_STATUSES)[number]
export const SORTS = ["newest", "volume", "ending_soon", "featured", "trending"] as const
export type Sort = (typeof SORTS)[number]

export interface MarketFilter {
  readonly status?: ListStatus
  readonly category?: string
  readonly featured?: boolean
  readonly q?: string
  readonly sortBy: Sort
  readonly sortOrder?: "asc" | "desc"
  readonly includeEventChildren: boolean
  readonly eventId?: bigint
  readonly limit: number
  readonly offset: number
}

/** Trending and hot scores look back this far (chain time). */
export const RECENT_WINDOW_SECONDS = 86_400

/** Whether market `m` is an outcome of an event (one hashed set of member ids, not a probe per market). */
const IN_EVENT = `m.id in (select jsonb_array_elements_text(e.market_ids)::numeric from event_group e)`

/** USDC volume of a trade row `t`: what a buyer paid, or what a seller got. */
const TRADE_USDC = `case when t.trade_type in (0, 2) then t.amount_in else t.amount_out end`

/**
 * Recent activity of market `m` since `$since` (a bound parameter's SQL): router trades (the
 * `trade` rows, their CLOB legs included) and the CLOB trades that did not go through the router
 * (crossing limit orders, direct market fills): order matches whose transaction holds no router
 * trade of the market, one trade per taker order and transaction, its USDC the matched shares at
 * the maker's price.
 */
const recentActivity = (since: string) => `cross join lateral (
    select coalesce(sum(x.volume), 0) as volume, count(*) as trades from (
      select ${TRADE_USDC} as volume from trade t where t.market_id = m.id and t.timestamp > ${since}
      union all
      select sum(div(o.amount * o.price, 1000000)) as volume from order_match o
      where o.market_id = m.id and o.timestamp > ${since}
        and not exists (select 1 from trade rt where rt.tx_hash = o.tx_hash and rt.market_id = o.market_id)
      group by o.tx_hash, o.taker_order_id
    ) x
  ) r`

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`)

export interface MarketWithRecent {
  readonly market: MarketRecord
  /** USDC volume and trades of the last 24 h (chain time); 0 unless the list was sorted by trending. */
  readonly recentVolume: bigint
  readonly recentTrades: number
}

export const listMarketRows = (filter: MarketFilter, now: ChainNow) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // trending and ending_soon only make sense for markets that still trade.
    const status = filter.status ?? (filter.sortBy === "trending" || filter.sortBy === "ending_soon" ? "active" : undefined)
    // The records' own rule (schema/market-status.ts), so a filtered list holds exactly the markets whose status says so.
    const statusFilter = status === undefined ? [] : [sql`${sql.literal(marketStatusSql("m"))} = ${status}`]
    const pattern = filter.q === undefined ? undefined : `%${escapeLike(filter.q)}%`
    const where = sql.and([
      ...statusFilter,
      ...(filter.category === undefined ? [] : [sql`d.category = ${filter.category}`]),
      ...(filter.featured === undefined
        ? []
        : [filter.featured ? sql.literal("d.featured") : sql.literal("coalesce(d.featured, false) = false")]),
      ...(pattern === undefined
        ? []
        : [
            sql`(m.question ilike ${pattern} or d.slug ilike ${pattern} or exists (select 1 from jsonb_each_text(d.title) tt where tt.value ilike ${pattern}))`
          ]),
      ...(filter.eventId !== undefined
        ? [
            sql`exists (select 1 from event_group e where e.id = ${filter.eventId.toString()}::numeric and e.market_ids @> jsonb_build_array(m.id::text))`
          ]
        : filter.includeEventChildren
          ? []
          : [sql.literal(`not ${IN_EVENT}`)])
    ])
    const desc = (filter.sortOrder ?? (filter.sortBy === "ending_soon" ? "asc" : "desc")) === "desc"
    const dir = desc ? "desc" : "asc"
    const order =
      filter.sortBy === "newest"
        ? `m.id ${dir}`
        : filter.sortBy === "volume"
          ? `m.volume ${dir}, m.id asc`
          : filter.sortBy === "ending_soon"
            ? `m.end_time ${dir}, m.id asc`
            : filter.sortBy === "featured"
              ? `coalesce(d.featured, false) ${dir}, m.volume desc, m.id asc`
              : `r.volume ${dir}, r.trades ${dir}, m.id asc`
    const since = now.time - RECENT_WINDOW_SECONDS
    // The 24 h window is read only when it orders the list (one index range per market).
    const recent =
      filter.sortBy === "trending"
        ? sql.literal(recentActivity(`${since}::bigint`))
        : sql.literal("cross join (select 0 as volume, 0 as trades) r")
    // One statement (one snapshot), three cheap parts: the page's ids in order over the narrow rows
    // (an index walk that stops at the page), the total as a plain count, and the full records
    // (with their event lookup) for the page alone. The outer query names the page `r` so the
    // same ORDER BY applies to it.
    const totals = yield* totalsAtHead
    const totalKey = JSON.stringify({ ...filter, limit: undefined, offset: undefined, eventId: filter.eventId?.toString() })
    const known = totals?.get(totalKey)
    const rows = yield* sql<MarketColumns & { total_count: string; recent_volume: string; recent_trades: string }>`
      with page as (
        select m.id, r.volume, r.trades from ${sql.literal(MARKET_FROM)} ${recent}
        where ${where}
        order by ${sql.literal(order)} limit ${filter.limit} offset ${filter.offset}
      )
      select ${sql.literal(MARKET_COLUMNS)}, r.volume as recent_volume, r.trades as recent_trades,
             ${known === undefined ? sql`(select count(*) from ${sql.literal(MARKET_FROM)} where ${where})` : sql`${known}::bigint`} as total_count
      from page r join market m on m.id = r.id left join display_metadata d on d.kind = 'market' and d.id = m.id
      order by ${sql.literal(order)}`
    let total = Number(rows[0]?.total_count ?? 0)
    if (rows.length === 0 && filter.offset > 0) {
      const counted = yield* sql<{ count: string }>`select count(*) as count from ${sql.literal(MARKET_FROM)} where ${where}`
      total = Number(counted[0]?.count ?? 0)
    }
    totals?.set(totalKey, total)
    return {
      rows: rows.map((row): MarketWithRecent => ({
        market: toMarket(row),
        recentVolume: BigInt(row.recent_volume),
        recentTrades: Number(row.recent_trades)
      })),
      total
    }
  }).pipe(read)

/**
 * The hot list: featured live markets first, then live markets by score, where
 * score = USDC volume of the last 24 h (chain time) + 10 USDC per trade in that window (router and
 * CLOB trades, `recentActivity`), so a
 * busy small market can outrank one large trade. Ties go to the larger total volume, then the id.
 */
export const HOT_TRADE_WEIGHT = 10_000_000n

export const listHotRows = (limit: number, now: ChainNow) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const since = now.time - RECENT_WINDOW_SECONDS
    const rows = yield* sql<MarketColumns & { recent_volume: string; recent_trades: string }>`
      select ${sql.literal(MARKET_COLUMNS)}, r.volume as recent_volume, r.trades as recent_trades
      from ${sql.literal(MARKET_FROM)} ${sql.literal(recentActivity(`${since}::bigint`))}
      where ${sql.literal(marketStatusSql("m"))} in ('active', 'paused') and not ${sql.literal(IN_EVENT)}
      order by coalesce(d.featured, false) desc, r.volume + r.trades * ${HOT_TRADE_WEIGHT.toString()}::numeric desc, m.volume desc, m.id asc
      limit ${limit}`
    return rows.map((row): MarketWithRecent => ({
      market: toMarket(row),
      recentVolume: BigInt(row.recent_volume),
      recentTrades: Number(row.recent_trades)
    }))
  }).pipe(read)

/** A market by id: the lookup of nearly every market endpoint (detail, pricing, quote), so a prepared statement. */
const MARKET_BY_ID = prepared(`select ${MARKET_COLUMNS} from ${MARKET_FROM} where m.id = $1::numeric`)

/** The market with this id, or undefined. */
export const findMarketById = (id: bigint) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<MarketColumns>(MARKET_BY_ID, [id.toString()])).pipe(
    Effect.map((rows) => (rows[0] === undefined ? undefined : toMarket(rows[0]))),
    read
  )

/**
 * The market with this slug, or undefined: the one whose display metadata names it, else the
 * market whose derived slug it is (`schema/market-slug.ts`: its id is the slug's last word; a
 * market with a metadata slug answers only to that one).
 */
export const findMarketBySlug = (slug: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<MarketColumns>`select ${sql.literal(MARKET_COLUMNS)} from ${sql.literal(MARKET_FROM)} where d.slug = ${slug}`
  ).pipe(
    Effect.map((rows) => (rows[0] === undefined ? undefined : toMarket(rows[0]))),
    Effect.flatMap((described) => {
      const id = derivedSlugId(slug)
      if (described !== undefined || id === undefined) return Effect.succeed(described)
      return Effect.map(findMarketById(id), (market) =>
        market !== undefined && market.metadata?.slug === undefined && marketSlug(market) === slug ? market : undefined
      )
    }),
    read
  )

/** Every member market of the events `eventIds`, by event, in outcome order. */
export const readEventMembers = (eventIds: ReadonlyArray<bigint>) =>
  Effect.gen(function* () {
    const byEvent = new Map<string, Array<MarketRecord>>()
    if (eventIds.length === 0) return byEvent
    const sql = yield* SqlClient.SqlClient
    const events = yield* sql<{ id: string; market_ids: ReadonlyArray<string> }>`
      select id, market_ids from event_group where id in ${sql.in(eventIds.map((id) => id.toString()))}`
    const memberIds = [...new Set(events.flatMap((e) => e.market_ids))]
    const rows =
      memberIds.length === 0
        ? []
        : yield* sql<MarketColumns>`select ${sql.literal(MARKET_COLUMNS)} from ${sql.literal(MARKET_FROM)} where m.id in ${sql.in(memberIds)}`
    const markets = new Map(rows.map((row) => [row.id, toMarket(row)]))
    for (const event of events) {
      byEvent.set(
        event.id,
        event.market_ids.flatMap((id) => markets.get(id) ?? [])
      )
    }
    return byEvent
  }).pipe(read)
