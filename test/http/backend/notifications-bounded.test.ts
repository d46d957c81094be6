/**
 * Notifications stay out of the backfill's way (issue 30, item 1), on a copy of the indexed
 * devnet fixture (real Postgres, the consumer's real pass, the API over HTTP):
 * - the consumer notifies only events within its horizon of the chain head: a pass over the
 *   whole index writes nothing for the fills, trades and pauses below it;
 * - a pause or a resolution is one broadcast row, however many hold positions;
 * - a broadcast is shown to the users who held a position at its block, once each, with read
 *   state per user: one holder marking it read leaves it unread for another.
 */
import { Effect, Layer, Logger, LogLevel, ManagedRuntime, Redacted } from "effect"
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount, type LocalAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeNotificationConsumer } from "../../../http/backend/community/notification-consumer.js"
import { pgClientLayer } from "../../../src/db/database.js"
import { DEVNET_MNEMONIC } from "../../../tools/devnet/anvil.js"
import { signIn, startBackends, type Backends, type Instance } from "./support/auth-harness.js"

const quiet = Logger.withMinimumLogLevel(LogLevel.Error)

let backends: Backends
let api: Instance
let runtime: ManagedRuntime.ManagedRuntime<any, any>

/** One consumer pass with `horizonBlocks`, from the cursor to the indexed head. */
const pass = (horizonBlocks: number) =>
  runtime.runPromise(
    makeNotificationConsumer(130, horizonBlocks).pipe(
      Effect.flatMap((consumer) => consumer.pass),
      quiet
    )
  )

const count = async (text: string, values: Array<unknown> = []) => Number((await backends.sql(text, values))[0]!["n"])
const rewind = () => backends.sql(`update notification_cursor set block_number = -1, block_hash = null, block_timestamp = null`)

beforeAll(async () => {
  backends = await startBackends({ indexed: true })
  runtime = ManagedRuntime.make(Layer.orDie(pgClientLayer(Redacted.make(backends.databaseUrl))))
  api = await backends.start()
}, 180_000)
afterAll(async () => {
  await runtime?.dispose()
  await backends?.close()
})

