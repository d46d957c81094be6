/**
 * Helpers for the export tests: index the committed fixture part way into a real Postgres, read
 * a DuckDB file, and put a table of either database into one comparable form.
 *
 * The comparable form is independent of the exporter's own mapping: each column is read by its
 * type in the database it lives in. Amounts compare as raw integers (a DuckDB DECIMAL(38,6) of
 * 1.500000 and a Postgres 1500000 are both "1500000"), timestamps as unix seconds (or
 * microseconds for timestamptz), booleans as true/false, JSON parsed.
 */
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api"
import { Effect, Logger, LogLevel, Redacted } from "effect"
import pg from "pg"
import { makeIndexer } from "../../pipeline/run.js"
import { makeRpc } from "../../pipeline/source/rpc.js"
import { FIXTURE_RECORDING } from "../../src/fixture-recording.js"
import { pgClientLayer } from "../../src/db/database.js"
import { runMigrations } from "../../src/db/migrations.js"
import { ReplayChain } from "../../tools/replay/chain.js"
import { serveReplay } from "../../tools/replay/server.js"
import { withClient } from "../support/template-db.js"

/** The fixture replayed over JSON-RPC, heads played only as far as a test asks. */
export const fixtureChain = Effect.gen(function* () {
  const chain = yield* Effect.promise(() => ReplayChain.load(FIXTURE_RECORDING))
  const server = yield* Effect.acquireRelease(
    Effect.promise(() => serveReplay(chain)),
    (s) => Effect.promise(() => s.close())
  )
  return { chain, url: server.url }
})

/**
 * Plays heads until the head reaches `head`, then lets the indexer take one step, as a poll
 * would: finalized blocks in bulk, the rest one by one with undo images. (The fixture's node
 * calls head - 12 final until head 338, then 274 until head 572 (509 from 573 on), then 974.)
 */
export const indexTo = (dbUrl: string, fixture: { chain: ReplayChain; url: string }, head: number) =>
  Effect.provide(
    Effect.gen(function* () {
      while (fixture.chain.remaining > 0 && fixture.chain.headNumber < head) fixture.chain.advance(1)
      yield* runMigrations()
      const indexer = yield* makeIndexer({ rpc: makeRpc({ url: fixture.url }), deployment: fixture.chain.meta.deployment, chainId: 130 })
      return yield* indexer.step(yield* indexer.loadWindow)
    }),
    pgClientLayer(Redacted.make(dbUrl))
  ).pipe(Logger.withMinimumLogLevel(LogLevel.Warning))

/** Runs `f` on a fresh connection to `url`, closed afterwards (the support's one helper for it). */
export const withPg = withClient

export const withDuck = <A>(path: string, f: (db: DuckDBConnection) => Promise<A>) =>
  Effect.promise(async () => {
    const instance = await DuckDBInstance.create(path, path === ":memory:" ? {} : { access_mode: "READ_ONLY" })
    const db = await instance.connect()
    try {
      return await f(db)
    } finally {
      db.closeSync()
      instance.closeSync()
    }
  })

export const duckRows = async (db: DuckDBConnection, sql: string) => (await db.runAndReadAll(sql)).getRowsJson() as Array<Array<unknown>>

const q = (name: string) => `"${name}"`

type Row = ReadonlyArray<unknown>

const normalize = (value: unknown, kind: "json" | "bool" | "plain"): unknown =>
  value === null
    ? null
    : kind === "json"
      ? JSON.parse(String(value))
      : kind === "bool"
        ? value === true || value === "t" || value === "true"
        : String(value)

