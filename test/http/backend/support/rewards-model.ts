/**
 * An independent model of the rewards rules (the table of docs/rewards.md), in plain TypeScript over the raw
 * rows of a database: what /api/point, /api/leaderboard and /api/traders must answer. It shares
 * no code with `http/backend/rewards/repository.ts` (only the rule constants), so a wrong query and
 * a wrong model would have to be wrong the same way.
 */
import { POINT_RULES as R } from "../../../../schema/protocol/point-rules.js"

type Sql = <Row extends Record<string, any>>(text: string, values?: Array<unknown>) => Promise<Array<Row>>

export interface ChainRows {
  readonly traders: ReadonlySet<string>
  readonly trades: ReadonlyArray<{
    trader: string
    recipient: string
    type: number
    amountIn: bigint
    amountOut: bigint
    market: string
    ts: number
  }>
  readonly liquidity: ReadonlyArray<{ owner: string; delta: bigint; ts: number }>
  readonly referrals: ReadonlyArray<{ referrer: string; trader: string; ts: number; block: number; log: number }>
  readonly links: ReadonlyMap<string, string>
  readonly users: ReadonlySet<string>
  readonly markets: ReadonlyMap<string, { outcome: boolean | null; resolved: boolean; resolvedAt: number | null }>
  readonly positions: ReadonlyArray<{ user: string; market: string; pnl: bigint }>
  readonly history: ReadonlyArray<{ user: string; market: string; minute: number; pnl: bigint }>
  readonly head: number
}

export const loadChainRows = async (sql: Sql): Promise<ChainRows> => {
  const [traders, trades, liquidity, referrals, links, users, markets, positions, history, head] = await Promise.all([
    sql<{ address: string }>(`select address from user_stats`),
    sql(`select trader, recipient, trade_type, amount_in::text, amount_out::text, market_id::text, timestamp from trade`),
    sql(`select owner, liquidity_delta::text, timestamp from liquidity_event`),
    sql(`select referrer, trader, timestamp, block_number, log_index from referral`),
    sql(`select referee, referrer from referral_link`),
    sql(`select address from app_user`),
    sql(`select id::text, outcome, is_resolved, resolved_at from market`),
    sql(`select user_address, market_id::text, realized_pnl::text from position`),
    sql(`select user_address, market_id::text, minute, realized_pnl::text from position_history`),
    sql(`select coalesce((select timestamp from indexed_block order by number desc limit 1),
                         (select timestamp from price_snapshot order by block_number desc, log_index desc limit 1)) as t`)
  ])
  return {
    traders: new Set(traders.map((r) => r.address)),
    trades: trades.map((t) => ({
      trader: t.trader,
      recipient: t.recipient,
      type: Number(t.trade_type),
      amountIn: BigInt(t.amount_in),
      amountOut: BigInt(t.amount_out),
      market: t.market_id,
      ts: Number(t.timestamp)
    })),
    liquidity: liquidity.map((l) => ({ owner: l.owner, delta: BigInt(l.liquidity_delta), ts: Number(l.timestamp) })),
    referrals: referrals.map((r) => ({
      referrer: r.referrer,
      trader: r.trader,
      ts: Number(r.timestamp),
      block: Number(r.block_number),
      log: Number(r.log_index)
    })),
    links: new Map(links.map((l) => [l.referee, l.referrer])),
    users: new Set(users.map((u) => u.address)),
    markets: new Map(
      markets.map((m) => [
        m.id,
        { outcome: m.outcome, resolved: m.is_resolved, resolvedAt: m.resolved_at === null ? null : Number(m.resolved_at) }
      ])
    ),
    positions: positions.map((p) => ({ user: p.user_address, market: p.market_id, pnl: BigInt(p.realized_pnl) })),
    history: history.map((h) => ({ user: h.user_address, market: h.market_id, minute: Number(h.minute), pnl: BigInt(h.realized_pnl) })),
    head: Number(head[0]?.t ?? 0)
  }
}

const usdcOf = (t: ChainRows["trades"][number]) => (t.type === 0 || t.type === 2 ? t.amountIn : t.amountOut)
const day = (ts: number) => Math.floor(ts / 86_400)

export interface ModelPoints {
  readonly points: number
  readonly counts: Record<keyof typeof R, number>
}

