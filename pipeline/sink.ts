/**
 * The Postgres sink: load the rows a batch touches, and write a
 * folded batch back in ONE transaction together with its undo images and the checkpoint.
 *
 * Invariants:
 * - a batch's derived rows, its undo rows and the checkpoint commit together or not at all, so a
 *   crash leaves the last committed batch intact and a restart resumes right after it;
 * - undo images are written only for unfinalized blocks, and hold each touched row as it was
 *   before the batch (null when it did not exist); `revertTo` restores them;
 * - every write is set-based (`unnest` of column arrays), never a row at a time.
 *
 * The first slice's tables (market, position, user_stats, protocol_stats, trade, price_snapshot)
 * have their own statements here; every later table goes through the descriptors of `tables.ts`
 * and the generic code of `rows-sink.ts`, in the same transaction and the same undo log.
 */
import { SqlClient, type SqlError } from "@effect/sql"
import { Data, Effect } from "effect"
import {
  emptyProtocol,
  positionKey,
  type MarketRow,
  type PositionRow,
  type ProtocolRow,
  type UserRow,
  type Working
} from "./reduce/markets.js"
import type { KeyedRows, State } from "./reduce/state.js"
import { emptyLogs, KEYED_NAMES, LOG_NAMES } from "./reduce/state.js"
import type { RowKeys } from "./keys.js"
import type { KeyPart } from "./reduce/rows.js"
import type { RowCache, Touched } from "./row-cache.js"
import { copyIn } from "./copy-in.js"
import { appendRows as appendTableRows, loadKeyed, revertAppended, revertKeyed, writeKeyed, writeTouchedKeyed, type AnyRows, type UndoEntry } from "./rows-sink.js"
import { APPEND_TABLES, KEYED_TABLES, type DbValue } from "./tables.js"

export interface Keys {
  readonly markets: ReadonlySet<bigint>
  readonly positions: ReadonlySet<string>
  readonly users: ReadonlySet<string>
}

export interface Checkpoint {
  readonly chainId: number
  readonly block: number
  readonly hash: string
  readonly digest: string
  readonly head: number | null
}

const s = (v: bigint | number) => v.toString()
const int = (v: string | number | null): number | null => (v === null ? null : Number(v))

interface MarketDb {
  id: string; question: string; end_time: string; oracle: string; creator: string; yes_token: string; no_token: string
  created_at: string; created_block: string; created_tx: string; total_collateral: string; volume: string; trade_count: string
  is_resolved: boolean; outcome: boolean | null; resolution_type: MarketRow["resolutionType"]; resolved_at: string | null
  refund_mode: boolean; yes_price: string; last_trade_at: string | null
}

const marketFromDb = (r: MarketDb): MarketRow => ({
  id: BigInt(r.id), question: r.question, endTime: BigInt(r.end_time), oracle: r.oracle, creator: r.creator,
  yesToken: r.yes_token, noToken: r.no_token, createdAt: Number(r.created_at), createdBlock: Number(r.created_block),
  createdTx: r.created_tx, totalCollateral: BigInt(r.total_collateral), volume: BigInt(r.volume), tradeCount: BigInt(r.trade_count),
  isResolved: r.is_resolved, outcome: r.outcome, resolutionType: r.resolution_type, resolvedAt: int(r.resolved_at),
  refundMode: r.refund_mode, yesPrice: BigInt(r.yes_price), lastTradeAt: int(r.last_trade_at)
})

/** Splits `keys` into the entries `cached` holds (handed to `hit`) and the keys it does not. */
const missesOf = <K, V>(keys: Iterable<K>, cached: ReadonlyMap<K, V> | undefined, hit: (key: K, value: V) => void, complete: boolean): Array<K> => {
  const misses: Array<K> = []
  for (const key of keys) {
    if (cached !== undefined && cached.has(key)) hit(key, cached.get(key)!)
    else if (!complete) misses.push(key)
  }
  return misses
}

/**
 * Reads the rows of `keys` into a fresh working set (absent rows stay absent): from `cache` where
 * it holds them, from Postgres otherwise.
 */
export const loadWorking = (keys: Keys, cache?: RowCache) =>
  loadWorkingInto({ markets: new Map(), positions: new Map(), users: new Map(), protocol: emptyProtocol(), appended: { trades: [], priceSnapshots: [] } }, keys, cache, true)

