/**
 * The rewards reads on a large database, uncached: each query the endpoints run (points of one
 * user, leaderboard for every period and sort, traders), timed sequentially.
 *
 *   REWARDS_DATABASE_URL=postgres://... npm run bench:rewards
 *
 * Build the database with bench/rewards/large-db.sql on a freshly migrated database (10,000
 * traders, 500,000 trades over 120 days).
 */
import { Effect, Redacted } from "effect"
import { pgClientLayer } from "../src/db/database.js"
import { BOARD_SORTS, LEADERBOARD_PERIODS, PERIOD_SECONDS, readBoard, readPoints } from "../http/backend/rewards/repository.js"
import { headTime } from "../http/read/market-prices.js"

const url = process.env["REWARDS_DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/predix_rewards_scale_big"
const runs = Number(process.env["RUNS"] ?? 3)

const timed = <A, E, R>(label: string, effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const ms: Array<number> = []
    for (let i = 0; i < runs; i++) {
      const t = performance.now()
      yield* effect
      ms.push(performance.now() - t)
    }
    ms.sort((a, b) => a - b)
    console.log(
      `${label.padEnd(28)} median ${ms[Math.floor(ms.length / 2)]!.toFixed(1)} ms  (min ${ms[0]!.toFixed(1)}, max ${ms[ms.length - 1]!.toFixed(1)})`
    )
  })

const main = Effect.gen(function* () {
  const now = yield* headTime
  yield* timed("point/rewards (one user)", readPoints("0x" + (1000 + 17).toString(16).padStart(40, "0")))
  for (const period of LEADERBOARD_PERIODS) {
    const since = period === "all" ? null : now - PERIOD_SECONDS[period]
    for (const sort of BOARD_SORTS)
      yield* timed(`leaderboard ${period} ${sort}`, readBoard({ since, sort, minResolved: 5, limit: 50, offset: 0 }))
  }
})

Effect.runPromise(main.pipe(Effect.provide(pgClientLayer(Redacted.make(url))))).catch((e) => {
  console.error(e)
  process.exit(1)
})
