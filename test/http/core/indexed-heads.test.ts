/**
 * The process's one source of indexed heads (http/core/indexed-heads.ts) on real Postgres: the
 * pipeline's contract (checkpoint row and NOTIFY in one transaction) written by hand, the LISTEN
 * connection found by its application name and cut with pg_terminate_backend.
 *
 * The checkpoint poll is set to 10 minutes in every case, so what moves the head within a test is
 * a notification or the read that follows a (re)connection, never the timer.
 */
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Queue, Schedule, type Scope } from "effect"
import { describe, expect, it } from "vitest"
import { type HeadMove, IndexedHeads, IndexedHeadsLive, LISTEN_APPLICATION_NAME, reconnectPause } from "../../../http/core/indexed-heads.js"
import { announcedMarkets, encodeIndexedPayload, INDEXED_CHANNEL, MARKETS_MAX_CHARS } from "../../../schema/indexed-notify.js"
import { withScratchDb } from "../../support/postgres.js"

const CHAIN = 130
const hashOf = (n: number) => `0x${n.toString(16).padStart(64, "0")}`
const NO_POLL = { pollEveryMs: 600_000 }

/** The pipeline's commit, by hand: the checkpoint at `block` and, unless `silent`, its NOTIFY, in one transaction. */
const commit = (
  block: number,
  options: {
    readonly reverted?: boolean
    readonly silent?: boolean
    readonly chainId?: number
    readonly markets?: ReadonlyArray<string>
  } = {}
) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const chainId = options.chainId ?? CHAIN
    const payload = encodeIndexedPayload({
      chainId,
      block,
      hash: hashOf(block),
      reverted: options.reverted ?? false,
      ...(options.markets === undefined ? {} : { markets: options.markets })
    })
    return sql.withTransaction(
      Effect.gen(function* () {
        yield* sql`insert into indexer_checkpoint (chain_id, block_number, block_hash, digest)
          values (${chainId}, ${block}, ${hashOf(block)}, ${hashOf(0)})
          on conflict (chain_id) do update set block_number = excluded.block_number, block_hash = excluded.block_hash`
        if (options.silent !== true) yield* sql`select pg_notify(${INDEXED_CHANNEL}, ${payload})`
      })
    )
  })

/** Backend pids of this database's LISTEN connections of the source. */
const listenPids = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    sql<{ pid: number }>`select pid from pg_stat_activity
      where application_name = ${LISTEN_APPLICATION_NAME} and datname = current_database()`,
    (rows) => rows.map((row) => row.pid)
  )
)

/** The last statement of each LISTEN connection of the source. */
const listenQueries = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    sql<{ query: string }>`select query from pg_stat_activity
      where application_name = ${LISTEN_APPLICATION_NAME} and datname = current_database()`,
    (rows) => rows.map((row) => row.query)
  )
)

/** Polls `check` every 50 ms until it holds; dies naming `what` after 20 s. */
const eventually = <E, R>(what: string, check: Effect.Effect<boolean, E, R>) =>
  check.pipe(
    Effect.filterOrFail(
      (holds) => holds,
      () => "not yet"
    ),
    Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo("20 seconds"))),
    Effect.orDieWith(() => new Error(`never happened: ${what}`))
  )

const take = (queue: Queue.Dequeue<HeadMove>, what: string) =>
  Queue.take(queue).pipe(Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error(`no move: ${what}`) }))

const withHeads = <A, E>(body: (heads: IndexedHeads["Type"]) => Effect.Effect<A, E, SqlClient.SqlClient | Scope.Scope>) =>
  withScratchDb(
    Effect.gen(function* () {
      const context = yield* Layer.build(IndexedHeadsLive(CHAIN, NO_POLL))
      // The layer is built listening: the one connection is there, and has run its LISTEN.
      expect(yield* listenPids, "one LISTEN connection once the layer is built").toHaveLength(1)
      expect(yield* listenQueries, "its last statement is the LISTEN").toEqual([`LISTEN "${INDEXED_CHANNEL}"`])
      return yield* body(Context.get(context, IndexedHeads))
    })
  )