/**
 * Reads the rows of `keys` into `w` (absent rows stay absent), and the protocol row when
 * `protocol`: a second load for keys only the first one's rows reveal (see batch.ts).
 */
export const loadWorkingInto = (w: Working, keys: Keys, cache: RowCache | undefined, protocol: boolean) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const marketMisses = missesOf(keys.markets, cache?.markets, (id, row) => row !== null && w.markets.set(id, row), cache?.complete === true)
    const positionMisses = missesOf(keys.positions, cache?.positions, (key, row) => row !== null && w.positions.set(key, row), cache?.complete === true)
    const userMisses = missesOf(keys.users, cache?.users, (address, row) => row !== null && w.users.set(address, row), cache?.complete === true)
    if (marketMisses.length > 0) {
      const markets = yield* sql.unsafe<MarketDb>(`select * from market where id = any($1::numeric[])`, [marketMisses.map(s)])
      for (const r of markets) w.markets.set(BigInt(r.id), marketFromDb(r))
    }
    if (positionMisses.length > 0) {
      const positions = yield* sql.unsafe<{ user_address: string; market_id: string; yes_balance: string; no_balance: string; yes_cost: string; no_cost: string; realized_pnl: string }>(
        `select p.* from position p join unnest($1::text[], $2::numeric[]) as k(u, m) on p.user_address = k.u and p.market_id = k.m`,
        [positionMisses.map((k) => k.split(":")[0]!), positionMisses.map((k) => k.split(":")[1]!)]
      )
      for (const r of positions) {
        w.positions.set(positionKey(r.user_address, BigInt(r.market_id)), {
          user: r.user_address, marketId: BigInt(r.market_id), yesBalance: BigInt(r.yes_balance), noBalance: BigInt(r.no_balance),
          yesCost: BigInt(r.yes_cost), noCost: BigInt(r.no_cost), realizedPnl: BigInt(r.realized_pnl)
        } satisfies PositionRow)
      }
    }
    if (userMisses.length > 0) {
      const users = yield* sql.unsafe<{ address: string; volume: string; trade_count: string; realized_pnl: string; traded: boolean }>(
        `select * from user_stats where address = any($1::text[])`,
        [userMisses]
      )
      for (const r of users) {
        w.users.set(r.address, { address: r.address, volume: BigInt(r.volume), tradeCount: BigInt(r.trade_count), realizedPnl: BigInt(r.realized_pnl), traded: r.traded } satisfies UserRow)
      }
    }
    if (!protocol) return w
    if (cache?.protocol !== undefined) w.protocol = cache.protocol
    else if (cache?.complete !== true) {
      const protocol = yield* sql.unsafe<{ total_markets: string; total_volume: string; total_trades: string; total_users: string }>(`select * from protocol_stats where id = 1`)
      if (protocol[0] !== undefined) {
        w.protocol = { totalMarkets: BigInt(protocol[0].total_markets), totalVolume: BigInt(protocol[0].total_volume), totalTrades: BigInt(protocol[0].total_trades), totalUsers: BigInt(protocol[0].total_users) }
      }
    }
    return w
  })

/**
 * Loads the keyed rows of `keys` into `rows` (strict sets: a key not loaded cannot be used), from
 * `cache` where it holds them.
 */
export const loadKeyedInto = (rows: KeyedRows, keys: RowKeys, cache?: RowCache) =>
  Effect.forEach(
    KEYED_NAMES,
    (name) => {
      const into = rows[name].map as Map<string, unknown>
      const cached = cache?.keyed[name]
      const misses = new Map<string, ReadonlyArray<KeyPart>>()
      for (const [key, parts] of keys[name]) {
        if (cached?.has(key) === true) into.set(key, cached.get(key))
        else if (cache?.complete === true) into.set(key, null)
        else misses.set(key, parts)
      }
      return loadKeyed(KEYED_TABLES[name], misses, true).pipe(
        Effect.map((loaded) => {
          for (const [key, row] of loaded.map) into.set(key, row)
        })
      )
    },
    { discard: true }
  )