/** Points per address from chain events at or before `until` (null: all), connect only when `withConnect`. */
export const modelPoints = (c: ChainRows, until: number | null, withConnect: boolean): Map<string, ModelPoints> => {
  const upTo = (ts: number) => until === null || ts <= until
  const trades = c.trades.filter((t) => c.traders.has(t.trader) && upTo(t.ts))
  const volume = new Map<string, bigint>()
  const first = new Set<string>()
  const days = new Map<string, Set<number>>()
  for (const t of trades) {
    volume.set(t.trader, (volume.get(t.trader) ?? 0n) + usdcOf(t))
    if (usdcOf(t) >= 10_000_000n) first.add(t.trader)
    days.set(t.trader, (days.get(t.trader) ?? new Set()).add(day(t.ts)))
  }
  const streaks = (set: Set<number> | undefined) => {
    let total = 0
    let run = 0
    let previous: number | undefined
    for (const d of [...(set ?? [])].sort((a, b) => a - b)) {
      run = previous !== undefined && d === previous + 1 ? run + 1 : 1
      if (run % 7 === 0) total++
      previous = d
    }
    return total
  }
  const lpDays = new Map<string, Set<number>>()
  for (const l of c.liquidity)
    if (l.delta > 0n && c.traders.has(l.owner) && upTo(l.ts)) lpDays.set(l.owner, (lpDays.get(l.owner) ?? new Set()).add(day(l.ts)))
  // Referrer of each referred user: the sign-in link, else the earliest on-chain referral.
  const referrerOf = new Map(c.links)
  const onChain = [...c.referrals].filter((r) => r.trader !== r.referrer && upTo(r.ts)).sort((a, b) => a.block - b.block || a.log - b.log)
  for (const r of onChain) if (!referrerOf.has(r.trader)) referrerOf.set(r.trader, r.referrer)
  const joined = new Map<string, number>()
  const active = new Map<string, number>()
  for (const [referee, referrer] of referrerOf) {
    if (first.has(referee)) joined.set(referrer, Math.min(50, (joined.get(referrer) ?? 0) + 1))
    if ((volume.get(referee) ?? 0n) >= 1_000_000_000n) active.set(referrer, Math.min(50, (active.get(referrer) ?? 0) + 1))
  }
  const everyone = new Set([...volume.keys(), ...lpDays.keys(), ...joined.keys(), ...active.keys(), ...(withConnect ? c.users : [])])
  const out = new Map<string, ModelPoints>()
  for (const a of everyone) {
    const counts = {
      connect: withConnect && c.users.has(a) ? 1 : 0,
      firstTrade: first.has(a) ? 1 : 0,
      volume: Number((volume.get(a) ?? 0n) / 100_000_000n),
      liquidity: lpDays.get(a)?.size ?? 0,
      streak: streaks(days.get(a)),
      referralJoined: joined.get(a) ?? 0,
      referralActive: active.get(a) ?? 0
    }
    const points = (Object.keys(counts) as Array<keyof typeof R>).reduce((sum, rule) => sum + counts[rule] * R[rule].points, 0)
    out.set(a, { points, counts })
  }
  return out
}

export interface ModelRow {
  readonly address: string
  readonly volume: bigint
  readonly pnl: bigint
  readonly tradeCount: number
  readonly marketsTraded: number
  readonly resolvedMarkets: number
  readonly correctMarkets: number
  readonly accuracy: bigint | null
  readonly points: number
}