describe("indexed heads", () => {
  it("a commit names the markets it changed while the list fits the payload, else none (any market)", () => {
    expect(announcedMarkets([7n, 12n]), "a short list is named").toEqual(["7", "12"])
    expect(announcedMarkets([]), "no market changed: an empty list, not 'any'").toEqual([])
    const many = Array.from({ length: 2_000 }, (_, i) => 1_000_000n + BigInt(i))
    expect(announcedMarkets(many), "too many to name: none named, so a listener takes any to have changed").toBeUndefined()
    const fits = many.slice(0, 500)
    const payload = encodeIndexedPayload({ chainId: CHAIN, block: 1, hash: hashOf(1), reverted: false, markets: announcedMarkets(fits)! })
    expect(payload.length, "a named list keeps the payload under Postgres's 8,000 bytes").toBeLessThan(8_000)
    expect(JSON.stringify(announcedMarkets(fits)).length).toBeLessThanOrEqual(MARKETS_MAX_CHARS)
  })

  it("every subscriber sees every notification of its chain, reverted ones included, in order", async () => {
    await Effect.runPromise(
      withHeads((heads) =>
        Effect.gen(function* () {
          expect(yield* heads.current, "no checkpoint yet: no head").toBeNull()
          const first = yield* heads.subscribe
          const second = yield* heads.subscribe
          yield* commit(7)
          yield* commit(99, { chainId: 1 }) // another chain's: no move
          yield* commit(5, { reverted: true })
          yield* commit(6, { markets: ["3", "12"] })
          yield* commit(8, { markets: [] })
          for (const [name, queue] of [
            ["first", first],
            ["second", second]
          ] as const) {
            const moves = [yield* take(queue, name), yield* take(queue, name), yield* take(queue, name), yield* take(queue, name)]
            expect(moves, `${name} subscriber: each notification, as sent (the markets it names too)`).toStrictEqual([
              { head: { block: 7, hash: hashOf(7), generation: "public" }, reverted: false, markets: undefined },
              { head: { block: 5, hash: hashOf(5), generation: "public" }, reverted: true, markets: undefined },
              { head: { block: 6, hash: hashOf(6), generation: "public" }, reverted: false, markets: ["3", "12"] },
              { head: { block: 8, hash: hashOf(8), generation: "public" }, reverted: false, markets: [] }
            ])
            expect(yield* Queue.size(queue), `${name} subscriber: nothing else (the other chain's notification is no move)`).toBe(0)
          }
          expect(heads.latest(), "the head is the last notification's").toEqual({ block: 8, hash: hashOf(8), generation: "public" })
        })
      )
    )
  })

  it("a dropped LISTEN connection is replaced, and the head catches up with what was committed unheard", async () => {
    await Effect.runPromise(
      withHeads((heads) =>
        Effect.gen(function* () {
          const moves = yield* heads.subscribe
          yield* commit(10)
          expect(yield* take(moves, "block 10"), "heard over the first connection").toEqual({
            head: { block: 10, hash: hashOf(10), generation: "public" },
            reverted: false
          })
          // A commit whose notification this process never hears: only a checkpoint read can find it.
          yield* commit(12, { silent: true })
          yield* Effect.sleep("300 millis")
          expect(heads.latest()?.block, "a silent commit is not seen while the connection lives (no poll in this test)").toBe(10)

          const [old] = yield* listenPids
          yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql`select pg_terminate_backend(${old!})`)
          yield* eventually(
            "a new LISTEN connection",
            Effect.map(listenPids, (pids) => pids.length === 1 && pids[0] !== old)
          )
          expect(yield* take(moves, "catch-up"), "the read after reconnecting moves the head to the checkpoint").toEqual({
            head: { block: 12, hash: hashOf(12), generation: "public" },
            reverted: false
          })
          yield* commit(13)
          expect(yield* take(moves, "block 13"), "heard over the new connection").toEqual({
            head: { block: 13, hash: hashOf(13), generation: "public" },
            reverted: false
          })
          expect(yield* listenPids, "one LISTEN connection, the new one").toHaveLength(1)
        })
      )
    )
  }, 60_000)

  it("reconnects at once after a long-lived connection, then with a pause doubling to 5 s", () => {
    expect([0, 1, 2, 3, 6, 7, 20].map(reconnectPause)).toEqual([0, 100, 200, 400, 3_200, 5_000, 5_000])
  })
})