/** The first slice's rows of `keys` plus every keyed row of `rowKeys`, as a strict state. */
export const loadState = (keys: Keys, rowKeys: RowKeys, cache?: RowCache) =>
  Effect.gen(function* () {
    const working = yield* loadWorking(keys, cache)
    const rows = Object.fromEntries(KEYED_NAMES.map((n) => [n, { strict: true, map: new Map() }])) as unknown as KeyedRows
    yield* loadKeyedInto(rows, rowKeys, cache)
    const state: State = { ...working, rows, logs: emptyLogs(), pendingFills: new Map(), moved: new Set() }
    return state
  })

/** JSON image of a row for the undo log (bigints as strings). */
const image = (row: object | undefined) =>
  row === undefined ? null : JSON.stringify(row, (_, v) => (typeof v === "bigint" ? v.toString() : v))

/** Images of every row of `before` under the keys `after` holds, for undo. */
export const undoImages = (before: Working, after: Working) => {
  const rows: Array<{ table: string; key: string; image: string | null }> = []
  for (const id of after.markets.keys()) rows.push({ table: "market", key: id.toString(), image: image(before.markets.get(id)) })
  for (const key of after.positions.keys()) rows.push({ table: "position", key, image: image(before.positions.get(key)) })
  for (const key of after.users.keys()) rows.push({ table: "user_stats", key, image: image(before.users.get(key)) })
  rows.push({ table: "protocol_stats", key: "1", image: image(before.protocol) })
  return rows
}

/** A first-slice table: its columns (SQL types, key) and a row's values in column order. */
interface SliceTable<R> {
  readonly name: string
  readonly columns: ReadonlyArray<readonly [name: string, type: string]>
  readonly key: ReadonlyArray<string>
  readonly values: (row: R) => ReadonlyArray<DbValue>
}

const opt = (v: bigint | number | null) => (v === null ? null : s(v))

const MARKET: SliceTable<MarketRow> = {
  name: "market",
  columns: [
    ["id", "numeric"], ["question", "text"], ["end_time", "numeric"], ["oracle", "text"], ["creator", "text"], ["yes_token", "text"], ["no_token", "text"],
    ["created_at", "bigint"], ["created_block", "bigint"], ["created_tx", "text"], ["total_collateral", "numeric"], ["volume", "numeric"], ["trade_count", "bigint"],
    ["is_resolved", "boolean"], ["outcome", "boolean"], ["resolution_type", "text"], ["resolved_at", "bigint"], ["refund_mode", "boolean"], ["yes_price", "numeric"],
    ["last_trade_at", "bigint"]
  ],
  key: ["id"],
  values: (r) => [
    s(r.id), r.question, s(r.endTime), r.oracle, r.creator, r.yesToken, r.noToken, s(r.createdAt), s(r.createdBlock), r.createdTx, s(r.totalCollateral), s(r.volume),
    s(r.tradeCount), r.isResolved, r.outcome, r.resolutionType, opt(r.resolvedAt), r.refundMode, s(r.yesPrice), opt(r.lastTradeAt)
  ]
}

const POSITION: SliceTable<PositionRow> = {
  name: "position",
  columns: [["user_address", "text"], ["market_id", "numeric"], ["yes_balance", "numeric"], ["no_balance", "numeric"], ["yes_cost", "numeric"], ["no_cost", "numeric"], ["realized_pnl", "numeric"]],
  key: ["user_address", "market_id"],
  values: (r) => [r.user, s(r.marketId), s(r.yesBalance), s(r.noBalance), s(r.yesCost), s(r.noCost), s(r.realizedPnl)]
}

const USER: SliceTable<UserRow> = {
  name: "user_stats",
  columns: [["address", "text"], ["volume", "numeric"], ["trade_count", "bigint"], ["realized_pnl", "numeric"], ["traded", "boolean"]],
  key: ["address"],
  values: (r) => [r.address, s(r.volume), s(r.tradeCount), s(r.realizedPnl), r.traded]
}

/** Rows of a first-slice table equal: every field is a scalar (bigints compared by value). */
const sameFields = <R extends object>(a: R, b: R) => {
  for (const k in a) if (a[k] !== b[k]) return false
  // A field only the new row has set (absent and undefined are the same).
  for (const k in b) if (!(k in a) && b[k] !== undefined) return false
  return true
}

/**
 * Writes the rows of `after` that differ from `before`: rows `before` lacks (absent from the
 * database) with COPY, changed ones with one upsert; unchanged rows are not written.
 */