/** Every row of `table` in the DuckDB file, in the file's own order, in comparable form. */
export const duckTable = async (db: DuckDBConnection, table: string): Promise<Array<Row>> => {
  const columns = await duckRows(
    db,
    `select column_name, data_type from information_schema.columns where table_name = '${table}' order by ordinal_position`
  )
  const select = columns.map(([name, type]) => {
    const c = q(String(name))
    const t = String(type)
    if (t === "DECIMAL(38,6)") return { sql: `replace(${c}::VARCHAR, '.', '')`, kind: "plain" as const, raw6: true }
    if (t.startsWith("DECIMAL") && t.endsWith("[]"))
      return { sql: `to_json(list_transform(${c}, x -> x::VARCHAR))::VARCHAR`, kind: "json" as const }
    if (t === "TIMESTAMP") return { sql: `epoch(${c})::BIGINT::VARCHAR`, kind: "plain" as const }
    if (t === "TIMESTAMP WITH TIME ZONE") return { sql: `epoch_us(${c})::VARCHAR`, kind: "plain" as const }
    if (t === "JSON") return { sql: `${c}::VARCHAR`, kind: "json" as const }
    if (t === "BOOLEAN") return { sql: c, kind: "bool" as const }
    return { sql: `${c}::VARCHAR`, kind: "plain" as const }
  })
  const rows = await duckRows(db, `select ${select.map((s) => s.sql).join(", ")} from ${q(table)}`)
  return rows.map((row) =>
    row.map((value, i) => {
      const v = normalize(value, select[i]!.kind)
      // A DECIMAL(38,6) prints all six decimals: without the point it is the raw integer.
      return select[i]!.raw6 === true && typeof v === "string" ? BigInt(v).toString() : v
    })
  )
}

/** Every row of `table` in Postgres, in primary-key order, in comparable form. */
export const pgTable = async (client: pg.Client, table: string): Promise<Array<Row>> => {
  const columns = (
    await client.query<{ name: string; type: string }>(
      `select a.attname as name, format_type(a.atttypid, a.atttypmod) as type from pg_attribute a
        where a.attrelid = $1::regclass and a.attnum > 0 and not a.attisdropped order by a.attnum`,
      [table]
    )
  ).rows
  const key = (
    await client.query<{ name: string; type: string }>(
      `select a.attname as name, format_type(a.atttypid, a.atttypmod) as type from pg_index i join unnest(i.indkey) with ordinality k(attnum, ord) on true
         join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum
        where i.indrelid = $1::regclass and i.indisprimary order by k.ord`,
      [table]
    )
  ).rows.map((r) => `t.${q(r.name)}${r.type === "text" ? ` collate "C"` : ""}`)
  const select = columns.map(({ name, type }) => {
    const c = q(name)
    if (type === "timestamp with time zone") return { sql: `(extract(epoch from ${c}) * 1000000)::bigint::text`, kind: "plain" as const }
    if (type === "jsonb" || type === "json") return { sql: `${c}::text`, kind: "json" as const }
    if (type === "boolean") return { sql: `${c}::text`, kind: "bool" as const }
    return { sql: `${c}::text`, kind: "plain" as const }
  })
  const result = await client.query({
    // Ordered by the columns themselves (t.), not by the text output columns of the same name.
    text: `select ${select.map((s) => s.sql).join(", ")} from ${q(table)} t${key.length > 0 ? ` order by ${key.join(", ")}` : ""}`,
    rowMode: "array"
  })
  return (result.rows as Array<Array<unknown>>).map((row) => row.map((value, i) => normalize(value, select[i]!.kind)))
}

/** Names of the exported tables, from the file's manifest. */
export const exportedTables = async (db: DuckDBConnection) =>
  (await duckRows(db, `select table_name from manifest_tables order by table_name`)).map(([name]) => String(name))

/** Every exported table of a file plus its manifest (without the fields that name the run). */
export const duckSnapshot = async (db: DuckDBConnection) => {
  const out: Record<string, unknown> = {}
  for (const table of await exportedTables(db)) out[table] = await duckTable(db, table)
  out["manifest"] = await duckRows(
    db,
    `select chain_id, block_number, block_hash, digest, includes_unfinalized, finalized_block, finalized_block_hash, indexed_block, diamond, schema_version, export_format from manifest`
  )
  out["manifest_tables"] = await duckRows(
    db,
    `select table_name, kind, primary_key, row_count, layout from manifest_tables order by table_name`
  )
  return out
}
