/**
 * The devnet's chain reset (`src/db/chain-data.ts`, `fitDatabaseToDevnet`) on a real, migrated
 * Postgres and a real anvil: every table is classified, and a database ahead of the devnet's chain
 * loses what it derived from the chain while the backend's own rows (users, sessions, roles,
 * settings, comments, referrals, budgets, claims) stay; with generations of a blue-green re-index,
 * the active one is judged and the reset leaves public alone, empty and active.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Duration, Effect } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as Path from "node:path"
import { DERIVED_TABLES, GENERATION_TABLES, KEPT_TABLES } from "../../src/db/chain-data.js"
import { dropRetired, listGenerations, requestBuild, switchGeneration } from "../../src/db/generations.js"
import { LIVE_SOURCE } from "../../src/index-chain.js"
import { fitDatabaseToDevnet } from "../../src/live-chain.js"
import { startLiveDevnet, type LiveDevnet } from "../../tools/devnet/live.js"
import { withScratchDb } from "../support/postgres.js"

let dataDir: string
let live: LiveDevnet
beforeAll(async () => {
  dataDir = await fs.mkdtemp(Path.join(os.tmpdir(), "predix-chain-data-"))
  live = await startLiveDevnet({ dataDir, automine: true, log: () => {} })
}, 120_000)
afterAll(async () => {
  await live?.stop()
  await fs.rm(dataDir, { recursive: true, force: true })
}, 60_000)

const USER = "0x" + "a1".repeat(20)
const OTHER = "0x" + "b2".repeat(20)
const ACCOUNT = "0x" + "c3".repeat(20)
const HASH = (n: number) => "0x" + n.toString(16).padStart(64, "0")

const count = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<{ n: number }>(`select count(*)::int as n from "${table}"`)).pipe(
    Effect.map((rows) => rows[0]!.n)
  )

describe("the chain reset", () => {
  it.live("classifies every table of the migrated schema exactly once", () =>
    withScratchDb(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const tables = (yield* sql<{ name: string }>`
          select table_name as name from information_schema.tables
          where table_schema = current_schema() and table_type = 'BASE TABLE' order by 1`).map((row) => row.name)
        const both = DERIVED_TABLES.filter((t) => KEPT_TABLES.includes(t))
        expect(both).toEqual([])
        expect(tables.filter((t) => !DERIVED_TABLES.includes(t) && !KEPT_TABLES.includes(t))).toEqual([])
        expect([...DERIVED_TABLES, ...KEPT_TABLES].filter((t) => !tables.includes(t))).toEqual([])
      })
    )
  )

  it.live(
    "a database ahead of the chain (its state rewound): the derived tables and the chain's notifications are emptied; users, sessions, comments and claims stay",
    () =>
      withScratchDb(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          // The index of this deployment on a chain that went further than the devnet's (block 100,000):
          // checkpoint, window, deployment, the consumer's cursor.
          const diamond = live.manifest.devnet.deployment.diamond.toLowerCase()
          yield* sql`insert into indexer_checkpoint (chain_id, block_number, block_hash, digest) values (130, 100000, ${HASH(100000)}, ${HASH(1)})`
          yield* sql`insert into indexed_block (chain_id, number, hash, parent_hash, timestamp, digest, parent_digest)
          values (130, 100000, ${HASH(100000)}, ${HASH(99999)}, 1, ${HASH(2)}, ${HASH(3)})`
          // Lower in the window, a block the chain does hold (999 ranks above 100000 as text: the tip is by number).
          const block999 = yield* Effect.promise(() =>
            fetch(live.url, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getBlockByNumber", params: ["0x3e7", false] })
            }).then(async (r) => ((await r.json()) as { result: { hash: string; parentHash: string } }).result)
          )
          yield* sql`insert into indexed_block (chain_id, number, hash, parent_hash, timestamp, digest, parent_digest)
          values (130, 999, ${block999.hash}, ${block999.parentHash}, 1, ${HASH(4)}, ${HASH(5)})`
          yield* sql`insert into indexed_deployment (chain_id, diamond, deploy_block, source) values (130, ${diamond}, 1, ${LIVE_SOURCE})`
          yield* sql`insert into notification_cursor (chain_id, block_number, block_hash) values (130, 1100, ${HASH(1100)})`
          // The backend's own data.
          yield* sql`insert into app_user (address, role) values (${USER}, 'moderator'), (${OTHER}, 'user')`
          yield* sql`insert into user_settings (address, locale) values (${USER}, 'ja')`
          yield* sql`insert into auth_nonce (nonce, address, message, issued_at, expires_at) values ('abcdefghijklmnopqrstuvwx', ${USER}, 'm', now(), now())`
          yield* sql`insert into auth_session (token_hash, address, method, nonce, created_at, expires_at)
          values (decode(${"11".repeat(32)}, 'hex'), ${USER}, 'siwe', 'abcdefghijklmnopqrstuvwx', now(), now() + interval '1 day')`
          const [comment] = yield* sql<{ id: string }>`insert into market_comment (market_id, author, body, created_at)
          values (21, ${USER}, 'hello', now()) returning id`
          yield* sql`insert into notification (user_address, type, source, detail) values (${USER}, 'commentReply', ${"comment:" + comment!.id}, '{}')`
          yield* sql`insert into notification (user_address, type, source, block_number, tx_hash, detail)
          values (${USER}, 'orderFilled', 'match:100000:0:maker', 100000, ${HASH(7)}, '{}')`
          yield* sql`insert into referral_code (address, code, created_at) values (${USER}, 'abcd1234', now())`
          yield* sql`insert into referral_link (referee, referrer, created_at) values (${OTHER}, ${USER}, now())`
          yield* sql`insert into sponsorship_budget (address, day, spent_wei, operations) values (${ACCOUNT}, current_date, 5, 1)`
          yield* sql`insert into signer_nonce (signer, next_nonce) values (${OTHER}, 7)`
          yield* sql`insert into faucet_claim (address, owner, signer, nonce, raw_tx, tx_hash, usdc_raw, eth_raw, status, confirmed_at)
          values (${ACCOUNT}, ${USER}, ${OTHER}, 6, '0x02aa', ${HASH(9)}, 10000000000, 1, 'confirmed', now())`
          yield* sql`insert into display_metadata (kind, id, slug, category, title) values ('market', 21, 'm-21', 'sports', '{"en":"M"}')`

          const kept = Object.fromEntries(yield* Effect.forEach(KEPT_TABLES, (t) => Effect.map(count(t), (n) => [t, n] as const)))
          yield* fitDatabaseToDevnet(live)

          for (const table of DERIVED_TABLES) expect([table, yield* count(table)]).toEqual([table, 0])
          const after = Object.fromEntries(yield* Effect.forEach(KEPT_TABLES, (t) => Effect.map(count(t), (n) => [t, n] as const)))
          // Every kept table keeps its rows, but the notification derived from a chain event.
          expect(after).toEqual({ ...kept, notification: kept["notification"]! - 1 })
          expect(after["app_user"]).toBe(2)
          expect(after["auth_session"]).toBe(1)
          expect(after["market_comment"]).toBe(1)
          expect(yield* sql`select type from notification`).toEqual([{ type: "commentReply" }])
          // The claim is kept, its transfer to be verified on the new chain; the nonce row is kept.
          expect(yield* sql`select status, tx_hash, raw_tx, nonce::int as nonce, confirmed_at from faucet_claim`).toEqual([
            { status: "signed", tx_hash: HASH(9), raw_tx: "0x02aa", nonce: 6, confirmed_at: null }
          ])
          expect(yield* sql`select next_nonce::int as n from signer_nonce`).toEqual([{ n: 7 }])
          expect(yield* sql`select role from app_user where address = ${USER}`).toEqual([{ role: "moderator" }])
          // A database the chain continues is left alone.
          yield* sql`insert into app_user (address) values (${ACCOUNT})`
          yield* fitDatabaseToDevnet(live)
          expect(yield* count("app_user")).toBe(3)
        })
      )
  )

  it.live(
    "with generations: the active one (index_2, public retired and emptied) is judged; the reset drops every other, public alone, empty and active",
    () =>
      withScratchDb(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const diamond = live.manifest.devnet.deployment.diamond.toLowerCase()
          // index_2 serves the index of a chain that went further than the devnet's; public is
          // retired and emptied (as after a re-index's grace period); index_3 is being built.
          yield* requestBuild(Duration.seconds(0))
          yield* sql`insert into index_2.indexer_checkpoint (chain_id, block_number, block_hash, digest) values (130, 100000, ${HASH(100000)}, ${HASH(1)})`
          yield* sql`insert into index_2.indexed_deployment (chain_id, diamond, deploy_block, source) values (130, ${diamond}, 1, ${LIVE_SOURCE})`
          yield* switchGeneration(130, "index_2")
          yield* dropRetired(true)
          yield* requestBuild(Duration.seconds(0))
          yield* sql`insert into index_3.indexer_checkpoint (chain_id, block_number, block_hash, digest) values (130, 100000, ${HASH(100000)}, ${HASH(1)})`
          yield* sql`insert into app_user (address, role) values (${USER}, 'moderator')`
          expect((yield* listGenerations).map((g) => [g.schema, g.state])).toEqual([
            ["public", "dropped"],
            ["index_2", "active"],
            ["index_3", "building"]
          ])

          yield* fitDatabaseToDevnet(live)

          expect((yield* listGenerations).map((g) => [g.schema, g.state])).toEqual([["public", "active"]])
          // Every generation but public is gone; index_template, the templates' home, stays.
          const schemas = yield* sql<{ name: string }>`select nspname as name from pg_namespace where nspname ~ '^index_[0-9]+$'`
          expect(schemas).toEqual([])
          for (const table of DERIVED_TABLES) expect([table, yield* count(table)]).toEqual([table, 0])
          expect(yield* count("app_user")).toBe(1)
          // public's copies are what the next indexer fills: all there.
          const tables = (yield* sql<{ name: string }>`select tablename as name from pg_tables where schemaname = 'public'`).map(
            (r) => r.name
          )
          expect(GENERATION_TABLES.filter((t) => !tables.includes(t))).toEqual([])
          // The clean state fits: a second look resets nothing (app_user untouched either way).
          yield* fitDatabaseToDevnet(live)
          expect((yield* listGenerations).map((g) => [g.schema, g.state])).toEqual([["public", "active"]])
        })
      )
  )
})
