/**
 * Points and leaderboard after a reorg equal a from-scratch computation: two databases, one that
 * indexes a chain, serves answers (cached), then reverts two unfinalized blocks and indexes a
 * replacing branch; one that indexes the final chain straight through. The backend's answers on
 * both are equal for every period and sort, and they match the model of the rules; the events the
 * reorg removed (a 1,200 USDC trade of a referred user, a liquidity day, a referral) took their
 * points with them, and no answer cached before the reorg was served after it.
 */
import { Effect, Redacted } from "effect"
import { SqlClient } from "@effect/sql"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { applyBatch, type LocatedEvent } from "../../../pipeline/batch.js"
import { revertTo } from "../../../pipeline/sink.js"
import type { DomainEvent } from "../../../schema/domain-events.js"
import { encodeIndexedPayload, INDEXED_CHANNEL } from "../../../schema/indexed-notify.js"
import { pgClientLayer } from "../../../src/db/database.js"
import { signIn, startBackends, type Backends, type Instance } from "./support/auth-harness.js"
import { asModelRows, loadChainRows, modelBoard, modelPoints } from "./support/rewards-model.js"

const A = (n: number) => `0x${n.toString(16).padStart(40, "0")}`
const H = (n: number) => `0x${n.toString(16).padStart(64, "0")}`
const ROUTER = A(0xf00d)
const protocol = { has: (a: string) => a === ROUTER, isVenue: (a: string) => a === ROUTER }
const YES = A(10)
const POOL = H(0x9001)
const DAY = 86_400
const T0 = 1_767_225_600 // a UTC midnight

const users = [0, 1, 2].map(() => privateKeyToAccount(generatePrivateKey()))
const [U1, U2, U3] = users.map((u) => u.address.toLowerCase()) as [string, string, string]

const ev = (block: number, logIndex: number, ts: number, event: DomainEvent, address = A(0xd1a)): LocatedEvent => ({
  event,
  at: { block, timestamp: ts, txHash: H(block * 100 + logIndex), logIndex, address }
})
const buy = (who: string, market: bigint, usdc: bigint, shares: bigint, side: "YES" | "NO" = "YES"): DomainEvent => ({
  _tag: "Trade",
  marketId: market,
  trader: who,
  recipient: who,
  tradeType: side === "YES" ? 0 : 2,
  amountIn: usdc,
  amountOut: shares,
  clobFilled: 0n,
  ammFilled: shares,
  builder: null
})
const sell = (who: string, market: bigint, shares: bigint, usdc: bigint): DomainEvent => ({
  _tag: "Trade",
  marketId: market,
  trader: who,
  recipient: who,
  tradeType: 1,
  amountIn: shares,
  amountOut: usdc,
  clobFilled: 0n,
  ammFilled: usdc,
  builder: null
})
const referral = (referrer: string, trader: string, usdc: bigint): DomainEvent => ({
  _tag: "Hook_ReferralRecorded",
  marketId: 1n,
  referrer,
  trader,
  usdcVolume: usdc
})
const addLiquidity = (who: string): DomainEvent => ({
  _tag: "ModifyLiquidity",
  id: POOL,
  sender: who,
  tickLower: -600,
  tickUpper: 600,
  liquidityDelta: 1_000n,
  salt: H(0)
})
const created = (id: bigint): DomainEvent => ({
  _tag: "MarketCreated",
  marketId: id,
  creator: A(1),
  oracle: A(9),
  yesToken: A(10 * Number(id)),
  noToken: A(10 * Number(id) + 1),
  endTime: 2_000_000_000n,
  question: `Q${id}?`
})
const USDC = (n: number) => BigInt(n) * 1_000_000n