const writeChanged = <K, R extends object>(table: SliceTable<R>, before: ReadonlyMap<K, R>, after: ReadonlyMap<K, R>) => {
  const inserts: Array<ReadonlyArray<DbValue>> = []
  const updates: Array<ReadonlyArray<DbValue>> = []
  for (const [key, row] of after) {
    const old = before.get(key)
    if (old === undefined) inserts.push(table.values(row))
    else if (!sameFields(old, row)) updates.push(table.values(row))
  }
  return writeSliceRows(table, inserts, updates)
}

/**
 * Writes the rows an in-place fold touched (key -> row before the batch, `now`: after it), each
 * still present: absent before -> COPY, present -> upsert. (First-slice rows are never deleted.)
 */
const writeTouched = <K, R>(table: SliceTable<R>, touched: ReadonlyMap<K, R | null | undefined>, now: ReadonlyMap<K, R | null>) => {
  const inserts: Array<ReadonlyArray<DbValue>> = []
  const updates: Array<ReadonlyArray<DbValue>> = []
  for (const [key, old] of touched) {
    const row = now.get(key)
    if (row === undefined || row === null) continue
    if (old === undefined || old === null) inserts.push(table.values(row))
    else updates.push(table.values(row))
  }
  return writeSliceRows(table, inserts, updates)
}

/** New rows with COPY, changed ones with one unnest upsert. */
const writeSliceRows = <R>(table: SliceTable<R>, inserts: ReadonlyArray<ReadonlyArray<DbValue>>, updates: ReadonlyArray<ReadonlyArray<DbValue>>) =>
  Effect.gen(function* () {
    const names = table.columns.map(([name]) => name)
    yield* copyIn(table.name, names, inserts)
    if (updates.length === 0) return
    const sql = yield* SqlClient.SqlClient
    const rest = names.filter((n) => !table.key.includes(n))
    yield* sql.unsafe(
      `insert into ${table.name} (${names.join(", ")}) select * from unnest(${table.columns.map(([, type], i) => `$${i + 1}::${type}[]`).join(", ")})
       on conflict (${table.key.join(", ")}) do update set ${rest.map((n) => `${n} = excluded.${n}`).join(", ")}`,
      names.map((_, i) => updates.map((u) => u[i]))
    )
  })

/** The protocol row's values, in column order. */
const protocolValues = (p: ProtocolRow) => [s(p.totalMarkets), s(p.totalVolume), s(p.totalTrades), s(p.totalUsers)] as const

const writeProtocol = (p: ProtocolRow) => writeProtocolValues(protocolValues(p))

const writeProtocolValues = (values: readonly [string, string, string, string]) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(
      `insert into protocol_stats values (1, $1, $2, $3, $4)
       on conflict (id) do update set total_markets = excluded.total_markets, total_volume = excluded.total_volume, total_trades = excluded.total_trades, total_users = excluded.total_users`,
      [...values]
    )
  )

const appendRows = (w: Working) =>
  Effect.gen(function* () {
    yield* copyIn(
      "trade",
      ["block_number", "log_index", "tx_hash", "timestamp", "market_id", "trader", "recipient", "trade_type", "amount_in", "amount_out", "clob_filled", "amm_filled"],
      w.appended.trades.map((r) => [r.block, r.logIndex, r.txHash, r.timestamp, s(r.marketId), r.trader, r.recipient, r.tradeType, s(r.amountIn), s(r.amountOut), s(r.clobFilled), s(r.ammFilled)])
    )
    yield* copyIn(
      "price_snapshot",
      ["block_number", "log_index", "timestamp", "market_id", "yes_price", "source", "open_interest"],
      w.appended.priceSnapshots.map((r) => [r.block, r.logIndex, r.timestamp, s(r.marketId), s(r.yesPrice), r.source, s(r.openInterest)])
    )
  })

/**
 * Commits one folded batch: rows, appended rows, undo images (when `undoBlock` is set: the batch
 * is one unfinalized block) and the checkpoint, in one transaction.
 */
export const commitBatch = (before: State, after: State, checkpoint: Checkpoint, undoBlock: number | undefined) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(writeBatch(before, after, checkpoint, undoBlock)))

/**
 * Another process moved the checkpoint since this one last committed: rows this process holds in
 * memory may be stale, so the batch is not written.
 */
