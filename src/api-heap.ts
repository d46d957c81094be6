/**
 * V8 flags of the process that serves the APIs (`npm start`'s main process: indexer API, backend,
 * WebSocket), given on its command line (package.json's `start`; V8 sizes its heap when the
 * process starts, so `v8.setFlagsFromString` later changes nothing).
 *
 * A 32 MiB semi-space (a 64 MiB young generation; V8 grows it to 32 MiB by default): at the
 * default size an answer in flight (a heavy trader's portfolio is about 100 kB of JSON, the rows it
 * was written from and its socket write) outlived a young-generation collection and was promoted,
 * so the old space filled with dead answers and a full mark-compact ran every 3.7 s at 200 req/s,
 * each stalling the event loop 100-140 ms: the portfolio's p99 was those stalls (75-89 ms at
 * 200 req/s uncached; with the flag 13.4 ms, 7 mark-compacts in the run instead of 17; `npm run
 * bench:backend -- --only uncached`, docs/backend.md).
 *
 * The indexer child keeps V8's default young generation (started with `indexerChildOptions`): its
 * backfill was measured with it, and a larger one (64 MiB semi-space) measured worse there.
 */
export const API_V8_FLAGS: ReadonlyArray<string> = ["--max-semi-space-size=32"]

const flagName = (flag: string) => flag.split("=")[0]!

/** Command-line options without the API process's own V8 flags (for the indexer child). */
export const withoutApiV8Flags = (execArgv: ReadonlyArray<string>): Array<string> =>
  execArgv.filter((arg) => !API_V8_FLAGS.some((flag) => flagName(arg) === flagName(flag)))

/**
 * V8 flags of the indexer child, after the options it inherits: garbage collection on the
 * collecting thread alone (no parallel scavenge, concurrent marking or parallel compaction on
 * helper threads). The indexer is a throughput job on a machine whose cores it already keeps busy
 * with its two threads (indexing, backfill) beside Postgres: helper threads only added their
 * coordination to the same cores. On the 1M chain (`npm start`, 2 cores, load 2-3), five
 * alternated pairs with and without it: wall 19.4-20.5 s against 19.8-21.9 s, every pair in its
 * favour (by 0.4-2.3 s); the indexer process's helper threads 1.8-2.1 s of CPU against 5.7-6.1 s,
 * its own two threads (indexing, backfill) 3.3-4.2 s more, its whole CPU within noise of the same
 * (`bench/start-vs.sh`). The API process keeps parallel collection: its pauses are request latency.
 */
export const INDEXER_V8_FLAGS: ReadonlyArray<string> = ["--single-threaded-gc"]

/** The Node options of the indexer child: ours without the API's V8 flags, then the indexer's. */
export const indexerChildOptions = (execArgv: ReadonlyArray<string>): Array<string> => [
  ...withoutApiV8Flags(execArgv).filter((arg) => !INDEXER_V8_FLAGS.includes(arg)),
  ...INDEXER_V8_FLAGS
]