/** Blocks 1..8, one UTC day apart (final): U1 trades seven days running, U3 provides liquidity, U1 refers U3 on chain, market 2 resolves. */
const finalBlocks: Array<Array<LocatedEvent>> = [
  [
    ev(1, 0, T0, created(1n)),
    ev(1, 1, T0, created(2n)),
    ev(1, 2, T0, { _tag: "Hook_PoolRegistered", marketId: 1n, poolId: POOL, yesToken: YES, quoteToken: A(0x20), yesIsCurrency0: true }),
    ev(1, 3, T0, {
      _tag: "Initialize",
      id: POOL,
      currency0: YES,
      currency1: A(0x20),
      fee: 0x800000,
      tickSpacing: 60,
      hooks: A(0x30),
      sqrtPriceX96: 1n << 96n,
      tick: 0
    }),
    ev(1, 4, T0, buy(U3, 2n, USDC(40), USDC(80), "NO")),
    ev(1, 5, T0, referral(U1, U3, USDC(40))),
    ev(1, 6, T0, buy(U2, 2n, USDC(5), USDC(9)))
  ],
  ...[1, 2, 3, 4, 5, 6].map((d) => [
    ev(1 + d, 0, T0 + d * DAY, buy(U1, 1n, USDC(30), USDC(60))),
    ev(1 + d, 1, T0 + d * DAY + 60, buy(U1, 2n, USDC(20), USDC(30)))
  ]),
  [
    ev(8, 0, T0 + 6 * DAY + 3600, addLiquidity(U3)),
    ev(8, 1, T0 + 6 * DAY + 3600, { _tag: "MarketResolved", marketId: 2n, outcome: false, resolver: A(9) })
  ]
]
// Block 1 is day 0 with U1's first day missing: give U1 day 0 too, so U1 trades days 0..6 (a 7-day streak).
finalBlocks[0]!.push(ev(1, 7, T0 + 120, buy(U1, 1n, USDC(12), USDC(24))))

/** Unfinalized blocks 9 and 10 (day 7), later replaced: U2's 1,200 USDC, U1 sells at a profit, U3 adds liquidity again, U1 refers U2 on chain. */
const branchA = [
  [ev(9, 0, T0 + 7 * DAY, buy(U2, 1n, USDC(1_200), USDC(2_000))), ev(9, 1, T0 + 7 * DAY, referral(U1, U2, USDC(1_200)))],
  [ev(10, 0, T0 + 7 * DAY + 600, sell(U1, 1n, USDC(100), USDC(80))), ev(10, 1, T0 + 7 * DAY + 600, addLiquidity(U3))]
]
/** The replacing block 9: U3 trades a little. */
const branchB = [[ev(9, 0, T0 + 7 * DAY + 5, buy(U3, 1n, USDC(11), USDC(20)))]]

const cp = (block: number, fork = 0) => ({ chainId: 130, block, hash: H(block + fork * 1000), digest: H(block + fork * 1000), head: 20 })

let reorged: Backends
let scratch: Backends
let apps: { reorged: Instance; scratch: Instance }
const cookies: Record<"reorged" | "scratch", Array<string | undefined>> = { reorged: [], scratch: [] }

/** Runs `body` on the database of `backends`. */
const onDb = <A>(backends: Backends, body: Effect.Effect<A, unknown, SqlClient.SqlClient>) =>
  Effect.runPromise(Effect.scoped(Effect.provide(body, pgClientLayer(Redacted.make(backends.databaseUrl)))) as Effect.Effect<A>)

/** Applies `blocks` (with undo images when unfinalized) and announces the head as the indexer does. */
const index = (backends: Backends, blocks: ReadonlyArray<ReadonlyArray<LocatedEvent>>, unfinalized: boolean, fork = 0) =>
  onDb(
    backends,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      for (const events of blocks) {
        const block = events[0]!.at.block
        yield* applyBatch(events, cp(block, fork), protocol, unfinalized ? block : undefined)
        yield* sql`select pg_notify(${INDEXED_CHANNEL}, ${encodeIndexedPayload({ chainId: 130, block, hash: cp(block, fork).hash, reverted: false })})`
      }
    })
  )

const revert = (backends: Backends, block: number) =>
  onDb(
    backends,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* revertTo({ chainId: 130, block, hash: cp(block).hash, digest: cp(block).digest })
      yield* sql`select pg_notify(${INDEXED_CHANNEL}, ${encodeIndexedPayload({ chainId: 130, block, hash: cp(block).hash, reverted: true })})`
    })
  )

/** Signs the three users in; U2 with U1's referral code. */
const signInAll = async (app: Instance, into: Array<string | undefined>) => {
  into.push((await signIn(app, users[0]!)).cookie)
  const code = (await app.call("GET", "/api/referral", { headers: { cookie: `predix_session=${into[0]}` } })).body.data.code
  const challenge = await app.call("GET", `/api/auth/challenge?address=${users[1]!.address}`)
  const signature = await users[1]!.signMessage({ message: challenge.body.data.message })
  const verify = await app.call("POST", `/api/auth/verify?ref=${code}`, { body: { address: users[1]!.address, signature } })
  expect(verify.status).toBe(200)
  into.push(verify.headers.getSetCookie()[0]!.split(";")[0]!.slice("predix_session=".length))
  into.push((await signIn(app, users[2]!)).cookie)
}