/** The board of traders with a trade after `since` (null: all), sorted as asked, ties by address. */
export const modelBoard = (
  c: ChainRows,
  since: number | null,
  sort: "volume" | "pnl" | "accuracy" | "points" | "trades",
  minResolved: number
): Array<ModelRow> => {
  const after = (ts: number | null) => since === null || (ts !== null && ts > since)
  const pointsNow = modelPoints(c, null, since === null)
  const pointsStart = since === null ? new Map<string, ModelPoints>() : modelPoints(c, since, false)
  const stats = new Map<string, { volume: bigint; trades: number; markets: Set<string> }>()
  for (const t of c.trades) {
    if (!c.traders.has(t.trader) || !after(t.ts)) continue
    const s = stats.get(t.trader) ?? { volume: 0n, trades: 0, markets: new Set<string>() }
    s.volume += usdcOf(t)
    s.trades++
    s.markets.add(t.market)
    stats.set(t.trader, s)
  }
  // Calls: per (recipient, market resolved in the window with an outcome), the side net long.
  const net = new Map<string, { yes: bigint; no: bigint; outcome: boolean }>()
  for (const t of c.trades) {
    const m = c.markets.get(t.market)
    if (m === undefined || !m.resolved || m.outcome === null || !after(m.resolvedAt)) continue
    const key = `${t.recipient}|${t.market}`
    const n = net.get(key) ?? { yes: 0n, no: 0n, outcome: m.outcome }
    if (t.type === 0) n.yes += t.amountOut
    if (t.type === 1) n.yes -= t.amountIn
    if (t.type === 2) n.no += t.amountOut
    if (t.type === 3) n.no -= t.amountIn
    net.set(key, n)
  }
  const calls = new Map<string, { made: number; correct: number }>()
  for (const [key, n] of net) {
    if (n.yes === n.no) continue
    const address = key.split("|")[0]!
    const a = calls.get(address) ?? { made: 0, correct: 0 }
    a.made++
    if (n.yes > n.no === n.outcome) a.correct++
    calls.set(address, a)
  }
  const startMinute = since === null ? null : Math.floor(since / 60) * 60
  const pnlAtStart = (user: string, market: string) => {
    if (startMinute === null) return 0n
    const before = c.history
      .filter((h) => h.user === user && h.market === market && h.minute < startMinute)
      .sort((a, b) => b.minute - a.minute)
    return before[0]?.pnl ?? 0n
  }
  const rows: Array<ModelRow> = [...stats].map(([address, s]) => {
    const call = calls.get(address) ?? { made: 0, correct: 0 }
    const pnl = c.positions.filter((p) => p.user === address).reduce((sum, p) => sum + p.pnl - pnlAtStart(p.user, p.market), 0n)
    return {
      address,
      volume: s.volume,
      pnl,
      tradeCount: s.trades,
      marketsTraded: s.markets.size,
      resolvedMarkets: call.made,
      correctMarkets: call.correct,
      accuracy: call.made >= minResolved && call.made > 0 ? (BigInt(call.correct) * 1_000_000n) / BigInt(call.made) : null,
      points: (pointsNow.get(address)?.points ?? 0) - (pointsStart.get(address)?.points ?? 0)
    }
  })
  const byAddress = (a: ModelRow, b: ModelRow) => (a.address < b.address ? -1 : 1)
  const desc = (x: bigint | number, y: bigint | number) => (x > y ? -1 : x < y ? 1 : 0)
  const order: Record<typeof sort, (a: ModelRow, b: ModelRow) => number> = {
    volume: (a, b) => desc(a.volume, b.volume) || byAddress(a, b),
    pnl: (a, b) => desc(a.pnl, b.pnl) || byAddress(a, b),
    accuracy: (a, b) => desc(a.accuracy!, b.accuracy!) || desc(a.resolvedMarkets, b.resolvedMarkets) || byAddress(a, b),
    points: (a, b) => desc(a.points, b.points) || byAddress(a, b),
    trades: (a, b) => desc(a.tradeCount, b.tradeCount) || desc(a.volume, b.volume) || byAddress(a, b)
  }
  return rows.filter((r) => sort !== "accuracy" || r.accuracy !== null).sort(order[sort])
}

/** "0.5" -> 500000n (exact). */
const sixDecimals = (text: string): bigint => {
  const [whole, fraction = ""] = text.split(".")
  return BigInt(whole!) * 1_000_000n + BigInt(fraction.padEnd(6, "0"))
}

/** A board answer's rows in the model's terms. */
export const asModelRows = (data: ReadonlyArray<any>): Array<ModelRow> =>
  data.map((r) => ({
    address: r.address,
    volume: BigInt(r.volume.raw),
    pnl: BigInt(r.pnl.raw),
    tradeCount: r.tradeCount,
    marketsTraded: r.marketsTraded,
    resolvedMarkets: r.resolvedMarkets,
    correctMarkets: r.correctMarkets,
    accuracy: r.accuracy === null ? null : sixDecimals(r.accuracy),
    points: r.points
  }))