describe("notifications bounded by the horizon and by broadcasts", () => {
  it("writes nothing for history below the horizon and one row per pause or resolution", async () => {
    const [checkpoint] = await backends.sql(`select block_number::int as block, coalesce(head_block, block_number)::int as head
      from indexer_checkpoint where chain_id = 130`)
    const head = Number(checkpoint!["head"])
    // The floor halfway through the fills: half the chain's fills are history.
    const [median] = await backends.sql(`select percentile_disc(0.5) within group (order by block_number)::int as block from order_match`)
    const floor = Number(median!["block"])
    const fillsAbove = await count(
      `select count(*) filter (where maker is not null) + count(*) filter (where taker is not null) as n from order_match where block_number > $1`,
      [floor]
    )
    expect(await count(`select count(*) as n from order_match where block_number <= $1`, [floor])).toBeGreaterThan(0)

    const bounded = await pass(head - floor)
    expect(bounded.head).toBe(Number(checkpoint!["block"]))
    // Nothing of the blocks at or below the floor; every fill above it, once per order owner.
    expect(
      await count(
        `select count(*) as n from notification where type in ('orderFilled', 'tradeExecuted', 'marketPaused') and block_number <= $1`,
        [floor]
      )
    ).toBe(0)
    expect(await count(`select count(*) as n from notification where type = 'orderFilled'`)).toBe(fillsAbove)
    // Cancellations (row changes) only from the time of the first block above the floor the indexer holds.
    const [above] = await backends.sql(
      `select timestamp::text as t from indexed_block where chain_id = 130 and number > $1 order by number limit 1`,
      [floor]
    )
    const since = above === undefined ? Number.MAX_SAFE_INTEGER : Number(above["t"])
    // The fixture has cancellations before it, which the old consumer notified.
    expect(await count(`select count(*) as n from exchange_order where status = 'CANCELLED' and updated_at < $1`, [since])).toBeGreaterThan(
      0
    )
    expect(
      await count(
        `select count(*) as n from notification n join exchange_order o on o.id = n.detail ->> 'orderId' where n.type = 'orderCancelled' and o.updated_at < $1`,
        [since]
      )
    ).toBe(0)

    // The whole chain within the horizon: every pause and resolution is one row with no user.
    await rewind()
    await pass(head + 1)
    const pauses = await count(`select count(*) as n from pause_change where paused`)
    const resolved = await count(`select count(*) as n from market where is_resolved or refund_mode`)
    expect(pauses).toBeGreaterThan(0)
    expect(resolved).toBeGreaterThan(0)
    // The fixture has many holders: the old fan-out wrote a row per holder and pause.
    expect(await count(`select count(distinct user_address) as n from position where yes_balance > 0 or no_balance > 0`)).toBeGreaterThan(1)
    expect(await count(`select count(*) as n from notification where type = 'marketPaused'`)).toBe(pauses)
    expect(await count(`select count(*) as n from notification where type = 'marketResolved'`)).toBe(resolved)
    expect(
      await count(`select count(*) as n from notification where type in ('marketPaused', 'marketResolved') and user_address is not null`)
    ).toBe(0)
    // A replay adds nothing.
    const total = await count(`select count(*) as n from notification`)
    await rewind()
    expect((await pass(head + 1)).inserted).toBe(0)
    expect(await count(`select count(*) as n from notification`)).toBe(total)
  }, 180_000)

  it("shows a broadcast to each holder at its block once, with read state per user", async () => {
    // Two users who held a position at the last pause's block (sums of their journal up to it).
    const [pause] = await backends.sql(`select n.id::text as id, n.block_number::int as block from notification n
      where n.type = 'marketPaused' order by n.block_number desc limit 1`)
    const holders = (
      await backends.sql(
        `select distinct user_address from (select user_address, market_id from position_move where block_number <= $1
          group by user_address, market_id having sum(yes_shares) > 0 or sum(no_shares) > 0) h`,
        [pause!["block"]]
      )
    ).map((r) => String(r["user_address"]))
    const accounts = Array.from({ length: 30 }, (_, i) => mnemonicToAccount(DEVNET_MNEMONIC, { addressIndex: i }))
    const held: Array<LocalAccount> = accounts.filter((a) => holders.includes(a.address.toLowerCase()))
    expect(held.length).toBeGreaterThan(1)
    const [first, second] = held as [LocalAccount, LocalAccount]
    const stranger = privateKeyToAccount(generatePrivateKey())
    const cookie: Record<string, string> = {}
    for (const account of [first, second, stranger]) cookie[account.address] = (await signIn(api, account)).cookie!
    const as = (account: LocalAccount) => ({ headers: { cookie: `predix_session=${cookie[account.address]}` } })
    const pausesOf = async (account: LocalAccount) =>
      ((await api.call("GET", "/api/notifications?limit=100", as(account))).body.data as Array<any>).filter((n) => n.id === pause!["id"])
    const unread = async (account: LocalAccount) => (await api.call("GET", "/api/notifications/unread-count", as(account))).body.data.unread

    // Each holder sees the pause once, unread, as addressed to them; a user who held nothing does not.
    for (const account of [first, second])
      expect(await pausesOf(account)).toEqual([
        expect.objectContaining({ type: "marketPaused", address: account.address.toLowerCase(), read: false })
      ])
    expect(await pausesOf(stranger)).toEqual([])
    expect((await api.call("PATCH", `/api/notifications/${pause!["id"]}/read`, as(stranger))).status).toBe(404)

    // The first holder reads it: read for them (idempotently), still unread for the second.
    const before = { first: await unread(first), second: await unread(second) }
    const read = await api.call("PATCH", `/api/notifications/${pause!["id"]}/read`, as(first))
    expect(read.status).toBe(200)
    expect(read.body.data).toMatchObject({ id: pause!["id"], read: true })
    expect((await api.call("PATCH", `/api/notifications/${pause!["id"]}/read`, as(first))).status).toBe(200)
    expect(await unread(first)).toBe(before.first - 1)
    expect(await pausesOf(first)).toEqual([expect.objectContaining({ read: true })])
    expect(await unread(second)).toBe(before.second)
    expect(await pausesOf(second)).toEqual([expect.objectContaining({ read: false })])
    const unreadIds = ((await api.call("GET", "/api/notifications?unread=true&limit=100", as(second))).body.data as Array<any>).map(
      (n) => n.id
    )
    expect(unreadIds).toContain(pause!["id"])

    // Read-all marks the second holder's broadcasts and personal rows; the first's stay as they were.
    const all = await api.call("POST", "/api/notifications/read-all", as(second))
    expect(all.body.data.marked).toBe(before.second)
    expect(await unread(second)).toBe(0)
    expect(await unread(first)).toBe(before.first - 1)
    expect(await count(`select count(*) as n from notification_read where notification_id = $1`, [pause!["id"]])).toBe(2)
  }, 180_000)
})