export class CheckpointMoved extends Data.TaggedError("CheckpointMoved")<{ readonly message: string }> {}

/**
 * Locks the checkpoint row for the rest of the transaction and fails with CheckpointMoved unless
 * it is still at `block`: rows kept in memory since that block are then exactly what Postgres
 * holds, and no other writer can move it before this transaction ends.
 */
export const lockCheckpointAt = (chainId: number, block: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql.unsafe<{ block_number: string }>(`select block_number from indexer_checkpoint where chain_id = $1 for update`, [chainId])
    if (rows[0] === undefined || Number(rows[0].block_number) !== block) {
      return yield* new CheckpointMoved({ message: `the checkpoint of chain ${chainId} is no longer at block ${block}: another indexer is writing to this database` })
    }
  })

const writeBatch = (before: State, after: State, checkpoint: Checkpoint, undoBlock: number | undefined) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* writeChanged(MARKET, before.markets, after.markets)
    yield* writeChanged(POSITION, before.positions, after.positions)
    yield* writeChanged(USER, before.users, after.users)
    yield* writeProtocol(after.protocol)
    yield* appendRows(after)
    const keyedUndo: Array<UndoEntry> = []
    for (const name of KEYED_NAMES) {
      keyedUndo.push(...(yield* writeKeyed(KEYED_TABLES[name], before.rows[name] as unknown as AnyRows, after.rows[name] as unknown as AnyRows, undoBlock !== undefined)))
    }
    for (const name of LOG_NAMES) yield* appendTableRows(APPEND_TABLES[name], after.logs[name] as unknown as ReadonlyArray<Record<string, unknown>>)
    if (undoBlock !== undefined) {
      const images = [...undoImages(before, after), ...keyedUndo]
      yield* sql.unsafe(
        `insert into undo_log select $1, * from unnest($2::text[], $3::text[], $4::jsonb[]) on conflict do nothing`,
        [undoBlock, images.map((i) => i.table), images.map((i) => i.key), images.map((i) => i.image)]
      )
    }
    yield* writeCheckpoint(checkpoint)
  })

const writeCheckpoint = (checkpoint: Checkpoint) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(
      `insert into indexer_checkpoint (chain_id, block_number, block_hash, digest, head_block, updated_at) values ($1, $2, $3, $4, $5, now())
       on conflict (chain_id) do update set block_number = excluded.block_number, block_hash = excluded.block_hash, digest = excluded.digest,
         head_block = excluded.head_block, updated_at = now()`,
      [checkpoint.chainId, checkpoint.block, checkpoint.hash, checkpoint.digest, checkpoint.head]
    )
  )

/**
 * The writes of a batch folded in place into a complete row cache (`RowCache.foldInPlace`): the
 * rows it touched, its appended rows and the checkpoint. A backfill batch: no undo images.
 * Rows are encoded here, when this is called, not when the returned effect runs: they are the
 * cache's own objects, which the next batch's fold changes while these statements run.
 */
export const planInPlace = (state: State, touched: Touched, checkpoint: Checkpoint) => {
  // Appended rows and logs are the batch's own, never changed after they are appended.
  const steps: ReadonlyArray<Effect.Effect<unknown, SqlError.SqlError, SqlClient.SqlClient>> = [
    writeTouched(MARKET, touched.markets, state.markets),
    writeTouched(POSITION, touched.positions, state.positions),
    writeTouched(USER, touched.users, state.users),
    writeProtocolValues(protocolValues(state.protocol)),
    appendRows(state),
    ...KEYED_NAMES.map((name) => writeTouchedKeyed(KEYED_TABLES[name], touched.keyed[name], state.rows[name].map as ReadonlyMap<string, unknown>)),
    ...LOG_NAMES.map((name) => appendTableRows(APPEND_TABLES[name], state.logs[name] as unknown as ReadonlyArray<Record<string, unknown>>)),
    writeCheckpoint(checkpoint)
  ]
  return Effect.forEach(steps, (step) => step, { discard: true })
}

/** True when every table the reducers keep rows of is empty (nothing indexed into this database yet). */
export const mutableTablesEmpty = Effect.flatMap(SqlClient.SqlClient, (sql) => {
  const tables = ["market", "position", "user_stats", "protocol_stats", ...KEYED_NAMES.map((n) => KEYED_TABLES[n].sql)]
  return sql.unsafe<{ empty: boolean }>(`select ${tables.map((t) => `not exists (select 1 from ${t})`).join(" and ")} as empty`)
}).pipe(Effect.map((rows) => rows[0]?.empty === true))