/** Everything the rewards endpoints answer, for comparing two backends. */
const answers = async (app: Instance, sessions: Array<string | undefined>) => {
  const out: Record<string, unknown> = {}
  for (const period of ["all", "24h", "7d", "30d"]) {
    for (const sort of ["volume", "pnl", "accuracy", "points"]) {
      out[`${period} ${sort}`] = (await app.call("GET", `/api/leaderboard?period=${period}&sortBy=${sort}&limit=100`)).body.data
    }
  }
  out["traders"] = (await app.call("GET", "/api/traders?sortBy=trades&limit=100")).body.data
  for (const [i, cookie] of sessions.entries()) {
    for (const path of ["/api/point", "/api/rewards"])
      out[`${path} ${i}`] = (await app.call("GET", path, { headers: { cookie: `predix_session=${cookie}` } })).body.data
  }
  return out
}

const options = { leaderboardMinResolved: 1, breakerThreshold: 1_000_000, probeEveryMs: 3_600_000 }

beforeAll(async () => {
  ;[reorged, scratch] = await Promise.all([startBackends(), startBackends()])
  apps = { reorged: await reorged.start(options), scratch: await scratch.start(options) }
  await signInAll(apps.reorged, cookies.reorged)
  await signInAll(apps.scratch, cookies.scratch)
}, 120_000)
afterAll(async () => {
  await Promise.all([reorged?.close(), scratch?.close()])
})

describe("rewards through a reorg", () => {
  it("equal a from-scratch computation, and the reorged events lose their points", async () => {
    await index(reorged, finalBlocks, false)
    await index(reorged, branchA, true)
    const before = await answers(apps.reorged, cookies.reorged)
    // Cached now: the same request again is a hit.
    expect((await apps.reorged.call("GET", "/api/leaderboard?period=all&sortBy=points&limit=100")).headers.get("x-cache")).toBe("HIT")
    const rowsBefore = await loadChainRows(reorged.sql)
    const u1Before = modelPoints(rowsBefore, null, true).get(U1)!
    expect(u1Before.counts).toMatchObject({ connect: 1, firstTrade: 1, streak: 1, referralJoined: 2, referralActive: 1 })
    expect(modelPoints(rowsBefore, null, true).get(U3)!.counts.liquidity).toBe(2)

    await revert(reorged, 8)
    await index(reorged, branchB, true, 1)
    await index(scratch, finalBlocks, false)
    await index(scratch, branchB, true, 1)

    const afterReorg = await answers(apps.reorged, cookies.reorged)
    const fromScratch = await answers(apps.scratch, cookies.scratch)
    expect(afterReorg).toEqual(fromScratch)
    expect(afterReorg).not.toEqual(before)
    expect(
      (await apps.reorged.call("GET", "/api/point", { headers: { cookie: `predix_session=${cookies.reorged[0]}` } })).headers.get("x-cache")
    ).toBe("HIT")

    // And both equal the model over the reorged rows: U2's 1,200 USDC (U1's second referral gate), U1's profit and U3's second liquidity day are gone.
    const rows = await loadChainRows(reorged.sql)
    const points = modelPoints(rows, null, true)
    expect(points.get(U1)!.counts).toMatchObject({ connect: 1, firstTrade: 1, streak: 1, referralJoined: 1, referralActive: 0 })
    expect(points.get(U3)!.counts.liquidity).toBe(1)
    expect((afterReorg["/api/point 0"] as any).total).toBe(points.get(U1)!.points)
    expect((afterReorg["/api/point 0"] as any).total).toBeLessThan((before["/api/point 0"] as any).total)
    for (const [period, since] of [
      ["all", null],
      ["24h", rows.head - DAY],
      ["7d", rows.head - 7 * DAY]
    ] as const) {
      for (const sort of ["volume", "pnl", "accuracy", "points"] as const) {
        expect(asModelRows(afterReorg[`${period} ${sort}`] as Array<unknown>), `${period} ${sort}`).toEqual(
          modelBoard(rows, since, sort, 1)
        )
      }
    }
    expect((before["all pnl"] as Array<any>).find((r) => r.address === U1).pnl.raw).not.toBe("0")
    expect((afterReorg["all pnl"] as Array<any>).find((r) => r.address === U1).pnl.raw).toBe("0")
  }, 120_000)
})