/** Drops undo rows at or below the finalized block: they can never be needed again. */
export const pruneUndo = (finalized: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`delete from undo_log where block_number <= $1`, [finalized]))

/**
 * Undoes every block above `ancestor` in one transaction: each mutable row goes back to its
 * image from the first undone block that changed it (deleted when it did not exist then),
 * appended rows above the ancestor are deleted, and the checkpoint moves to the ancestor.
 */
export const revertTo = (ancestor: { readonly chainId: number; readonly block: number; readonly hash: string; readonly digest: string }) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(
      Effect.gen(function* () {
        const firsts = `(select distinct on (table_name, row_key) table_name, row_key, image from undo_log
                          where block_number > $1 order by table_name, row_key, block_number) f`
        yield* sql.unsafe(`delete from market where id::text in (select row_key from ${firsts} where table_name = 'market')`, [ancestor.block])
        yield* sql.unsafe(
          `insert into market select (i->>'id')::numeric, i->>'question', (i->>'endTime')::numeric, i->>'oracle', i->>'creator', i->>'yesToken', i->>'noToken',
             (i->>'createdAt')::bigint, (i->>'createdBlock')::bigint, i->>'createdTx', (i->>'totalCollateral')::numeric, (i->>'volume')::numeric,
             (i->>'tradeCount')::bigint, (i->>'isResolved')::boolean, (i->>'outcome')::boolean, i->>'resolutionType', (i->>'resolvedAt')::bigint,
             (i->>'refundMode')::boolean, (i->>'yesPrice')::numeric, (i->>'lastTradeAt')::bigint
           from (select image as i from ${firsts} where table_name = 'market' and image is not null) r`,
          [ancestor.block]
        )
        yield* sql.unsafe(`delete from position where user_address || ':' || market_id::text in (select row_key from ${firsts} where table_name = 'position')`, [ancestor.block])
        yield* sql.unsafe(
          `insert into position select i->>'user', (i->>'marketId')::numeric, (i->>'yesBalance')::numeric, (i->>'noBalance')::numeric,
             (i->>'yesCost')::numeric, (i->>'noCost')::numeric, (i->>'realizedPnl')::numeric
           from (select image as i from ${firsts} where table_name = 'position' and image is not null) r`,
          [ancestor.block]
        )
        yield* sql.unsafe(`delete from user_stats where address in (select row_key from ${firsts} where table_name = 'user_stats')`, [ancestor.block])
        yield* sql.unsafe(
          `insert into user_stats select i->>'address', (i->>'volume')::numeric, (i->>'tradeCount')::bigint, (i->>'realizedPnl')::numeric, (i->>'traded')::boolean
           from (select image as i from ${firsts} where table_name = 'user_stats' and image is not null) r`,
          [ancestor.block]
        )
        yield* sql.unsafe(`delete from protocol_stats where exists (select 1 from ${firsts} where table_name = 'protocol_stats')`, [ancestor.block])
        yield* sql.unsafe(
          `insert into protocol_stats select 1, (i->>'totalMarkets')::numeric, (i->>'totalVolume')::numeric, (i->>'totalTrades')::numeric, (i->>'totalUsers')::numeric
           from (select image as i from ${firsts} where table_name = 'protocol_stats' and image is not null) r`,
          [ancestor.block]
        )
        yield* sql.unsafe(`delete from trade where block_number > $1`, [ancestor.block])
        yield* sql.unsafe(`delete from price_snapshot where block_number > $1`, [ancestor.block])
        for (const name of KEYED_NAMES) yield* revertKeyed(KEYED_TABLES[name], ancestor.block)
        for (const name of LOG_NAMES) yield* revertAppended(APPEND_TABLES[name], ancestor.block)
        yield* sql.unsafe(`delete from undo_log where block_number > $1`, [ancestor.block])
        yield* sql.unsafe(`update indexer_checkpoint set block_number = $2, block_hash = $3, digest = $4, updated_at = now() where chain_id = $1`, [
          ancestor.chainId,
          ancestor.block,
          ancestor.hash,
          ancestor.digest
        ])
      })
    )
  )
